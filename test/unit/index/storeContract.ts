/**
 * The store contract: one suite of behaviour every IndexStore adapter must show (insert, upsert
 * of a changed file, delete, generation switch, top-k dense, lexical, hybrid, concurrent readers
 * during a write, the writer lock, garbage collection, node vectors, the indexer end to end).
 * localStore.test.ts and postgresStore.test.ts run it against their adapter.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import type { Item } from '../../../src/contracts/region';
import type { Encoder } from '../../../src/core/encode/encoder';
import { CanopyError } from '../../../src/core/errors';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import type { IndexStore, ItemRecord } from '../../../src/core/index/indexStore';
import { runIndexer } from '../../../src/core/index/indexer';
import { INDEX_FORMAT, type FileEntry, type IndexManifest } from '../../../src/core/index/layout';
import { discoverFiles } from '../../../src/core/ingest/discover';
import type { ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { HybridRetriever } from '../../../src/core/retrieve/hybrid';
import { titleKey } from '../../../src/core/text/titles';
import { hashEmbed, hashEmbeddings } from '../../helpers/hashEmbeddings';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { ask } from '../../../src/core/engine/ask';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import { inventoryLines } from '../../helpers/records';

export interface StoreUnderTest {
  store: IndexStore;
  /** A second, independent handle on the same data (as another process would open it). */
  reopen(): IndexStore;
  cleanup(): Promise<void>;
}

const DIM = 16;

/** A unit vector near basis direction `axis` (a small, deterministic tilt by `seed`). */
export function axisVector(axis: number, seed = 0): Float32Array {
  const v = new Float32Array(DIM);
  v[axis % DIM] = 1;
  v[(axis + 1 + (seed % (DIM - 1))) % DIM] = 0.05 + 0.01 * (seed % 7);
  let n = 0;
  for (const x of v) n += x * x;
  return v.map((x) => x / Math.sqrt(n));
}

const base: Array<Omit<ItemRecord, 'vector'> & { axis: number }> = [
  { id: 'oak', file: 'oak.md', modality: 'text', title: 'Oaks', text: 'The pedunculate oak grows slowly and lives for centuries.', axis: 0 },
  { id: 'ash', file: 'ash.md', modality: 'text', title: 'Ash', text: 'Ash dieback is a fungal disease that kills ash trees.', axis: 1 },
  { id: 'alder', file: 'alder.md', modality: 'text', title: 'Alder', text: 'Alder fixes nitrogen in wet soil along the river.', axis: 2 },
  { id: 'plots', file: 'plots.csv', modality: 'table', title: 'Plots', text: 'plot P1 alder wet soil; plot P2 oak dry soil', axis: 3 },
  { id: 'beech', file: 'beech.md', modality: 'text', title: 'Beech', text: 'Beech leaves dropped early after the dry summer.', axis: 4 },
];

export function record(x: (typeof base)[number], seed = 0): ItemRecord {
  const { axis, ...rest } = x;
  return { ...rest, vector: axisVector(axis, seed) };
}

function doc(file: string, text: string): ParsedDocument {
  return { file, format: 'markdown', title: file, items: [], warnings: [], stats: { bytes: text.length, parseMs: 0, leaves: 0, nodes: 0 } };
}

function manifest(generation: number, items: ItemRecord[], docKey = (file: string) => `doc-${file}`): IndexManifest {
  const files: Record<string, FileEntry> = {};
  for (const it of items) {
    const e = (files[it.file] ??= { hash: it.file, size: 1, mtimeMs: 1, format: 'markdown', doc: docKey(it.file), items: [], nodes: 1, warnings: [] });
    e.items.push(it.id);
  }
  return { format: INDEX_FORMAT, generation, createdAt: new Date().toISOString(), root: '/r', encoderId: 'test', branchingFactor: 2, parserVersion: 'test', files, errors: [], skipped: [] };
}

/** Writes generation `to` from `from` with the changes and commits it, as the indexer does. */
async function generation(store: IndexStore, from: number | undefined, to: number, all: ItemRecord[], changes: { upsert: ItemRecord[]; remove: string[] }, docKey?: (file: string) => string): Promise<void> {
  const release = await store.lockWriter();
  try {
    await store.recover();
    for (const it of changes.upsert) await store.putDocument((docKey ?? ((f: string) => `doc-${f}`))(it.file), doc(it.file, it.text));
    await store.writeGeneration(from, to, changes);
    const m = manifest(to, all, docKey);
    await store.commit(m);
    await store.collectGarbage(m, from);
  } finally {
    await release();
  }
}

class CountingEncoder implements Encoder {
  readonly maxPieces = 128;
  readonly dim = DIM;
  readonly calls: string[][] = [];
  constructor(readonly id = 'contract-encoder') {}
  async encode(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    return texts.map((t) => hashEmbed(t, DIM));
  }
  async dispose(): Promise<void> {}
}

export function describeStoreContract(name: string, make: () => Promise<StoreUnderTest>, options: { exactDense?: boolean } = {}): void {
  describe(`store contract: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: IndexStore;
    const extra: IndexStore[] = [];
    beforeEach(async () => {
      sut = await make();
      store = sut.store;
    });
    afterEach(async () => {
      for (const s of extra.splice(0)) await s.close();
      await sut.cleanup();
    });

    const first = () => base.map((b) => record(b));

    it('insert: nothing is live before the commit; then dense, lexical and document reads answer', async () => {
      assert.equal(await store.liveGeneration(), undefined);
      const items = first();
      const release = await store.lockWriter();
      await store.recover();
      await store.putDocument('doc-oak.md', doc('oak.md', 'oaks'));
      await store.writeGeneration(undefined, 1, { upsert: items, remove: [] });
      assert.equal(await store.liveGeneration(), undefined, 'written but not committed');
      await store.commit(manifest(1, items));
      await release();
      assert.equal(await store.liveGeneration(), 1);
      assert.equal((await store.readManifest(1)).files['oak.md']?.items[0], 'oak');
      const r = await store.open(1);
      assert.equal(r.size, items.length);
      assert.equal((await r.dense(axisVector(0, 3), 1))[0]?.id, 'oak');
      assert.ok(Math.abs((await r.dense(items[1]!.vector, 1))[0]!.score - 1) < 1e-3, 'cosine of an item with itself is 1');
      assert.equal((await r.lexical('pedunculate oak', 3))[0]?.id, 'oak');
      assert.deepEqual(await r.document('doc-oak.md'), doc('oak.md', 'oaks'));
      await r.close();
    });

    it('upsert of a changed file replaces its item; a reader of the old generation still sees the old one', async () => {
      const items = first();
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      const old = await store.open(1);
      const changed = { ...record(base[1]!), text: 'Ash trees were replanted with hornbeam after the survey.', vector: axisVector(9) };
      const all = items.map((i) => (i.id === 'ash' ? changed : i));
      await generation(store, 1, 2, all, { upsert: [changed], remove: [] });
      const now = await store.open(2);
      assert.equal(now.size, items.length, 'replaced, not added');
      assert.equal((await now.lexical('hornbeam replanted', 5))[0]?.id, 'ash');
      assert.deepEqual(await now.lexical('fungal dieback', 5), [], 'the old text is gone');
      assert.equal((await now.dense(axisVector(9), 1))[0]?.id, 'ash');
      assert.equal((await old.lexical('fungal dieback', 5))[0]?.id, 'ash', 'generation 1 is unchanged for its reader');
      assert.deepEqual(await old.lexical('hornbeam', 5), []);
      await old.close();
      await now.close();
    });

    it('delete removes an item from dense and lexical search and from the count', async () => {
      const items = first();
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      await generation(
        store,
        1,
        2,
        items.filter((i) => i.id !== 'beech'),
        { upsert: [], remove: ['beech'] },
      );
      const r = await store.open(2);
      assert.equal(r.size, items.length - 1);
      assert.ok(!(await r.dense(axisVector(4), 10)).some((h) => h.id === 'beech'));
      assert.deepEqual(await r.lexical('beech leaves', 5), []);
      await r.close();
    });

    it('generation switch: a writer that stops before its commit leaves the old generation live, and the next writer starts clean above it', async () => {
      const items = first();
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      const birch = { id: 'birch', file: 'birch.md', modality: 'text', title: 'Birch', text: 'Silver birch colonised the clearing.', vector: axisVector(7) };
      // A writer that dies between writing and committing.
      const release = await store.lockWriter();
      await store.recover();
      await store.writeGeneration(1, 2, { upsert: [birch], remove: ['oak'] });
      await release();
      const other = sut.reopen();
      extra.push(other);
      assert.equal(await other.liveGeneration(), 1);
      const r1 = await other.open(1);
      assert.equal(r1.size, items.length);
      assert.deepEqual(await r1.lexical('silver birch', 5), [], 'the torn generation is invisible');
      assert.equal((await r1.dense(axisVector(0), 1))[0]?.id, 'oak', 'what it removed is still there');
      await r1.close();
      // The next writer numbers above everything on record and sees none of the torn data.
      const next = Math.max(1, ...(await other.generations())) + 1;
      const alder = { ...record(base[2]!), text: 'Alder roots hold the river bank.' };
      const all = items.map((i) => (i.id === 'alder' ? alder : i));
      await generation(other, 1, next, all, { upsert: [alder], remove: [] });
      assert.equal(await other.liveGeneration(), next);
      const r = await other.open(next);
      assert.equal(r.size, items.length);
      assert.deepEqual(await r.lexical('silver birch', 5), []);
      assert.equal((await r.dense(axisVector(0), 1))[0]?.id, 'oak');
      assert.equal((await r.lexical('river bank roots', 5))[0]?.id, 'alder');
      await r.close();
    });

    it('dense top-k: best first as an exact scan ranks them, filtered by modality', async () => {
      let seed = 7;
      const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
      const items: ItemRecord[] = Array.from({ length: 60 }, (_, i) => {
        const v = Float32Array.from({ length: DIM }, () => rand());
        const n = Math.hypot(...v);
        return { id: `i${i}`, file: `f${i}.md`, modality: i % 3 === 0 ? 'table' : 'text', title: `Item ${i}`, text: `item number ${i}`, vector: v.map((x) => x / n) };
      });
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      const r = await store.open(1);
      const q = items[5]!.vector.map((x, j) => x + 0.3 * items[17]!.vector[j]!);
      const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, j) => s + x * b[j]!, 0) / Math.hypot(...a) / Math.hypot(...b);
      const exact = items.map((it) => ({ id: it.id, s: dot(q, it.vector), m: it.modality })).sort((a, b) => b.s - a.s);
      const got = await r.dense(q, 5);
      assert.equal(got.length, 5);
      assert.deepEqual(
        got.map((h) => h.id),
        exact.slice(0, 5).map((e) => e.id),
      );
      got.forEach((h, i) => assert.ok(Math.abs(h.score - exact[i]!.s) < 1e-4, `${h.id}: ${h.score} vs ${exact[i]!.s}`));
      const tables = await r.dense(q, 4, { modalities: ['table'] });
      assert.deepEqual(
        tables.map((h) => h.id),
        exact
          .filter((e) => e.m === 'table')
          .slice(0, 4)
          .map((e) => e.id),
      );
      assert.deepEqual(await r.dense(q, 3, { modalities: ['image'] }), []);
      await r.close();
      void options;
    });

    it('lexical: any of the words, best first, filtered by modality; stop words alone find nothing', async () => {
      const items = first();
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      const r = await store.open(1);
      const hits = await r.lexical('Which disease kills the ash trees?', 5);
      assert.equal(hits[0]?.id, 'ash');
      for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score >= hits[i]!.score, 'best first');
      const soil = await r.lexical('wet soil', 5);
      assert.deepEqual(new Set(soil.map((h) => h.id)), new Set(['alder', 'plots']), 'OR over the words: items with either word');
      assert.deepEqual(
        (await r.lexical('wet soil', 5, { modalities: ['table'] })).map((h) => h.id),
        ['plots'],
      );
      assert.deepEqual(await r.lexical('the of and which', 5), []);
      assert.deepEqual(await r.lexical('', 5), []);
      // The flat scoring (bm25.ts; a full-text store ranks the same either way) finds the same items and honours the filter.
      assert.equal((await r.lexical('Which disease kills the ash trees?', 5, { scoring: 'flat' }))[0]?.id, 'ash');
      assert.deepEqual(new Set((await r.lexical('wet soil', 5, { scoring: 'flat' })).map((h) => h.id)), new Set(['alder', 'plots']));
      assert.deepEqual(
        (await r.lexical('wet soil', 5, { modalities: ['table'], scoring: 'flat' })).map((h) => h.id),
        ['plots'],
      );
      await r.close();
    });

    it('titled: the items a title names, by key, across generations and modalities', async () => {
      const named = [
        ...first(),
        record({ id: 'more', file: 'more.md', modality: 'text', title: 'Thomas More', text: 'Lord Chancellor of England.', axis: 5 }),
        record({ id: 'newark', file: 'newark.md', modality: 'text', title: 'Newark, New Jersey', text: 'A city in Essex County.', axis: 6 }),
        record({ id: 'newark-t', file: 'newark.csv', modality: 'table', title: 'Newark (table)', text: 'population 311,549', axis: 7 }),
      ];
      await generation(store, undefined, 1, named, { upsert: named, remove: [] });
      const r = await store.open(1);
      const got = await r.titled([titleKey('Sir Thomas More'), titleKey('Newark'), titleKey('Thomas'), titleKey('Ash'), '']);
      assert.deepEqual(got.get('thomas more'), ['more'], 'an honorific is no part of the key');
      assert.deepEqual(new Set(got.get('newark')), new Set(['newark', 'newark-t']), 'a title is keyed by its named subject, without disambiguation');
      assert.equal(got.has('thomas'), false, 'a key names a whole title, not a word of it');
      assert.deepEqual(got.get('ash'), ['ash']);
      assert.deepEqual((await r.titled(['newark'], { modalities: ['table'] })).get('newark'), ['newark-t']);
      // A removed item is found by no title in the next generation; its reader of generation 1 still finds it.
      await generation(store, 1, 2, named.filter((x) => x.id !== 'more'), { upsert: [], remove: ['more'] });
      const r2 = await store.open(2);
      assert.equal((await r2.titled(['thomas more'])).size, 0);
      assert.deepEqual((await r.titled(['thomas more'])).get('thomas more'), ['more']);
      await r.close();
      await r2.close();
    });

    it('hybrid: the retriever fuses the dense and lexical rankings of the store', async () => {
      const items = first();
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      // Items are read from the documents the manifest names: give each file a real one.
      const release = await store.lockWriter();
      for (const it of items) {
        const item: Item = { id: it.id, file: it.file, title: it.title, modality: it.modality as Item['modality'], root: { id: `${it.id}#0`, kind: 'document', text: it.text, anchor: { kind: 'text', file: it.file, start: 0, end: it.text.length, startLine: 1, startCol: 1, endLine: 1, endCol: it.text.length + 1 }, children: [] } } as unknown as Item;
        await store.putDocument(`item-${it.file}`, { ...doc(it.file, it.text), items: [item] });
      }
      await store.writeGeneration(1, 2, { upsert: [], remove: [] });
      const m = manifest(2, items, (f) => `item-${f}`);
      await store.commit(m);
      await release();
      const corpus = await CorpusIndex.open(store);
      // The words point at ash, the vector at oak: fusion returns both, each with its own component.
      const retriever = new HybridRetriever(corpus, async () => axisVector(0));
      const r = await retriever.retrieve('fungal dieback disease', 2);
      const byId = new Map(r.items.map((i) => [i.item.id, i.scores]));
      assert.deepEqual(new Set(byId.keys()), new Set(['ash', 'oak']));
      assert.ok(byId.get('ash')!.bm25! > 0 && byId.get('ash')!.bm25Rank === 0);
      assert.equal(byId.get('oak')!.denseRank, 0);
      assert.equal(r.items.find((i) => i.item.id === 'ash')!.item.title, 'Ash');
      await corpus.close();
    });

    it('concurrent readers during a write see the old generation or the new one, never a mix', async () => {
      const items = first();
      await generation(store, undefined, 1, items, { upsert: items, remove: [] });
      const many: ItemRecord[] = Array.from({ length: 300 }, (_, i) => ({ id: `n${i}`, file: `n${i}.md`, modality: 'text', title: `Note ${i}`, text: `field note ${i} about moss`, vector: axisVector(5 + (i % 8), i) }));
      const gen2 = [...items.filter((i) => i.id !== 'oak'), ...many];
      const expect = new Map([
        [1, { size: items.length, moss: 0, oak: true }],
        [2, { size: gen2.length, moss: Math.min(50, many.length), oak: false }],
      ]);
      let writing = true;
      const seen = new Set<number>();
      const reader = async () => {
        const handle = sut.reopen();
        extra.push(handle);
        let after = 0;
        while (writing || after++ < 1) {
          const g = await handle.liveGeneration();
          const want = expect.get(g!);
          assert.ok(want, `live generation ${g}`);
          const r = await handle.open(g!);
          assert.equal(r.size, want.size, `size of generation ${g}`);
          assert.equal((await r.lexical('moss', 50)).length, want.moss, `moss hits in generation ${g}`);
          assert.equal((await r.lexical('pedunculate', 5)).length > 0, want.oak, `oak in generation ${g}`);
          await r.close();
          seen.add(g!);
          await new Promise((res) => setTimeout(res, 5));
        }
      };
      const readers = Array.from({ length: 3 }, reader);
      await new Promise((res) => setTimeout(res, 30));
      await generation(store, 1, 2, gen2, { upsert: many, remove: ['oak'] });
      writing = false;
      await Promise.all(readers);
      assert.deepEqual([...seen].sort(), [1, 2], 'readers saw the old generation during the write and the new one after it');
    });

    it('one writer at a time: a second writer is refused while the lock is held, and gets it after release', async () => {
      const release = await store.lockWriter();
      const other = sut.reopen();
      extra.push(other);
      await assert.rejects(other.lockWriter(), (err: unknown) => err instanceof CanopyError && err.code === 'E_BAD_INPUT' && /being written by process \d+/.test(err.message));
      await release();
      const again = await other.lockWriter();
      await again();
    });

    it('garbage collection keeps the live generation and the one before it, with the documents they name', async () => {
      const items = first();
      const key = (tag: string) => (f: string) => `${tag}-${f}`;
      await generation(store, undefined, 1, items, { upsert: items, remove: [] }, key('g1'));
      await generation(store, 1, 2, items, { upsert: items, remove: [] }, key('g2'));
      await generation(store, 2, 3, items, { upsert: items, remove: [] }, key('g3'));
      const left = (await store.generations()).sort();
      assert.ok(left.every((g) => g === 2 || g === 3) && left.includes(3), `generations left: ${left}`);
      const r = await store.open(3);
      assert.equal(r.size, items.length);
      await r.document('g3-oak.md');
      await assert.rejects(r.document('g1-oak.md'), 'a document only generation 1 named is gone');
      await r.close();
    });

    it('node vectors: what was encoded is kept across handles, and only misses reach the encoder', async () => {
      const enc = new CountingEncoder();
      const cache = await store.vectorCache(enc);
      const [a, b] = await cache.getOrEncode(['alpha text', 'beta text', 'alpha text'], enc);
      assert.deepEqual(enc.calls, [['alpha text', 'beta text']]);
      await cache.save();
      const other = sut.reopen();
      extra.push(other);
      const enc2 = new CountingEncoder();
      const cache2 = await other.vectorCache(enc2);
      const got = await cache2.lookup(['beta text', 'gamma text', 'alpha  text']);
      assert.deepEqual([...got[0]!], [...b!]);
      assert.equal(got[1], undefined);
      assert.deepEqual([...got[2]!], [...a!], 'keyed on the normalised text');
      await cache2.getOrEncode(['alpha text', 'gamma text'], enc2);
      assert.deepEqual(enc2.calls, [['gamma text']]);
      const otherModel = await other.vectorCache(new CountingEncoder('another-model'));
      assert.deepEqual(await otherModel.lookup(['alpha text']), [undefined], 'models are kept apart');
    });

    it('the indexer writes into the store incrementally and the retriever answers from it', async () => {
      const root = mkdtempSync(join(tmpdir(), 'canopy-contract-ws-'));
      try {
        const write = (rel: string, text: string) => {
          mkdirSync(join(root, rel, '..'), { recursive: true });
          writeFileSync(join(root, rel), text);
        };
        write('oak.md', '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
        write('ash.md', '# Ash\n\nAsh dieback is a fungal disease. It kills ash trees.\n');
        write('plots.csv', 'plot,species\nP1,alder\nP2,oak\n');
        const index = async () =>
          runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 1 }), {
            store,
            parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
            embeddings: hashEmbeddings(),
            parserVersion: 'test',
            branchingFactor: 2,
          });
        const first = await index();
        assert.equal(first.parsed, 3);
        write('oak.md', '# Oaks\n\nThe sessile oak prefers dry soil. It lives for centuries.\n');
        const second = await index();
        assert.equal(second.parsed, 1);
        assert.equal(second.reused, 2);
        const corpus = await CorpusIndex.open(sut.reopen());
        assert.equal(corpus.generation, second.generation);
        assert.equal(corpus.vectors.size, corpus.itemCount);
        const r = await new HybridRetriever(corpus, async (t) => hashEmbed(t)).retrieve('sessile oak dry soil', 3);
        assert.equal(r.items[0]?.item.file, 'oak.md');
        assert.match(JSON.stringify(r.items[0]?.item.root), /sessile/);
        await corpus.close();
        await corpus.store.close();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });

    it('records as records: a 361-line JSONL file is items within the reader cap, and an ask through this store reads the kept evidence (never 0 tokens)', async () => {
      const root = mkdtempSync(join(tmpdir(), 'canopy-contract-records-'));
      try {
        writeFileSync(join(root, 'inventory.jsonl'), `${inventoryLines().join('\n')}\n`);
        writeFileSync(join(root, 'notes.md'), '# Notes\n\nThe rotor spares are audited every quarter.\n');
        await runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 1 }), {
          store,
          parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
          embeddings: hashEmbeddings(),
          parserVersion: 'test',
          branchingFactor: 2,
        });
        const corpus = await CorpusIndex.open(sut.reopen());
        const tokens = bpeTokenCounter();
        const cap = 16_000;
        try {
          // The whole items (no compression): what a kept-whole item costs the reader.
          const trace = await ask(
            'Which warehouse holds sku FX-00042 of acme-rotor-works?',
            { topK: 3, maxRounds: 1, branchingFactor: 2, compressor: { name: 'none' }, readerTokenCap: cap, encoderId: 'hash', retrieval: { dense: true, bm25: true, topics: false, fusion: 'rrf' } },
            { retriever: new HybridRetriever(corpus, async (t) => hashEmbed(t)), embedQuery: async (t) => hashEmbed(t), embedTexts: async (ts) => ts.map((t) => hashEmbed(t)), reader: new ExtractiveReader(), tokens, index: { root, generation: corpus.generation, items: corpus.itemCount } },
          );
          const retrieved = trace.rounds.flatMap((r) => r.retrieved);
          assert.ok(retrieved.some((it) => it.file === 'inventory.jsonl'), 'the records were retrieved');
          for (const it of retrieved) assert.ok(it.tokens.whole <= cap, `${it.itemId}: ${it.tokens.whole} tokens kept whole`);
          assert.ok(trace.totals.keptRegions > 0);
          assert.ok(trace.readerInput.tokens > 0, 'the reader got the kept evidence');
          assert.match(trace.answer.text, /FX-00042/);
        } finally {
          await corpus.close();
          await corpus.store.close();
        }
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });
  after(() => undefined);
}
