// Reciprocal-rank fusion and the query router.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reciprocalRankFusion } from '../../../src/core/retrieve/fusion';
import { HybridRetriever, linearFusion } from '../../../src/core/retrieve/hybrid';
import type { CorpusIndex } from '../../../src/core/index/corpusIndex';
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

  it('with a flat BM25 list, BM25 is (1 − f) × the per-field list + f × the flat one; an item only the flat list has is ranked', () => {
    const dense = [
      { id: 'a', score: 0.9 },
      { id: 'b', score: 0.1 },
    ];
    const lexical = [
      { id: 'b', score: 10 },
      { id: 'a', score: 5 },
      { id: 'c', score: 0 },
    ];
    const flat = [
      { id: 'e', score: 8 },
      { id: 'a', score: 6 },
      { id: 'b', score: 4 },
    ];
    const fused = linearFusion(dense, lexical, 0.2, { list: flat, weight: 0.75 });
    const byId = new Map(fused.map((e) => [e.id, e]));
    // a: BM25 0.5, flat 0.5, cosine 1; b: BM25 1, flat 0, cosine 0; e: flat 1 only.
    assert.ok(Math.abs(byId.get('a')!.fused - (0.25 * 0.5 + 0.75 * 0.5 + 0.2)) < 1e-12);
    assert.ok(Math.abs(byId.get('b')!.fused - 0.25) < 1e-12);
    assert.ok(Math.abs(byId.get('e')!.fused - 0.75) < 1e-12);
    assert.deepEqual(fused.map((e) => e.id), ['e', 'a', 'b', 'c']);
    assert.deepEqual(byId.get('e')!.bm25Flat, { rank: 0, score: 8 });
    assert.equal(byId.get('e')!.bm25, undefined);
    // Weight 0 is the fusion without the flat list.
    assert.deepEqual(linearFusion(dense, lexical, 0.2, { list: flat, weight: 0 }).map((e) => [e.id, e.fused]).filter(([id]) => id !== 'e'), linearFusion(dense, lexical, 0.2).map((e) => [e.id, e.fused]));
  });

  it('the retriever asks the index for the flat BM25 list only when the profile weights it, and traces its score and rank', async () => {
    const asked: Array<string | undefined> = [];
    const index = {
      vectors: { size: 3, query: async () => [{ id: 'a', score: 0.9 }, { id: 'b', score: 0.2 }] },
      lexical: {
        size: 3,
        query: async (_text: string, _k: number, _modalities?: readonly string[], scoring?: 'fields' | 'flat') => {
          asked.push(scoring);
          return scoring === 'flat' ? [{ id: 'c', score: 9 }, { id: 'b', score: 3 }] : [{ id: 'b', score: 5 }, { id: 'a', score: 1 }];
        },
      },
      item: async (id: string) => ({ id }),
    } as unknown as CorpusIndex;
    const embed = async () => new Float32Array([1]);
    const plain = await new HybridRetriever(index, embed, { dense: true, bm25: true, fusion: { kind: 'linear', dense: 0.2, depth: 100 } }).retrieve('q', 3);
    assert.deepEqual(asked, [undefined]);
    assert.ok(plain.items.every((r) => r.scores.bm25Flat === undefined));
    asked.length = 0;
    const withFlat = await new HybridRetriever(index, embed, { dense: true, bm25: true, fusion: { kind: 'linear', dense: 0.1, depth: 100, flat: 0.6 } }).retrieve('q', 3);
    assert.deepEqual(asked, [undefined, 'flat']);
    assert.deepEqual(withFlat.items.map((r) => r.item.id), ['c', 'b', 'a']);
    const c = withFlat.items[0]!.scores;
    assert.equal(c.bm25Flat, 9);
    assert.equal(c.bm25FlatRank, 0);
    assert.equal(c.bm25, undefined);
    assert.ok(Math.abs(c.fused - 0.6) < 1e-12, 'c: flat 1 × 0.6, nothing else');
    // b: per-field 1 × 0.4 + flat 0 × 0.6 + cosine 0 × 0.1.
    assert.ok(Math.abs(withFlat.items[1]!.scores.fused - 0.4) < 1e-12);
  });
});
