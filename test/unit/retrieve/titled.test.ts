// A follow-up's named things: the items whose titles name them come first, found by the store's
// title keys (no document read to look at a title), the best-ranked of several, never one held.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { Bm25Index } from '../../../src/core/index/bm25';
import { HybridRetriever } from '../../../src/core/retrieve/hybrid';

const docs = [
  { id: 'a', title: 'Thomas More Catholic School, Purley', text: 'A school named after Sir Thomas More, husband of Jane Colt.' },
  { id: 'b', title: 'Margaret Roper', text: 'Margaret Roper, daughter of Sir Thomas More, married William Roper of Kent.' },
  { id: 'c', title: 'Thomas More', text: 'Lord Chancellor of England, executed in 1535.' },
  { id: 'd', title: 'Kentish Town', text: 'A district in London; the Kentish husband of the rhyme.' },
  { id: 'e', title: 'Newark, New Jersey', text: 'The most populous city in the state.' },
  { id: 'f', title: 'The Venture Bros.', text: 'An animated series.' },
  { id: 'g', title: 'Newark, Delaware', text: 'A city in New Castle County.' },
].map((d) => ({ ...d, modality: 'text' }));

/** An index over the documents' real BM25 (with its title keys), counting the documents read. */
function index(): { index: CorpusIndex; read: string[] } {
  const bm25 = Bm25Index.build(docs);
  const read: string[] = [];
  return {
    read,
    index: {
      vectors: { size: docs.length, query: async () => [] },
      lexical: { size: docs.length, query: async (q: string, k: number) => bm25.query(q, k) },
      titled: async (keys: readonly string[]) => bm25.titled(keys),
      fileOf: () => undefined,
      item: async (id: string) => {
        read.push(id);
        return { id, title: docs.find((d) => d.id === id)!.title };
      },
    } as unknown as CorpusIndex,
  };
}

const bm25Only = { dense: false, bm25: true } as const;
const retriever = (idx: CorpusIndex) => new HybridRetriever(idx, async () => new Float32Array([1]), bm25Only);

it('takes the item a follow-up names first, by its title key, and marks it', async () => {
  const { index: idx, read } = index();
  const plain = await retriever(idx).retrieve('Sir Thomas More Kentish husband', 2);
  assert.ok(!plain.items.some((i) => i.item.id === 'c'), 'the words alone do not rank the Thomas More item in the top 2 ("more" is a stop word)');
  read.length = 0;
  const r = await retriever(idx).retrieve('Sir Thomas More Kentish husband', 2, { titled: ['Sir Thomas More'] });
  assert.equal(r.items[0]!.item.id, 'c', 'an honorific is no part of the name');
  assert.equal(r.items[0]!.scores.titleMatch, true);
  assert.equal(r.items[1]!.item.id, plain.items[0]!.item.id, 'the query\'s best follows');
  assert.equal(r.items[1]!.scores.titleMatch, undefined);
  assert.deepEqual(read.sort(), r.items.map((i) => i.item.id).sort(), 'only the items returned are read');
});

it('matches a title without disambiguation or article, prefers the best-ranked of several, and never takes an item held', async () => {
  const { index: idx } = index();
  const r = await retriever(idx).retrieve('populous city state', 3, { titled: ['Newark', 'Venture Bros', 'Nowhere Town'] });
  assert.deepEqual(r.items.slice(0, 2).map((i) => i.item.id), ['e', 'f'], '"Newark, New Jersey" ranks above "Newark, Delaware" for the query');
  assert.ok(r.items.slice(0, 2).every((i) => i.scores.titleMatch === true));
  const held = await retriever(idx).retrieve('populous city state', 2, { titled: ['Newark'], excludeIds: new Set(['e']) });
  assert.equal(held.items[0]!.item.id, 'g', 'the other Newark, since the first is held');
  assert.ok(!held.items.some((i) => i.item.id === 'e'));
  // No name found: the query's own ranking.
  const none = await retriever(idx).retrieve('populous city state', 2, { titled: ['Nowhere Town'] });
  assert.deepEqual(none.items.map((i) => i.item.id), (await retriever(idx).retrieve('populous city state', 2)).items.map((i) => i.item.id));
});

it('answers which names title an item, by the caller\'s names', async () => {
  const { index: idx, read } = index();
  const found = await retriever(idx).titled(['Sir Thomas More', 'Newark', 'Nowhere Town', 'the Venture Bros']);
  assert.deepEqual([...found], [
    ['Sir Thomas More', ['c']],
    ['Newark', ['e', 'g']],
    ['the Venture Bros', ['f']],
  ]);
  assert.deepEqual(read, [], 'no document is read');
});
