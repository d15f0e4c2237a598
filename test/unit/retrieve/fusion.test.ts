// Reciprocal-rank fusion and the query router.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reciprocalRankFusion } from '../../../src/core/retrieve/fusion';
import { linearFusion } from '../../../src/core/retrieve/hybrid';
import { routeQuestion } from '../../../src/core/compress/router';
import { Bm25Index } from '../../../src/core/index/bm25';

describe('reciprocalRankFusion', () => {
  it('rewards items both rankers like and records each ranker\'s rank and score', () => {
    const fused = reciprocalRankFusion([
      [{ id: 'a', score: 0.9 }, { id: 'b', score: 0.8 }, { id: 'c', score: 0.1 }],
      [{ id: 'c', score: 12 }, { id: 'b', score: 7 }],
    ]);
    // c: 1/63 + 1/61 beats b: 1/62 + 1/62; a appears once.
    assert.deepEqual(fused.map((f) => f.id), ['c', 'b', 'a']);
    assert.deepEqual(fused[0]!.parts, [{ rank: 2, score: 0.1 }, { rank: 0, score: 12 }]);
    assert.equal(fused[2]!.parts[1], undefined);
    assert.ok(Math.abs(fused[1]!.fused - 2 / 62) < 1e-12);
  });
});

describe('routeQuestion', () => {
  it('treats totals, counts, extremes and lists as aggregate and plain lookups as lookup', () => {
    for (const q of ['What is the total revenue?', 'How many plots are there?', 'Which plot has the highest cover?', 'List all sensors.']) {
      assert.equal(routeQuestion(q).aggregate, true, q);
    }
    assert.equal(routeQuestion('What species is the tallest tree in plot P2?').aggregate, false);
    assert.equal(routeQuestion('When was the battery replaced?').aggregate, false);
  });

  it('keeps text when a modality is named and allows all otherwise', () => {
    assert.deepEqual(routeQuestion('What did the ranger say in the interview?').modalities, ['text', 'transcript']);
    assert.equal(routeQuestion('When was it built?').modalities.length, 5);
  });
});

describe('Bm25Index', () => {
  it('ranks by BM25 with stemming, filters by modality, and survives a binary round trip with removals', () => {
    const ix = Bm25Index.build([
      { id: '1', title: 'Oaks', text: 'Oak trees grow slowly in dry soil.', modality: 'text' },
      { id: '2', title: 'Sensors', text: 'The soil sensor logged moisture hourly.', modality: 'table' },
      { id: '3', title: 'Beech', text: 'Beech leaves dropped early.', modality: 'text' },
    ]);
    assert.deepEqual(ix.query('growing oak', 3).map((h) => h.id), ['1']);
    assert.deepEqual(ix.query('soil', 3, ['table']).map((h) => h.id), ['2']);
    const copy = Bm25Index.fromBuffer(ix.toBuffer()).update(['1'], []);
    assert.equal(copy.size, 2);
    assert.deepEqual(copy.query('soil', 3).map((h) => h.id), ['2']);
  });
});

describe('score-level (linear) fusion', () => {
  it('adds min-max normalised BM25 and w × normalised cosine over the union; an item one list misses gets 0 there', async () => {
    const dense = [
      { id: 'a', score: 0.9 },
      { id: 'b', score: 0.5 },
      { id: 'c', score: 0.1 },
    ];
    const lexical = [
      { id: 'c', score: 12 },
      { id: 'b', score: 7 },
      { id: 'd', score: 2 },
    ];
    const onlyBm25 = linearFusion(dense, lexical, 0).map((e) => e.id);
    assert.deepEqual(onlyBm25.slice(0, 2), ['c', 'b'], 'weight 0 keeps the BM25 order (a and d tie at 0 after it)');
    const fused = linearFusion(dense, lexical, 0.5);
    const byId = new Map(fused.map((e) => [e.id, e]));
    assert.ok(Math.abs(byId.get('b')!.fused - (0.5 + 0.5 * 0.5)) < 1e-12);
    assert.ok(Math.abs(byId.get('a')!.fused - 0.5) < 1e-12, 'a: no BM25 (0) + 0.5 × 1');
    assert.ok(Math.abs(byId.get('d')!.fused - 0) < 1e-12, 'd: BM25 minimum (0), no cosine (0)');
    assert.deepEqual(fused.map((e) => e.id), ['c', 'b', 'a', 'd']);
    assert.deepEqual(byId.get('b')!.bm25, { rank: 1, score: 7 });
    assert.deepEqual(byId.get('b')!.dense, { rank: 1, score: 0.5 });
  });
});
