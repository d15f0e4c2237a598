// When the topic compass is on (src/core/topics/decision.ts): the setting turns it on by hand;
// otherwise only an index of coarse items (from its own statistics) whose scorer, trained on the
// default retrieval's candidates with real questions, beats the default on held-back IE@3 without
// losing nDCG@10. Each outcome says why.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUILTIN_PROFILE, RRF_EQUAL } from '../../../src/core/retrieve/profile';
import { candidatesOf, COARSE_NODES_PER_ITEM, decideCompass, indexGrain, type DecisionInput } from '../../../src/core/topics/decision';
import type { TopicScorerCheckpoint } from '../../../src/core/topics/indexTopics';

const today = candidatesOf(BUILTIN_PROFILE.fusion);

function checkpoint(training: Partial<TopicScorerCheckpoint['training']>): { checkpoint: TopicScorerCheckpoint } {
  return {
    checkpoint: {
      format: 'canopy.topic-scorer',
      version: 1,
      createdAt: '2026-01-01T00:00:00.000Z',
      encoderId: 'use-lite/x',
      compass: { selectEntries: 50, topics: 10, selection: 'top-l', abstraction: 'pooled', candidates: 50 },
      weights: { mean: [], std: [], hidden: 0, w1: [], b1: [], w2: [], b2: 0, topics: true } as unknown as TopicScorerCheckpoint['weights'],
      training: { source: 'qrels', seed: 1, trainQueries: 160, heldOutQueries: 40, losses: [1, 0.5], candidates: today, ...training },
    },
  };
}

const files = (perItem: number, items = 10) => Object.fromEntries(Array.from({ length: items }, (_, i) => [`f${i}.md`, { items: [`i${i}`], nodes: perItem }]));
const coarse = indexGrain(files(120));
const fine = indexGrain(files(9));
const beats = { 'IE@3': { hybrid: 0.3, compass: 0.32 }, 'nDCG@10': { hybrid: 0.8, compass: 0.81 } };
const input = (over: Partial<DecisionInput>): DecisionInput => ({ enabled: false, grain: coarse, compass: checkpoint({ heldOut: beats }), defaultCandidates: today, ...over });

describe('topic compass: on by itself only where it helps', () => {
  it('measures the grain from the manifest: tree nodes per item, coarse from the threshold', () => {
    const g = indexGrain({ 'a.md': { items: ['a1', 'a2'], nodes: 100 }, 'b.md': { items: ['b1'], nodes: 20 } });
    assert.deepEqual(g, { items: 3, nodes: 120, nodesPerItem: 40, coarse: true });
    assert.equal(indexGrain(files(COARSE_NODES_PER_ITEM - 1)).coarse, false);
    assert.equal(indexGrain({}).coarse, false);
  });

  it('turns on for a coarse index whose held-back figure beats the default on IE@3 and keeps nDCG@10', () => {
    const d = decideCompass(input({}));
    assert.equal(d.on, true);
    assert.equal(d.by, 'auto');
    assert.match(d.reason, /^on: the items are coarse \(120\.0 tree nodes per item\).*IE@3 0\.320 vs default 0\.300, nDCG@10 0\.810 vs 0\.800 on 40 qrels queries/);
  });

  it('stays off where it does not beat the default, or loses nDCG@10, giving the figures', () => {
    const level = decideCompass(input({ compass: checkpoint({ heldOut: { ...beats, 'IE@3': { hybrid: 0.3, compass: 0.3 } } }) }));
    assert.equal(level.on, false);
    assert.match(level.reason, /does not beat the default retrieval here \(held-back IE@3 0\.300 vs default 0\.300/);
    const worseNdcg = decideCompass(input({ compass: checkpoint({ heldOut: { ...beats, 'nDCG@10': { hybrid: 0.8, compass: 0.79 } } }) }));
    assert.equal(worseNdcg.on, false);
  });

  it('stays off for paragraph-sized items whatever the scorer measured', () => {
    const d = decideCompass(input({ grain: fine }));
    assert.equal(d.on, false);
    assert.match(d.reason, /^off by default: this index's items are paragraph-sized \(9\.0 tree nodes per item, coarse from 40\)/);
  });

  it('does not count a scorer of other candidates, of synthetic queries, of too few held-back queries, or without a held-back figure', () => {
    const rrf = decideCompass(input({ compass: checkpoint({ heldOut: beats, candidates: candidatesOf(RRF_EQUAL) }) }));
    assert.equal(rrf.on, false);
    assert.match(rrf.reason, /trained on other candidates \(hybrid, RRF k=60, top 50\)/);
    const old = decideCompass(input({ compass: checkpoint({ heldOut: beats, candidates: undefined }) }));
    assert.match(old.reason, /the equal-weight RRF hybrid/);
    const synthetic = decideCompass(input({ compass: checkpoint({ heldOut: beats, source: 'synthetic' }) }));
    assert.equal(synthetic.on, false);
    assert.match(synthetic.reason, /synthetic queries only/);
    const few = decideCompass(input({ compass: checkpoint({ heldOut: beats, heldOutQueries: 12 }) }));
    assert.equal(few.on, false);
    assert.match(few.reason, /rests on 12 queries \(at least 30 needed\)/);
    const none = decideCompass(input({ compass: checkpoint({}) }));
    assert.equal(none.on, false);
    assert.match(none.reason, /no held-back figure/);
    const missing = decideCompass(input({ compass: { reason: 'no topic bank for generation 3' } }));
    assert.equal(missing.on, false);
    assert.match(missing.reason, /but no topic bank for generation 3/);
  });

  it('the setting turns it on by hand, on any grain, unless the compass cannot open', () => {
    const d = decideCompass(input({ enabled: true, grain: fine, compass: checkpoint({}) }));
    assert.deepEqual(d, { on: true, by: 'setting', reason: 'canopy.topics.enabled is on' });
    const cannot = decideCompass(input({ enabled: true, compass: { reason: 'no trained topic scorer' } }));
    assert.equal(cannot.on, false);
    assert.match(cannot.reason, /retrieval stays the default: no trained topic scorer/);
  });
});
