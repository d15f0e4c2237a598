// The vectra peer on a tiny corpus: the budget is respected, what it renders maps back to
// whole leaves, the BM25 guard keeps a small collection from throwing, and the bulk loader gives
// the same index as one upsert per document.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { containedLeaves } from '../../../src/eval/given';
import { cl100kTokenizer, VectraPeer } from '../../../src/eval/peer';
import { textItem } from '../../../src/eval/items';
import { hashEmbed } from '../../helpers/hashEmbeddings';

const embeddings = { embedTexts: async (texts: string[]) => texts.map((t) => hashEmbed(t)) };

const docs = [
  { id: 'lake', text: 'Marrow Lake is a glacial lake. Its outflow feeds the river Quill. The lake freezes every winter.' },
  { id: 'river', text: 'The river Quill runs for forty kilometres. It reaches the sea at Saltmere. Otters returned in 2011.' },
  { id: 'town', text: 'Saltmere is a port town founded in 1204. Its lighthouse was designed by Ada Fenwick.' },
  { id: 'wool', text: 'Greyford hosts a wool market every spring. The market dates from 1390.' },
];

describe('vectra peer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'canopy-peer-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('renders sections within the token budget', async () => {
    const peer = await VectraPeer.create(join(dir, 'a'), embeddings, { chunkSize: 16 });
    await peer.add(docs);
    const chunks = await peer.chunkCount;
    assert.ok(chunks > docs.length, `chunk size 16 splits documents (${chunks} chunks)`);
    const budget = 30;
    const { hits, rendered } = await peer.retrieveAndRender('Where does the river Quill reach the sea?', budget, { maxDocuments: 4, maxChunks: 3, bm25: true });
    assert.ok(hits.some((h) => h.id === 'river'));
    assert.ok(rendered.length > 0 && rendered.every((r) => hits.some((h) => h.id === r.id)));
    const used = rendered.reduce((a, r) => a + r.tokens, 0);
    assert.ok(used <= budget && used > 0, `used ${used} of ${budget}`);
    for (const r of rendered) assert.equal(r.tokens, cl100kTokenizer().encode(r.text).length);
    assert.equal(peer.bm25Skipped, 0);
  });

  it('survives many BM25 queries in one process (wink-eng-lite-web-model re-stringifies its model on every load)', async () => {
    const peer = await VectraPeer.create(join(dir, 'many'), embeddings, { chunkSize: 16 });
    await peer.add(docs);
    // Unpatched, a query past the 20th dies with "RangeError: Invalid string length" (measured on
    // Node 20: the 21st when this test runs alone), so 24 it is, though each costs ~0.2 s of CPU.
    for (let i = 0; i < 24; i++) {
      const { hits } = await peer.retrieveAndRender(`river Quill question ${i}`, 30, { maxDocuments: 4, maxChunks: 3, bm25: true });
      assert.ok(hits.length > 0);
    }
    assert.equal(peer.bm25Skipped, 0);
  });

  it('switches BM25 off instead of throwing when fewer than 3 chunks remain outside the top', async () => {
    const peer = await VectraPeer.create(join(dir, 'b'), embeddings, { chunkSize: 512 });
    await peer.add(docs.slice(0, 3));
    const { hits } = await peer.retrieveAndRender('lighthouse designer', 1000, { maxDocuments: 3, maxChunks: 3, bm25: true });
    assert.equal(hits.length, 3);
    assert.equal(peer.bm25Skipped, 1);
  });

  it('a budget that covers everything returns whole documents', async () => {
    const peer = await VectraPeer.create(join(dir, 'c'), embeddings, { chunkSize: 512 });
    await peer.add(docs);
    const { rendered } = await peer.retrieveAndRender('wool market', 10_000, { maxDocuments: 4, maxChunks: 4, bm25: false });
    assert.deepEqual(rendered.map((r) => r.text).sort(), docs.map((d) => d.text).sort());
  });

  it('bulk loading builds the same chunks and ranking as one upsert per document', async () => {
    const one = await VectraPeer.create(join(dir, 'd1'), embeddings, { chunkSize: 16 });
    await one.add(docs);
    const bulk = await VectraPeer.create(join(dir, 'd2'), embeddings, { chunkSize: 16 });
    await bulk.addBulk(docs);
    assert.equal(await bulk.chunkCount, await one.chunkCount);
    const q = 'Who designed the lighthouse of Saltmere?';
    const a = await one.retrieveAndRender(q, 40, { maxDocuments: 4, maxChunks: 5, bm25: false });
    const b = await bulk.retrieveAndRender(q, 40, { maxDocuments: 4, maxChunks: 5, bm25: false });
    assert.deepEqual(b.hits, a.hits);
    assert.deepEqual(b.rendered, a.rendered);
    const reopened = await VectraPeer.open(join(dir, 'd2'), embeddings, { chunkSize: 16 });
    assert.ok(await VectraPeer.isBuilt(join(dir, 'd2')));
    assert.deepEqual((await reopened.retrieveAndRender(q, 40, { maxDocuments: 4, maxChunks: 5, bm25: false })).hits, a.hits);
  });

  it('rendered text maps back to the whole sentences it contains', () => {
    const { item } = textItem('river', 'River Quill', docs[1]!.text, undefined, 2);
    const kept = containedLeaves([item!], new Map([[item!.id, 'The river Quill runs for forty kilometres. It reaches the sea at Salt']]));
    assert.deepEqual(
      kept.get(item!.id)!.map((l) => l.text),
      ['The river Quill runs for forty kilometres.'],
    );
  });
});
