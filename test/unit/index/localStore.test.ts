// The local store: the store contract (f32 and int8 item vectors), and what is particular to
// files on disk — damaged files, the format-1 index of earlier versions, int8 rescoring.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { encodeItemVectors, ItemVectors } from '../../../src/core/index/itemVectors';
import { paths, writeCurrent } from '../../../src/core/index/layout';
import { LocalStore } from '../../../src/core/index/localStore';
import { parseStoreSpec } from '../../../src/core/index/storeSpec';
import { indexFolder } from '../../helpers/indexFolder';
import { describeStoreContract } from './storeContract';

for (const vectorEncoding of ['f32', 'i8'] as const) {
  describeStoreContract(`local (${vectorEncoding})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-local-store-'));
    return {
      store: new LocalStore(dir, { vectorEncoding }),
      reopen: () => new LocalStore(dir, { vectorEncoding }),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  });
}

describe('local store on disk', () => {
  function workspace() {
    const root = mkdtempSync(join(tmpdir(), 'canopy-local-ws-'));
    const dir = mkdtempSync(join(tmpdir(), 'canopy-local-idx-'));
    writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
    writeFileSync(join(root, 'ash.md'), '# Ash\n\nAsh dieback is a fungal disease. It kills ash trees.\n');
    return { root, dir, done: () => [root, dir].forEach((d) => rmSync(d, { recursive: true, force: true })) };
  }

  it('a damaged item-vector or BM25 file is reported as a corrupt index naming the file, and re-indexing repairs it', async () => {
    const w = workspace();
    try {
      const s = await indexFolder(w.root, w.dir);
      for (const file of [paths(w.dir).items(s.generation), paths(w.dir).lexical(s.generation)]) {
        const good = readFileSync(file);
        const bad = Buffer.from(good);
        bad[bad.length - 70] = bad[bad.length - 70]! ^ 0x5a;
        writeFileSync(file, bad);
        await assert.rejects(CorpusIndex.open(new LocalStore(w.dir)), (err: Error) => /E_INDEX_CORRUPT|corrupt/.test(`${(err as { code?: string }).code} ${err.message}`) && err.message.includes(file.split('/').pop()!.split('-')[0]!));
        writeFileSync(file, good);
      }
      const corpus = await CorpusIndex.open(new LocalStore(w.dir));
      assert.equal(corpus.vectors.size, 2);
      await corpus.close();
    } finally {
      w.done();
    }
  });

  it('an index of format 1 (vectra JSON, MiniSearch JSON) is rebuilt with a message, and its files are removed', async () => {
    const w = workspace();
    try {
      // What Canopy 0.1's index folder held.
      writeFileSync(join(w.dir, 'CURRENT'), JSON.stringify({ format: 1, generation: 4 }));
      writeFileSync(join(w.dir, 'gen-4.json'), '{}');
      writeFileSync(join(w.dir, 'lexical-4.json'), '{}');
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(w.dir, 'vectors-4'));
      writeFileSync(join(w.dir, 'vectors-4', 'index.json'), '{"items":[]}');
      const s = await indexFolder(w.root, w.dir);
      assert.match(s.rebuilt ?? '', /format 1, this Canopy reads format 2/);
      assert.equal(s.generation, 5, 'numbered above the old generation');
      assert.deepEqual(readdirSync(w.dir).filter((n) => /-4(\.|$)/.test(n)), []);
      const corpus = await CorpusIndex.open(new LocalStore(w.dir));
      assert.equal(corpus.itemCount, 2);
      await corpus.close();
    } finally {
      w.done();
    }
  });

  it('a reader whose generation was collected after two commits opens the live one instead', async () => {
    const w = workspace();
    try {
      await indexFolder(w.root, w.dir);
      writeFileSync(join(w.root, 'oak.md'), '# Oaks\n\nEdited once.\n');
      await indexFolder(w.root, w.dir);
      writeFileSync(join(w.root, 'oak.md'), '# Oaks\n\nEdited twice.\n');
      const s = await indexFolder(w.root, w.dir);
      // CURRENT names a collected generation for a moment: the store answers with the live one.
      const store = new LocalStore(w.dir);
      let calls = 0;
      store.liveGeneration = async () => (calls++ === 0 ? 1 : s.generation);
      const corpus = await CorpusIndex.open(store);
      assert.equal(corpus.generation, s.generation);
      await corpus.close();
      await writeCurrent(w.dir, s.generation);
    } finally {
      w.done();
    }
  });
});

describe('item vectors', () => {
  let seed = 11;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const dim = 64;
  const items = Array.from({ length: 400 }, (_, i) => {
    // Clustered, as real sentence vectors are: 20 centres, noise around them.
    const centre = i % 20;
    const v = Float32Array.from({ length: dim }, (_, j) => Math.sin(centre * 7.1 + j * 1.3) + 0.35 * rand());
    return { id: `item-${i}`, modality: i % 5 === 0 ? 'table' : 'text', vector: v };
  });

  it('int8 codes with rescoring return the exact top-k of the float32 scan on clustered vectors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-vec-'));
    try {
      writeFileSync(join(dir, 'f32.vec'), Buffer.concat(encodeItemVectors(items, dim, 'f32')));
      writeFileSync(join(dir, 'i8.vec'), Buffer.concat(encodeItemVectors(items, dim, 'i8')));
      const f32 = await ItemVectors.open(join(dir, 'f32.vec'));
      const i8 = await ItemVectors.open(join(dir, 'i8.vec'));
      let agree = 0;
      for (let q = 0; q < 40; q++) {
        const query = Float32Array.from({ length: dim }, (_, j) => Math.sin((q % 20) * 7.1 + j * 1.3) + 0.5 * rand());
        const a = f32.query(query, 10).map((h) => h.id);
        const b = i8.query(query, 10);
        if (a.join() === b.map((h) => h.id).join()) agree++;
        // Rescored scores are exact cosines.
        const exact = f32.query(query, 50);
        for (const h of b) assert.ok(Math.abs(h.score - exact.find((e) => e.id === h.id)!.score) < 1e-5);
      }
      assert.ok(agree >= 39, `int8 + rescoring matched the exact top-10 on ${agree} of 40 queries`);
      assert.equal(i8.all()[7]!.id, 'item-7');
      assert.deepEqual(
        i8.query(items[3]!.vector, 3, ['table']).every((h) => Number(h.id.split('-')[1]) % 5 === 0),
        true,
      );
      i8.close();
      f32.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('store spec', () => {
  it('reads local, local with int8 vectors and postgres URLs, and names a bad one without its password', () => {
    assert.deepEqual(parseStoreSpec(undefined), { kind: 'local', vectorEncoding: 'f32' });
    assert.deepEqual(parseStoreSpec('local?vectors=i8'), { kind: 'local', vectorEncoding: 'i8' });
    const pg = parseStoreSpec('postgres://ann:secret@db.example:5433/corpus?schema=lab&lexical=bm25&ef_search=200&sslmode=require');
    assert.equal(pg.kind, 'postgres');
    if (pg.kind === 'postgres') {
      assert.equal(pg.options.connectionString, 'postgres://ann:secret@db.example:5433/corpus?sslmode=require');
      assert.equal(pg.options.schema, 'lab');
      assert.equal(pg.options.lexical, 'bm25');
      assert.equal(pg.options.hnsw?.efSearch, 200);
      assert.ok(!pg.options.label!.includes('secret'));
    }
    assert.throws(() => parseStoreSpec('postgres://ann:secret@h/db?lexical=fuzzy'), (e: Error) => /lexical must be/.test(e.message) && !e.message.includes('secret'));
    assert.throws(() => parseStoreSpec('mysql://x'), /use "local" or a postgres:\/\/ URL/);
    assert.throws(() => parseStoreSpec('local?vectors=f16'), /f32 or i8/);
  });
});
