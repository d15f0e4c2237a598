// A follow-up's named things: the items whose titles name them come first, from the ranked
// candidates or from a search for the name alone.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { HybridRetriever } from '../../../src/core/retrieve/hybrid';

const titles: Record<string, string> = {
  a: 'Thomas More Catholic School, Purley',
  b: 'Margaret Roper',
  c: 'Thomas More',
  d: 'Kentish Town',
  e: 'Newark, New Jersey',
  f: 'The Venture Bros.',
};

/** An index whose rankers answer by query: the follow-up's words, or a name searched alone. */
function index(lists: Record<string, string[]>): { index: CorpusIndex; searched: string[] } {
  const searched: string[] = [];
  const hits = (q: string) => (lists[q] ?? []).map((id, i) => ({ id, score: 10 - i }));
  return {
    searched,
    index: {
      vectors: { size: 6, query: async () => [] },
      lexical: {
        size: 6,
        query: async (q: string) => {
          searched.push(q);
          return hits(q);
        },
      },
      item: async (id: string) => ({ id, title: titles[id]! }),
    } as unknown as CorpusIndex,
  };
}

const bm25Only = { dense: false, bm25: true } as const;

it('takes the item a follow-up names first, found by a search for the name, and marks it', async () => {
  const { index: idx, searched } = index({ 'Sir Thomas More Kentish husband': ['a', 'd', 'b', 'c'], 'Sir Thomas More': ['a', 'c'] });
  const r = await new HybridRetriever(idx, async () => new Float32Array([1]), bm25Only).retrieve('Sir Thomas More Kentish husband', 2, { titled: ['Sir Thomas More'] });
  assert.deepEqual(r.items.map((i) => i.item.id), ['c', 'a'], 'an honorific is no part of the name');
  assert.equal(r.items[0]!.scores.titleMatch, true);
  assert.equal(r.items[1]!.scores.titleMatch, undefined);
  assert.deepEqual(searched, ['Sir Thomas More Kentish husband', 'Sir Thomas More'], 'the name is searched for on its own');
  // Without names, the ranking is the query's.
  const plain = await new HybridRetriever(idx, async () => new Float32Array([1]), bm25Only).retrieve('Sir Thomas More Kentish husband', 2);
  assert.deepEqual(plain.items.map((i) => i.item.id), ['a', 'd']);
});

it('matches the title without disambiguation or article, and never takes an item held', async () => {
  const { index: idx, searched } = index({ 'Detroit Newark high school': ['d', 'b'], Newark: ['a', 'e'], 'Venture Bros': ['f'] });
  const r = await new HybridRetriever(idx, async () => new Float32Array([1]), bm25Only).retrieve('Detroit Newark high school', 2, { titled: ['Newark', 'Venture Bros', 'Nowhere Town'] });
  assert.deepEqual(r.items.map((i) => i.item.id), ['e', 'f']);
  assert.ok(r.items.every((i) => i.scores.titleMatch === true));
  assert.deepEqual(searched, ['Detroit Newark high school', 'Newark', 'Venture Bros', 'Nowhere Town']);
  // An item already held is never taken again.
  const held = await new HybridRetriever(idx, async () => new Float32Array([1]), bm25Only).retrieve('Detroit Newark high school', 2, { titled: ['Newark'], excludeIds: new Set(['e']) });
  assert.deepEqual(held.items.map((i) => i.item.id), ['d', 'b']);
});
