// The learned critic (src/core/judge/learnedCritic.ts) with fixture models: it keeps the rule
// critic's stop and its follow-up, stops early when the critic model finds the evidence likely to
// hold the answer, carries the probability and contributions in every verdict, and judges a
// question in another language without the English rule critic.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Critic, CriticInput, CriticVerdict, EvidenceView, KeptRegion } from '../../../src/core/critic/critic';
import { RuleCritic } from '../../../src/core/critic/ruleCritic';
import { LearnedCritic } from '../../../src/core/judge/learnedCritic';
import { LinearModel } from '../../../src/core/judge/linearModel';
import type { RegionNode } from '../../../src/contracts/region';

const load = (name: string) => LinearModel.from(JSON.parse(readFileSync(join(__dirname, `../../fixtures/judge/${name}.json`), 'utf8')), name);
const reader = load('reader');
const model = load('critic');

let n = 0;
function view(title: string, sentences: string[]): EvidenceView {
  const id = `item${n++}`;
  const leaves: RegionNode[] = sentences.map((text, i) => ({ id: `${id}/0.${i}`, kind: 'sentence', modality: 'text', text, anchor: { file: `${id}.md` }, children: [] }));
  const node: RegionNode = { id: `${id}/0`, kind: 'paragraph', modality: 'text', text: sentences.join(' '), anchor: { file: `${id}.md` }, children: leaves };
  const region: KeptRegion = { itemId: id, itemTitle: title, file: `${id}.md`, node, score: 0.5, leafScores: new Map(leaves.map((l) => [l.id, 0.5])), rank: 0, round: 1 };
  return { itemId: id, title, rank: 0, round: 1, keptTexts: [node.text], keptLeaves: sentences, regions: [region] };
}
const input = (question: string, evidence: EvidenceView[]): CriticInput => ({ question, round: 1, evidence, seenTitles: evidence.map((e) => e.title), previousQueries: [] });
/** A rule critic that always asks again, and one that must not be asked. */
const asksAgain: Critic = { kind: 'rule', judge: async (): Promise<CriticVerdict> => ({ sufficient: false, missing: ['x'], followUpQuery: 'x y', source: 'rule', details: { parts: [{ answered: true, coverage: 1 }] } }) };
const never: Critic = {
  kind: 'rule',
  judge: async () => {
    throw new Error('the English rule critic must not judge another language');
  },
};

describe('LearnedCritic', () => {
  it('stops where the rule would ask again when the evidence very likely holds the answer, and says it overruled', async () => {
    const critic = new LearnedCritic(asksAgain, { model, reader });
    const v = await critic.judge(input('When did the 1973 oil crisis begin?', [view('1973 oil crisis', ['The 1973 oil crisis began in October 1973, when OAPEC proclaimed an oil embargo.'])]));
    assert.equal(v.sufficient, true);
    assert.equal(v.source, 'learned');
    assert.ok(v.judgment!.probability >= 0.6);
    assert.equal(v.judgment!.threshold, 0.6);
    assert.deepEqual((v.details!.overruled as { followUpQuery: string }).followUpQuery, 'x y');
  });

  it("keeps the rule's follow-up when the evidence is unlikely to hold the answer, with the probability beside it", async () => {
    const critic = new LearnedCritic(asksAgain, { model, reader });
    const v = await critic.judge(input('When did the 1973 oil crisis begin?', [view('Gardening', ['The roses bloom in June and the lilies follow in July.'])]));
    assert.equal(v.sufficient, false);
    assert.equal(v.followUpQuery, 'x y');
    assert.ok(v.judgment!.probability < 0.6);
    assert.ok(v.judgment!.contributions.some((c) => c.feature === 'reader_p1'));
  });

  it("leaves the rule's search for a next hop or a missing named thing to the rule, however likely the evidence looks", async () => {
    for (const details of [{ hopGap: { firstHop: 'A', bridges: ['B'] } }, { nestedReference: "Anna Benson's husband" }, { answerBridge: { entity: 'B' } }, { missingEntities: ['Kris Benson'] }]) {
      const hop: Critic = { kind: 'rule', judge: async () => ({ sufficient: false, missing: ['b'], followUpQuery: 'B', source: 'rule', details: { parts: [{ answered: true, coverage: 1 }], ...details } }) };
      const v = await new LearnedCritic(hop, { model, reader }).judge(input('When did the 1973 oil crisis begin?', [view('1973 oil crisis', ['The 1973 oil crisis began in October 1973, when OAPEC proclaimed an oil embargo.'])]));
      assert.equal(v.sufficient, false, JSON.stringify(details));
      assert.equal(v.followUpQuery, 'B');
      assert.ok(v.judgment, 'the probability is still recorded');
    }
  });

  it('keeps a rule stop as it is', async () => {
    const critic = new LearnedCritic(new RuleCritic({ lookAhead: false }), { model, reader });
    const v = await critic.judge(input('When did the 1973 oil crisis begin?', [view('1973 oil crisis', ['The 1973 oil crisis began in October 1973, when OAPEC proclaimed an oil embargo.'])]));
    assert.equal(v.sufficient, true);
    assert.equal(v.source, 'rule');
    assert.ok(v.judgment);
  });

  it('judges a German question without the English rule: the model alone, the note, a follow-up in its own words', async () => {
    const critic = new LearnedCritic(never, { model, reader });
    const v = await critic.judge(input('Wann wurde die Firma gegründet und wer war der erste Vorstand?', [view('Firma', ['Die Firma hat ihren Sitz in Hamburg und beschäftigt 200 Mitarbeiter.'])]));
    assert.equal(v.source, 'learned');
    assert.equal(v.sufficient, false, '"die" and "und" are no content words that the evidence covers');
    assert.equal(v.details!.language, 'deu');
    assert.match(String(v.details!.note), /German/);
    assert.ok(v.missing.includes('gegründet') && v.missing.includes('vorstand'), v.missing.join(', '));
    assert.ok(!v.missing.includes('die') && !v.missing.includes('und'));
    assert.match(v.followUpQuery!, /Vorstand/);
  });
});

describe('RuleCritic probes outside filings', () => {
  it('does not read "h1" as a period: a question about h1 headings is not answered by evidence about h2', async () => {
    const v = await new RuleCritic({ lookAhead: false }).judge(input('How do I style h1 headings?', [view('Typography', ['Style h2 headings with the heading-2 class and a 24px font size.'])]));
    assert.equal(v.sufficient, false, JSON.stringify(v.details));
    assert.ok(v.missing.some((m) => /h1/i.test(m)), v.missing.join(', '));
  });
});
