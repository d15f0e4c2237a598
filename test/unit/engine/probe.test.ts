// The critic's look-ahead in the round engine: the follow-up query's retrieval runs once, before
// the critic decides, and the next round reuses it; a look-ahead that finds nothing better ends
// the rounds with the gap named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { RuleCritic } from '../../../src/core/critic/ruleCritic';
import { fixedScores } from '../../../src/core/engine/fixed';
import { roundCritic, runRounds, type CandidateSource } from '../../../src/core/engine/rounds';
import type { Item } from '../../../src/contracts/region';
import { textItem } from '../../helpers/items';

const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';
const survey = textItem('survey.md', 'Survey', [['Plot P5 lost three mature ash trees to ash dieback in 2025.']]);
const advice = textItem('advice.md', 'Recommendations', [['The P5 gap should be replanted with oak and small-leaved lime.']]);
const weather = textItem('weather.md', 'Weather', [['It rained for most of the week of the survey.']]);

/** Returns `first` for the question and `then` for any other query; counts the calls per query. */
function source(first: Item[], then: Item[]): CandidateSource & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  return {
    calls,
    async candidates({ query }) {
      calls.set(query, (calls.get(query) ?? 0) + 1);
      const items = query === question ? first : then;
      return { kind: 'ranked', ranked: items.map((item, rank) => ({ itemId: item.id, rank, scores: { fused: 1 - rank / 10 }, item })), candidates: [] };
    },
  };
}

/** Every node scores 1, so CANOPY keeps each item whole. */
const scorer = () => {
  const scores = new Map<string, number>();
  const walk = (n: Item['root']) => {
    scores.set(n.id, 1);
    n.children.forEach(walk);
  };
  for (const i of [survey, advice, weather]) walk(i.root);
  return fixedScores(scores);
};

const config = { question, topK: 3, maxRounds: 3, compressor: { name: 'canopy' as const }, readerTokenCap: 16_000, routing: { modalities: ['text' as const], aggregate: false, source: 'rule' as const, reason: 'test' } };

describe('round engine: the critic looks ahead', () => {
  it('runs the follow-up retrieval once: the critic’s probe, reused by the next round', async () => {
    const src = source([survey], [survey, advice]);
    const result = await runRounds(config, { source: src, scorer: scorer(), critic: roundCritic(new RuleCritic({ lookAhead: true })), tokens: bpeTokenCounter() });
    assert.equal(result.rounds.length, 2, JSON.stringify(result.stop));
    const followUp = result.rounds[1]!.query;
    assert.notEqual(followUp, question);
    assert.equal(src.calls.get(followUp), 1, 'the probe and round 2 share one retrieval');
    assert.deepEqual(result.rounds[1]!.addedItemIds, [advice.id]);
    assert.equal((result.rounds[0]!.critic!.details as { probe: { worth: boolean } }).probe.worth, true);
    assert.equal(result.stop.reason, 'critic-sufficient');
  });

  it('ends after round 1 when the follow-up would bring nothing better, and says why', async () => {
    const src = source([survey], [survey, weather]);
    const result = await runRounds(config, { source: src, scorer: scorer(), critic: roundCritic(new RuleCritic({ lookAhead: true })), tokens: bpeTokenCounter() });
    assert.equal(result.rounds.length, 1);
    assert.equal(result.stop.reason, 'no-follow-up');
    assert.match(result.stop.note, /finds nothing that answers better/);
    assert.match(result.stop.note, /replanted/, 'the gap is named');
    assert.equal(result.items, 1, 'the probed item did not enter the evidence');
  });

  it('does not probe in the last round', async () => {
    const src = source([survey], [survey, advice]);
    const result = await runRounds({ ...config, maxRounds: 1 }, { source: src, scorer: scorer(), critic: roundCritic(new RuleCritic({ lookAhead: true })), tokens: bpeTokenCounter() });
    assert.equal(result.stop.reason, 'round-limit');
    assert.deepEqual([...src.calls.keys()], [question]);
  });
});

describe('round engine: the things a follow-up names', () => {
  it('hands the critic’s follow-up names to the next round’s retrieval and reuses a probe only for the same names', async () => {
    const requests: Array<{ round: number; query: string; names?: readonly string[] }> = [];
    const src: CandidateSource = {
      async candidates({ round, query, names }) {
        requests.push({ round, query, ...(names ? { names } : {}) });
        const items = query === question ? [survey] : [survey, advice];
        return { kind: 'ranked', ranked: items.map((item, rank) => ({ itemId: item.id, rank, scores: { fused: 1 - rank / 10 }, item })), candidates: [] };
      },
    };
    // A critic that asks once for "Oak Hall" by name, looking ahead without names first.
    const critic = roundCritic({
      kind: 'rule',
      async judge({ round, probe }) {
        if (round > 1) return { sufficient: true, missing: [], source: 'rule' };
        await probe?.('oak hall', undefined, []);
        return { sufficient: false, missing: ['Oak Hall'], followUpQuery: 'oak hall', followUpNames: ['Oak Hall'], source: 'rule' };
      },
    });
    const result = await runRounds(config, { source: src, scorer: scorer(), critic, tokens: bpeTokenCounter() });
    assert.equal(result.rounds.length, 2);
    assert.deepEqual(result.rounds[0]!.critic!.followUpNames, ['Oak Hall']);
    // The probe (no names) is not round 2's search (one name): round 2 retrieves again, with the name.
    assert.deepEqual(requests.map((r) => [r.round, r.query, r.names ?? []]), [[1, question, []], [2, 'oak hall', []], [2, 'oak hall', ['Oak Hall']]]);
  });

  it('tells the critic which named things have an item of their own that no round retrieved, before the last round only', async () => {
    const titledCalls: string[][] = [];
    const src: CandidateSource = {
      async candidates({ query }) {
        const items = query === question ? [survey] : [survey, advice];
        return { kind: 'ranked', ranked: items.map((item, rank) => ({ itemId: item.id, rank, scores: { fused: 1 - rank / 10 }, item })), candidates: [] };
      },
      async titled(names) {
        titledCalls.push([...names]);
        // "Survey" titles an item already in the evidence; "Recommendations" one it lacks; "Plots"
        // two, one of them retrieved.
        return new Map([
          ['Survey', [survey.id]],
          ['Recommendations', [advice.id]],
          ['Plots', ['plots-2024', survey.id]],
        ]);
      },
    };
    const seen: Array<{ round: number; own: string[] | undefined }> = [];
    const critic = roundCritic({
      kind: 'rule',
      async judge({ round, ownItems }) {
        seen.push({ round, own: ownItems ? [...(await ownItems(['Survey', 'Recommendations', 'Plots', 'Nowhere']))] : undefined });
        return round < 2 ? { sufficient: false, missing: ['x'], followUpQuery: `follow-up ${round}`, source: 'rule' } : { sufficient: true, missing: [], source: 'rule' };
      },
    });
    await runRounds({ ...config, maxRounds: 2 }, { source: src, scorer: scorer(), critic, tokens: bpeTokenCounter() });
    assert.deepEqual(seen, [
      { round: 1, own: ['Recommendations'] },
      { round: 2, own: undefined },
    ]);
    assert.deepEqual(titledCalls, [['Survey', 'Recommendations', 'Plots', 'Nowhere']]);
  });
});
