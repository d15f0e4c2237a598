// The store setting chooses the store per request (issue 19 on the services of issue 18):
// IndexStores gives one object per setting (so IndexService keeps its open generation while the
// setting stays), and Embeddings reads and writes the node-vector cache of the store the current
// setting names, keeping the encoder when only the store changes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Embeddings } from '../../../src/core/app/embeddings';
import { IndexStores } from '../../../src/core/app/indexStores';
import type { Encoder } from '../../../src/core/encode/encoder';
import type { VectorCache } from '../../../src/core/encode/vectorCache';
import type { IndexStore } from '../../../src/core/index/indexStore';
import { LocalStore } from '../../../src/core/index/localStore';
import { PostgresStore } from '../../../src/core/index/postgresStore';
import { builtinModelDir } from '../encode/support/builtinModel';

describe('IndexStores', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-stores-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('one store object per setting: the default and "local" are one, i8 and a postgres URL are others', async () => {
    const stores = new IndexStores(dir);
    const local = stores.storeFor({ store: 'local' });
    assert.ok(local instanceof LocalStore);
    assert.equal(local.localDir, dir);
    assert.equal(stores.get(undefined), local);
    assert.equal(stores.get(' local '), local);
    const i8 = stores.get('local?vectors=i8');
    assert.notEqual(i8, local);
    assert.equal(stores.get('local?vectors=i8'), i8);
    // Opening a Postgres store connects lazily: nothing is reached until it is used.
    const pg = stores.get('postgres://canopy@127.0.0.1:1/canopy?schema=a');
    assert.ok(pg instanceof PostgresStore);
    assert.equal(stores.get('postgres://canopy@127.0.0.1:1/canopy?schema=a'), pg);
    assert.notEqual(stores.get('postgres://canopy@127.0.0.1:1/canopy?schema=b'), pg);
    await stores.close();
    // After close a setting opens a fresh store.
    assert.notEqual(stores.get('local'), local);
    await stores.close();
  });

  it('a bad setting is a bad-input error naming the store, without the password', () => {
    const stores = new IndexStores(dir);
    assert.throws(() => stores.get('mysql://x'), (err: Error & { code?: string }) => err.code === 'E_BAD_INPUT' && /unknown store/.test(err.message));
    assert.throws(
      () => stores.get('postgres://u:secret@h/db?lexical=grep'),
      (err: Error & { code?: string }) => err.code === 'E_BAD_INPUT' && /lexical/.test(err.message) && !err.message.includes('secret'),
    );
  });
});

/** A store whose node-vector cache records what is asked of it; nothing else is used here. */
function recordingStore(name: string, log: string[]): IndexStore {
  const cache = (encoder: Pick<Encoder, 'id' | 'dim'>): VectorCache => {
    const kept = new Map<string, Float32Array>();
    return {
      modelId: encoder.id,
      dim: encoder.dim,
      async getOrEncode(texts, enc, signal) {
        const missing = texts.filter((t) => !kept.has(t));
        if (missing.length > 0) (await enc.encode(missing, signal)).forEach((v, i) => kept.set(missing[i]!, v));
        log.push(`${name}: getOrEncode ${texts.length} (${missing.length} encoded)`);
        return texts.map((t) => kept.get(t)!);
      },
      async lookup(texts) {
        log.push(`${name}: lookup ${texts.length}`);
        return texts.map((t) => kept.get(t));
      },
      async save() {
        log.push(`${name}: save`);
      },
    };
  };
  return {
    kind: 'local',
    location: name,
    localDir: undefined,
    vectorCache: async (encoder: Pick<Encoder, 'id' | 'dim'>) => {
      log.push(`${name}: open cache`);
      return cache(encoder);
    },
  } as unknown as IndexStore;
}

describe('Embeddings follow the store setting', () => {
  it('the node-vector cache is the current store’s; the encoder is kept when only the store changes', async () => {
    const log: string[] = [];
    const a = recordingStore('a', log);
    const b = recordingStore('b', log);
    let current = a;
    const embeddings = new Embeddings({ store: () => current, encoder: () => ({ kind: 'builtin' }), builtinModelDir: builtinModelDir(), baseDir: tmpdir() });
    try {
      const first = await embeddings.load();
      const [va] = await embeddings.embedTexts(['ash trees on plot 3']);
      assert.deepEqual(await embeddings.cachedVectors(['ash trees on plot 3']), [va]);
      current = b;
      const second = await embeddings.load();
      assert.equal(second.encoder, first.encoder, 'the encoder is not loaded again');
      assert.notEqual(second.cache, first.cache);
      // Store b has never seen the text: a cache miss there, and an encoder call to fill it.
      assert.deepEqual(await embeddings.cachedVectors(['ash trees on plot 3']), [undefined]);
      await embeddings.embedTexts(['ash trees on plot 3']);
      assert.deepEqual(log, ['a: open cache', 'a: getOrEncode 1 (1 encoded)', 'a: lookup 1', 'a: save', 'b: open cache', 'b: lookup 1', 'b: getOrEncode 1 (1 encoded)']);
      // Back to a: its vectors are read from its own (new) handle, nothing mixed in from b.
      current = a;
      await embeddings.load();
      assert.equal(log.at(-2), 'b: save');
      assert.equal(log.at(-1), 'a: open cache');
    } finally {
      await embeddings.dispose();
    }
  });
});
