// The embedding cache: misses only reach the encoder, persistence round trip, and damaged or
// foreign files discarded with a logged message instead of a crash.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { cacheFileName, contentKey, EmbeddingCache } from '../../../src/core/encode/cache';
import { type Encoder, l2NormalizeInPlace } from '../../../src/core/encode/encoder';
import type { Logger, LogLevel } from '../../../src/core/ports';

/** A deterministic stand-in encoder that records every text it is asked to encode. */
class CountingEncoder implements Encoder {
  readonly maxPieces = 128;
  readonly calls: string[][] = [];
  constructor(
    readonly id = 'fake-encoder@1',
    readonly dim = 6,
  ) {}
  async encode(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    return texts.map((t) => {
      const h = createHash('sha256').update(t.replace(/\s+/g, ' ').trim()).digest();
      return l2NormalizeInPlace(Float32Array.from({ length: this.dim }, (_, i) => (h[i] as number) - 128));
    });
  }
  async dispose(): Promise<void> {}
}

function capture(): Logger & { lines: { level: LogLevel; message: string }[] } {
  const lines: { level: LogLevel; message: string }[] = [];
  return { lines, log: (level, message) => lines.push({ level, message }) };
}

describe('embedding cache', () => {
  const dirs: string[] = [];
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-cache-'));
    dirs.push(dir);
  });
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('sends only misses to the encoder, once per distinct text', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    const first = await cache.getOrEncode(['alpha', 'beta', 'alpha'], enc);
    assert.deepEqual(enc.calls, [['alpha', 'beta']]);
    assert.equal(first[0], first[2]);
    const second = await cache.getOrEncode(['beta', 'gamma', 'alpha'], enc);
    assert.deepEqual(enc.calls, [['alpha', 'beta'], ['gamma']]);
    assert.equal(second[0], first[1]);
    assert.equal(second[2], first[0]);
    await cache.getOrEncode(['alpha', 'gamma'], enc);
    assert.equal(enc.calls.length, 2, 'all hits: the encoder is not called');
    assert.equal(cache.size, 3);
  });

  it('keys on the normalised text, so whitespace-only differences share a vector', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    await cache.getOrEncode(['The cat  sat.'], enc);
    await cache.getOrEncode(['  The cat\nsat. '], enc);
    assert.equal(enc.calls.length, 1);
    assert.equal(contentKey('a  b'), contentKey('a b'));
    assert.notEqual(contentKey('a b'), contentKey('a c'));
  });

  it('round-trips through its file, bit for bit', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    const texts = Array.from({ length: 50 }, (_, i) => `text number ${i}`);
    const vectors = await cache.getOrEncode(texts, enc);
    await cache.save();
    assert.deepEqual(readdirSync(dir), [cacheFileName(enc.id)], 'no temp files left');
    const enc2 = new CountingEncoder();
    const reopened = await EmbeddingCache.open({ dir, encoder: enc2 });
    assert.equal(reopened.size, 50);
    const again = await reopened.getOrEncode(texts, enc2);
    assert.equal(enc2.calls.length, 0);
    again.forEach((v, i) => assert.deepEqual([...v], [...(vectors[i] as Float32Array)]));
    assert.deepEqual([...(reopened.get('text number 7') as Float32Array)], [...(vectors[7] as Float32Array)]);
  });

  it('reads scattered, repeated and far-apart rows from its file as the vectors stored under their texts', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    // More rows than one read takes, so lookups span several runs with gaps inside and between them.
    const texts = Array.from({ length: 1500 }, (_, i) => `row text ${i}`);
    const vectors = await cache.getOrEncode(texts, enc);
    await cache.save();
    const enc2 = new CountingEncoder();
    const reopened = await EmbeddingCache.open({ dir, encoder: enc2 });
    const picks = [1499, 3, 4, 4, 9, 700, 15, 16, 17, 1200, 0, 511, 512, 513, 1024, 3];
    const got = await reopened.getOrEncode(
      picks.map((i) => texts[i]!),
      enc2,
    );
    assert.equal(enc2.calls.length, 0, 'all read from the file');
    picks.forEach((t, j) => assert.deepEqual([...got[j]!], [...vectors[t]!], `row ${t}`));
    assert.equal(got[2], got[3], 'a text asked for twice gets one vector');
    got[0]![0] = 42;
    assert.notEqual(got[1]![0], 42);
    assert.deepEqual([...(await reopened.getOrEncode([texts[1499]!], enc2))[0]!], [...vectors[1499]!], 'a caller changing a vector does not change the cache');
  });

  it('keeps models apart: another encoder id gets its own file', async () => {
    const a = new CountingEncoder('model-a');
    const b = new CountingEncoder('model-b');
    const ca = await EmbeddingCache.open({ dir, encoder: a });
    await ca.getOrEncode(['shared text'], a);
    await ca.save();
    const cb = await EmbeddingCache.open({ dir, encoder: b });
    assert.equal(cb.size, 0);
    await cb.getOrEncode(['shared text'], b);
    assert.equal(b.calls.length, 1);
    await assert.rejects(ca.getOrEncode(['x'], b), /model-a/);
  });

  for (const [what, damage] of [
    ['a flipped byte', (buf: Buffer) => ((buf[buf.length - 100] as number) ^= 0x55, buf)],
    ['a truncated file', (buf: Buffer) => buf.subarray(0, buf.length - 7)],
    ['a foreign file', () => Buffer.from('hello, not a cache')],
    ['a future format version', (buf: Buffer) => (buf.writeUInt32LE(99, 8), buf)],
  ] as const) {
    it(`discards ${what} with a logged warning and starts empty`, async () => {
      const enc = new CountingEncoder();
      const cache = await EmbeddingCache.open({ dir, encoder: enc });
      await cache.getOrEncode(['one', 'two'], enc);
      await cache.save();
      const file = join(dir, cacheFileName(enc.id));
      writeFileSync(file, damage(readFileSync(file)));
      const logger = capture();
      const reopened = await EmbeddingCache.open({ dir, encoder: enc, logger });
      assert.equal(reopened.size, 0);
      assert.equal(logger.lines.length, 1);
      assert.equal(logger.lines[0]?.level, 'warn');
      assert.match(logger.lines[0]?.message ?? '', /Discarded embedding cache/);
      // Usable afterwards, and the next save replaces the bad file with a good one.
      await reopened.getOrEncode(['one'], enc);
      await reopened.save();
      const logger2 = capture();
      const third = await EmbeddingCache.open({ dir, encoder: enc, logger: logger2 });
      assert.equal(third.size, 1);
      assert.equal(logger2.lines.length, 0);
    });
  }

  it('saves incrementally: a re-save writes only the added vectors, as a segment beside the main file', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    const texts = Array.from({ length: 40 }, (_, i) => `sentence ${i}`);
    await cache.getOrEncode(texts, enc);
    await cache.save();
    const main = join(dir, cacheFileName(enc.id));
    const mainBytes = readFileSync(main);
    await cache.getOrEncode(['one new sentence', 'sentence 3'], enc);
    await cache.save();
    assert.deepEqual(readFileSync(main), mainBytes, 'the main file is not rewritten');
    const segments = await cache.segmentFiles();
    assert.equal(segments.length, 1);
    // Header (56 + id, padded) + one 32-byte key + one 6-d vector + checksum.
    const idBytes = Math.ceil((56 + Buffer.byteLength(enc.id)) / 4) * 4;
    assert.equal(readFileSync(segments[0]!).length, idBytes + 32 + 6 * 4 + 32, 'the segment holds the one new vector');
    assert.ok(!readdirSync(dir).some((f) => f.includes('.tmp-')), 'no temp files left');

    const enc2 = new CountingEncoder();
    const reopened = await EmbeddingCache.open({ dir, encoder: enc2 });
    assert.equal(reopened.size, 41);
    await reopened.getOrEncode([...texts, 'one new sentence'], enc2);
    assert.equal(enc2.calls.length, 0, 'everything came back from the main file and the segment');
    assert.deepEqual([...reopened.get('one new sentence')!], [...cache.get('one new sentence')!]);
  });

  it('compacts the segments into the main file once they hold half as many entries', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    await cache.getOrEncode(Array.from({ length: 20 }, (_, i) => `base ${i}`), enc);
    await cache.save();
    for (let round = 0; round < 3; round++) {
      await cache.getOrEncode(Array.from({ length: 3 }, (_, i) => `round ${round} text ${i}`), enc);
      await cache.save();
    }
    assert.equal((await cache.segmentFiles()).length, 3, '9 added entries: still under half of 20');
    await cache.getOrEncode(['a', 'b'], enc);
    await cache.save(); // 11 > 10: compaction
    assert.deepEqual(readdirSync(dir), [cacheFileName(enc.id)], 'one main file, the segments removed');
    const reopened = await EmbeddingCache.open({ dir, encoder: new CountingEncoder() });
    assert.equal(reopened.size, 31);
  });

  it('discards a damaged segment with a warning, keeps the rest, and replaces it at the next save', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    await cache.getOrEncode(Array.from({ length: 20 }, (_, i) => `base ${i}`), enc);
    await cache.save();
    await cache.getOrEncode(['kept segment'], enc);
    await cache.save();
    await cache.getOrEncode(['damaged segment'], enc);
    await cache.save();
    const segments = await cache.segmentFiles();
    assert.equal(segments.length, 2);
    const victim = segments.find((f) => readFileSync(f).includes(Buffer.from(contentKey('damaged segment'), 'hex')))!;
    const bytes = readFileSync(victim);
    bytes[bytes.length - 40] = bytes[bytes.length - 40]! ^ 0x55;
    writeFileSync(victim, bytes);
    const logger = capture();
    const reopened = await EmbeddingCache.open({ dir, encoder: enc, logger });
    assert.equal(reopened.size, 21, 'the main file and the good segment are kept');
    assert.ok(reopened.get('kept segment'));
    assert.equal(reopened.get('damaged segment'), undefined);
    assert.equal(logger.lines.length, 1);
    assert.match(logger.lines[0]!.message, /Discarded embedding cache .*\.seg-.*checksum/);
    await reopened.save(); // nothing new, but the bad segment forces a compaction
    assert.deepEqual(readdirSync(dir), [cacheFileName(enc.id)]);
    const clean = capture();
    assert.equal((await EmbeddingCache.open({ dir, encoder: enc, logger: clean })).size, 21);
    assert.equal(clean.lines.length, 0);
  });

  it('reads a format-1 file (whole-file checksum) and rewrites it in format 2 at the next save', async () => {
    const enc = new CountingEncoder();
    const texts = ['first text', 'second text'];
    const vectors = await enc.encode(texts);
    // Format 1: header 24 + id (padded) | keys | vectors | SHA-256 of everything before.
    const id = Buffer.from(enc.id, 'utf8');
    const padded = Math.ceil((24 + id.length) / 4) * 4;
    const body = Buffer.alloc(padded + 2 * 32 + 2 * enc.dim * 4);
    body.write('CNPYEMBC', 0, 'ascii');
    body.writeUInt32LE(1, 8);
    body.writeUInt32LE(enc.dim, 12);
    body.writeUInt32LE(2, 16);
    body.writeUInt32LE(id.length, 20);
    id.copy(body, 24);
    texts.forEach((t, i) => body.write(contentKey(t), padded + i * 32, 'hex'));
    vectors.forEach((v, i) => Buffer.from(v.buffer).copy(body, padded + 64 + i * enc.dim * 4));
    writeFileSync(join(dir, cacheFileName(enc.id)), Buffer.concat([body, createHash('sha256').update(body).digest()]));
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    assert.equal(cache.size, 2);
    assert.deepEqual([...cache.get('second text')!], [...vectors[1]!]);
    await cache.save(); // nothing new, but format 1 is rewritten
    const bytes = readFileSync(join(dir, cacheFileName(enc.id)));
    assert.equal(bytes.readUInt32LE(8), 2);
    const reopened = await EmbeddingCache.open({ dir, encoder: new CountingEncoder() });
    assert.deepEqual([...reopened.get('first text')!], [...vectors[0]!]);
  });

  it('holds keys, not vectors: a vector is read from its file when asked for, and a file removed under it becomes a miss', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    await cache.getOrEncode(['kept on disk'], enc);
    await cache.save();
    const reader = await EmbeddingCache.open({ dir, encoder: enc });
    // Another process compacts the cache away (here: the file is simply removed).
    rmSync(join(dir, cacheFileName(enc.id)));
    assert.equal(reader.get('kept on disk'), undefined, 'read on demand, so a removed file shows');
    const calls = enc.calls.length;
    const [v] = await reader.getOrEncode(['kept on disk'], enc);
    assert.equal(enc.calls.length, calls + 1, 'encoded again');
    assert.equal(v!.length, enc.dim);
    await reader.save();
    const again = await EmbeddingCache.open({ dir, encoder: new CountingEncoder() });
    assert.ok(again.get('kept on disk'));
  });

  it('does not write when nothing changed', async () => {
    const enc = new CountingEncoder();
    const cache = await EmbeddingCache.open({ dir, encoder: enc });
    await cache.save();
    assert.deepEqual(readdirSync(dir), []);
  });
});
