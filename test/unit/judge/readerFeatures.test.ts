// The learned reader's candidates and features (src/core/judge/readerFeatures.ts): general
// features for every leaf, English-only ones only for English questions, the filings profile's
// only for leaves of documents that fit it, retrieval ones only where the rounds retrieved.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeptRegion } from '../../../src/core/critic/critic';
import { readQuestion } from '../../../src/core/judge/questionReading';
import { readerCandidates } from '../../../src/core/judge/readerFeatures';
import type { RegionKind, RegionNode } from '../../../src/contracts/region';

let n = 0;
const leaf = (text: string, kind: RegionKind = 'sentence', header?: string): RegionNode => ({ id: `it/0.${n++}`, kind, modality: 'text', text, anchor: { file: 'doc.md' }, children: [], ...(header ? { header } : {}) });

function region(title: string, leaves: RegionNode[], over: Partial<KeptRegion> = {}): KeptRegion {
  const id = `item${n++}`;
  const kids = leaves.map((l, i) => ({ ...l, id: `${id}/0.${i}` }));
  const node: RegionNode = { id: `${id}/0`, kind: 'paragraph', modality: 'text', text: kids.map((l) => l.text).join(' '), anchor: { file: `${id}.md` }, children: kids };
  return { itemId: id, itemTitle: title, file: `${id}.md`, node, score: 0.4, leafScores: new Map(kids.map((l, i) => [l.id, 0.3 + i * 0.1])), ...over };
}

describe('reader features', () => {
  it('measures every leaf: cosine and its gap to the best, question-term coverage, what it adds, its place', () => {
    const r = region('Quebec Winter Carnival', [leaf('The Quebec Winter Carnival is a festival held in Quebec City.'), leaf('Its official symbol is Bonhomme Carnaval, a snowman.')], { rank: 0, round: 1, retrieval: 2 });
    const reading = readerCandidates(readQuestion('what is the official symbol of the carnival of quebec'), [r]);
    const [first, second] = reading.candidates;
    assert.equal(reading.candidates.length, 2);
    assert.ok(first!.features.lex_own! > 0 && second!.features.lex_own! > 0 && second!.features.lex_own! <= 1);
    assert.ok(first!.features.lex_passage! >= Math.max(first!.features.lex_own!, second!.features.lex_own!), 'the passage covers what both sentences cover');
    assert.equal(second!.features.dense_gap, 0);
    assert.ok(first!.features.dense_gap! < 0);
    assert.equal(first!.features.first_in_passage, 1);
    assert.equal(second!.features.first_in_passage, 0);
    assert.ok(second!.features.lex_context! > 0, 'the title names the carnival');
    assert.equal(first!.features.item_rank, 1);
    assert.equal(first!.features.retrieval_rel, 1);
    assert.ok(second!.features.bigram! > first!.features.bigram!, '"official symbol" together');
  });

  it('gives no retrieval features to items the rounds did not retrieve (a given context)', () => {
    const reading = readerCandidates(readQuestion('When did the war begin?'), [region('War', [leaf('The war began in 1618 in Bohemia.')])]);
    const f = reading.candidates[0]!.features;
    for (const k of ['item_rank', 'retrieval_rel', 'later_round']) assert.equal(f[k], undefined, k);
  });

  it('reads an English question with its answer-type cue; a German one without any English-only feature', () => {
    const r = region('Krieg', [leaf('Der Krieg begann im Jahr 1618 in Böhmen.'), leaf('Die Armee zog nach Norden und belagerte die Stadt.')]);
    const english = readerCandidates(readQuestion('When did the war begin?'), [region('War', [leaf('The war began in 1618 in Bohemia.')])]);
    assert.equal(english.candidates[0]!.features.cue, 1);
    const german = readerCandidates(readQuestion('Wann begann der Krieg in Böhmen?'), [r]);
    assert.equal(german.question.english, false);
    for (const c of german.candidates) for (const k of ['cue', 'cue_cover', 'list_enough', 'anaphoric']) assert.equal(c.features[k], undefined, k);
    assert.ok(german.candidates[0]!.features.lex_own! > german.candidates[1]!.features.lex_own!, 'German terms without German stop words: "die" and "und" do not cover');
  });

  it("computes the filings profile's features only for leaves of documents that fit it", () => {
    const rows = [leaf('Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)', 'row', 'Cash Flows 2018 2017 2016'), leaf('Net income 5,363 4,869 5,058', 'row', 'Cash Flows 2018 2017 2016')];
    const table = (profiles: string[]) => {
      const r = region('Consolidated Statement of Cash Flows', rows, { document: { language: 'eng', profiles } });
      r.node = { ...r.node, kind: 'table' };
      return r;
    };
    const q = readQuestion('What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response based on the cash flow statement.');
    const filing = readerCandidates(q, [table(['filing'])]);
    assert.ok(filing.candidates[0]!.features.filing_row! > 0, 'the capex row under its other name');
    assert.ok(filing.candidates[0]!.features.filing_row! > filing.candidates[1]!.features.filing_row!);
    // The profile's own copy of the heading path's cover: the filing's weight for it is learned apart from the general one's.
    for (const c of filing.candidates) assert.equal(c.features.filing_lex_context, c.features.lex_context);
    const named = readerCandidates(readQuestion('What were the cash flows of 3M in FY2018?'), [table(['filing'])]).candidates[0]!.features;
    assert.ok(named.lex_context! > 0 && named.filing_lex_context === named.lex_context, 'the statement\'s title names the cash flows');
    const other = readerCandidates(q, [table([])]);
    for (const c of other.candidates) for (const k of Object.keys(c.features)) assert.ok(!k.startsWith('filing_'), k);
  });

  it('marks a leaf that only restates the question as not quotable, unless the question asks yes or no', () => {
    const r = region('Paris', [leaf('Paris is the capital of France and its largest city.'), leaf('The capital of France is Paris.')]);
    const what = readerCandidates(readQuestion('Is Paris the capital of France?'), [r]);
    assert.ok(what.candidates.every((c) => c.quotable));
    const restating = readerCandidates(readQuestion('What is the largest city, capital of France Paris?'), [r]);
    assert.equal(restating.candidates[1]!.quotable, false);
  });

  it('reads a sentence that opens by referring back with the sentence before it as context, and a date cue apart', () => {
    const r = region('Sensors', [leaf('The north mast carries a cup anemometer and a wind vane.'), leaf('Both were recalibrated on 2024-03-12 after the storms.')]);
    const reading = readerCandidates(readQuestion('When were the anemometer and the wind vane recalibrated?'), [r]);
    const [antecedent, answer] = reading.candidates;
    assert.ok(answer!.context.has('anemomet') && !answer!.heading.has('anemomet'), 'the antecedent is context, not heading');
    assert.ok(answer!.features.support_own! > answer!.features.lex_own!, 'its subject counts, at half');
    assert.equal(answer!.features.lex_context, 0, 'the title alone is its heading context');
    assert.equal(antecedent!.context.has('recalibr'), false, 'a sentence that names its subject reads no neighbour');
    assert.equal(answer!.features.cue_date, 1);
    assert.equal(antecedent!.features.cue_date, 0);
    assert.equal(answer!.features.cue_number, undefined, 'a date question has no number cue');
  });

  it('marks a row as answering a question that asks for or names a figure, and not one that asks for a name', () => {
    const rows = [leaf('| `limit` | number | Max results (default 10) |', 'row', 'Parameter | Type | Notes')];
    const figure = readerCandidates(readQuestion('How many results does a query return by default?'), [region('Options', rows)]);
    assert.equal(figure.candidates[0]!.features.row_figure, 1);
    const name = readerCandidates(readQuestion('Which parameter caps how many results come back?'), [region('Options', rows)]);
    assert.equal(name.question.answerType, 'identifier');
    assert.equal(name.candidates[0]!.features.row_figure, 0);
    assert.equal(name.candidates[0]!.features.cue, 1, 'the row names a code name the question does not');
  });

  it("reads no terms from a link's target", () => {
    const r = region('Docs', [leaf('[Report issues](https://github.com/example/widget-sdk/issues) on the tracker.'), leaf('The widget SDK needs Node.js 20 or later.')]);
    const reading = readerCandidates(readQuestion('Which Node.js version does the widget SDK need?'), [r]);
    assert.equal(reading.candidates[0]!.own.has('sdk'), false);
    assert.equal(reading.candidates[0]!.features.lex_own, 0);
    assert.ok(reading.candidates[1]!.features.lex_own! > 0);
  });

  it('cues code for a question that asks how to do something, and a code block reads the text that introduces it', () => {
    const intro = leaf('To stop the background daemon, run:');
    const code = leaf('qmd mcp stop', 'code');
    const prose = leaf('The daemon writes its PID to a file under `~/.cache` and keeps running until told otherwise.');
    const r = region('Service', [intro, code, prose]);
    const how = readerCandidates(readQuestion('How do I stop the daemon?'), [r]);
    const [introC, codeC, proseC] = how.candidates;
    assert.equal(how.question.procedure, true);
    assert.equal(codeC!.features.cue, 1, 'a code block answers "how do I"');
    assert.equal(proseC!.features.cue, 0, 'prose with a code span in it is no code answer');
    assert.equal(introC!.features.cue, 0);
    assert.ok(codeC!.context.has('daemon') && !codeC!.heading.has('daemon'), 'the lead-in sentence is its context');
    assert.ok(codeC!.features.support_own! > codeC!.features.lex_own!, 'the daemon it stops counts through the lead-in, at half');
    // Not a procedure: "Where …" asks for a place, and the code block has no cue of that kind.
    const where = readerCandidates(readQuestion('Where does the daemon write its PID?'), [r]);
    assert.equal(where.question.procedure, false);
    assert.equal(where.candidates[1]!.features.cue, 0);
    // A sentence that is mostly a command counts as code; a lead-in under another heading does not introduce the block.
    const inline = readerCandidates(readQuestion('How do I install the types?'), [region('Install', [leaf('`npm i @types/widget --save-dev`')])]);
    assert.equal(inline.candidates[0]!.features.cue, 1);
    const apart = region('Service', [leaf('To stop the background daemon, run:', 'sentence'), { ...leaf('qmd mcp stop', 'code'), context: 'Other section' }]);
    assert.equal(readerCandidates(readQuestion('How do I stop the daemon?'), [apart]).candidates[1]!.context.has('daemon'), false);
  });

  it("takes no answer cue from a link's target", () => {
    const r = region('Docs', [leaf('[Build a server](./get-started/first-server.md) installs the packages.')]);
    const reading = readerCandidates(readQuestion('What packages do I install?'), [r]);
    assert.equal(reading.question.answerType, 'identifier');
    assert.equal(reading.candidates[0]!.features.cue, 0, 'the link target is a path, not a package the text names');
  });
});
