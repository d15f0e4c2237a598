/**
 * Embedding cache, the local store's node-vector storage (VectorCache): a text is embedded once
 * per model. Entries are keyed by the SHA-256 of the text after `normalizeText` (the form every
 * encoder actually reads), inside files per encoder id, so a different model — or a changed
 * tokeniser or long-region recipe, which change the id — never sees another's vectors.
 * `getOrEncode` sends only misses to the encoder.
 *
 * Lean by design: only the keys are held in memory (32 bytes each, in an open-addressing table);
 * a vector is read from its file when asked for, so a process holds the vectors a question
 * touches, not the corpus's (at 224,639 nodes the old all-in-memory cache alone held ~0.5 GB).
 *
 * File format 2 (little-endian), one main file per encoder id plus segments:
 *   magic "CNPYEMBC" | u32 version (2) | u32 dim | u32 count | u32 idBytes |
 *   32-byte SHA-256 of the vector region | id (UTF-8), zero-padded to a multiple of 4 |
 *   count x 32-byte SHA-256 keys | count x dim float32 | 32-byte SHA-256 of everything before the vectors.
 * Opening checks the header, the size and the key checksum; the vector region's checksum is
 * checked at open when the region is at most 64 MiB, otherwise when the file is next compacted
 * (which reads it whole anyway), so opening a large cache reads its keys only. Files of format 1
 * (one checksum over everything) are read too, fully checked, and rewritten at the next save.
 *
 * Saves are incremental: the vectors added since the last save go to a new *segment* file beside
 * the main one (`<file>.seg-<unique>`, the same format), so re-indexing one edited file writes a
 * few kilobytes. A save compacts — rewrites the main file with everything and removes the
 * segments it knows — once the segments hold more than half as many entries as the main file,
 * or number `MAX_SEGMENTS`. A file that fails a check is discarded with a logged warning (the
 * rest is kept, and the next save compacts); it is never a crash. A file removed under a reader
 * (another process compacted) turns its entries into misses, which are encoded again. A crash
 * between writing the main file and removing the segments leaves duplicate entries, which are
 * harmless. The cache only grows; delete the folder to reset it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import { type Logger, silentLogger } from '../ports';
import { type Encoder, normalizeText } from './encoder';
import type { VectorCache } from './vectorCache';

const MAGIC = Buffer.from('CNPYEMBC', 'ascii');
export const CACHE_FORMAT_VERSION = 2;

/** Rows read in one go when looking vectors up: runs of wanted rows at most this far apart… */
const RUN_GAP = 4;
/** …and at most this many rows (1 MiB of 512-d vectors) per read. */
const RUN_ROWS = 512;
const KEY_BYTES = 32;
const HEADER_V1 = 24;
const HEADER_V2 = 56;
/** Segments beyond this many are compacted into the main file at the next save. */
const MAX_SEGMENTS = 16;
/** Vector regions up to this size are checksummed when opened; larger ones when compacted. */
const VERIFY_AT_OPEN_BYTES = 64 * 1024 * 1024;
/** Vectors read and written per step when a file is streamed (compaction, checks). */
const STREAM_VECTORS = 4096;

export interface EmbeddingCacheOptions {
  /** Folder for cache files (e.g. `<workspace>/.canopy/embeddings`). */
  dir: string;
  /** The encoder whose vectors this cache holds (its id and width). */
  encoder: Pick<Encoder, 'id' | 'dim'>;
  logger?: Logger;
}

/** The cache key of a text: SHA-256 (hex) of its normalised form. */
export function contentKey(text: string): string {
  return keyBytes(text).toString('hex');
}

function keyBytes(text: string): Buffer {
  return createHash('sha256').update(normalizeText(text), 'utf8').digest();
}

/** A file name for an encoder id: readable part plus a hash, so distinct ids never share a file. */
export function cacheFileName(modelId: string): string {
  const safe = modelId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  return `${safe}-${createHash('sha256').update(modelId).digest('hex').slice(0, 10)}.emb`;
}

/** One file whose keys are in the table: where its vectors start, and its keys. */
interface Part {
  file: string;
  count: number;
  vectorsOffset: number;
  keys: Buffer;
  /** SHA-256 the vector region must have; undefined once checked (or for format 1, checked whole at open). */
  vectorHash: Buffer | undefined;
  /** The file vanished under this reader (another process compacted): its keys count as absent. */
  dead?: boolean;
}

/** Where one cached vector lives: part number and row. */
interface Location {
  part: number;
  row: number;
}

export class EmbeddingCache implements VectorCache {
  /** Vectors added since the last save, by hex key (they go into the next segment). */
  private pending = new Map<string, Float32Array>();
  /** The main file must be rewritten at the next save (it or a segment was unusable, or is format 1). */
  private rewrite = false;
  private parts: Part[] = [];
  private mainEntries = 0;
  /** Segment files known (read, written, or unreadable and due for removal) and their entries. */
  private segments: string[] = [];
  private segmentEntries = 0;
  /** Open-addressing table over every key on disk: slot → part (0xffff = empty) and row. */
  private slotPart = new Uint16Array(0);
  private slotRow = new Uint32Array(0);
  private tableCount = 0;
  private saves = 0;
  readonly modelId: string;
  readonly dim: number;
  readonly file: string;
  private readonly logger: Logger;

  private constructor(options: EmbeddingCacheOptions) {
    this.modelId = options.encoder.id;
    this.dim = options.encoder.dim;
    this.file = join(options.dir, cacheFileName(this.modelId));
    this.logger = options.logger ?? silentLogger;
  }

  /** Open (or start) the cache for `encoder` in `dir`, loading the keys an earlier save left. */
  static async open(options: EmbeddingCacheOptions): Promise<EmbeddingCache> {
    const cache = new EmbeddingCache(options);
    await cache.load();
    return cache;
  }

  /** Distinct texts with a vector. */
  get size(): number {
    let live = 0;
    for (let s = 0; s < this.slotPart.length; s++) if (this.slotPart[s] !== 0xffff && !this.parts[this.slotPart[s]!]!.dead) live++;
    // Additions are always keys the table does not (or no longer) locate.
    return live + this.pending.size;
  }

  /** The cached vector of `text`, if any (read from disk when not added in this session). */
  get(text: string): Float32Array | undefined {
    return this.lookupKeys([keyBytes(text)])[0];
  }

  async lookup(texts: readonly string[]): Promise<Array<Float32Array | undefined>> {
    return this.lookupKeys(texts.map(keyBytes));
  }

  /**
   * Vectors for `texts`, in order. Texts already cached (or repeated in this call) are not sent
   * to the encoder; the misses go in one `encode` call. Call `save()` to persist.
   */
  async getOrEncode(texts: readonly string[], encoder: Encoder, signal?: AbortSignal): Promise<Float32Array[]> {
    if (encoder.id !== this.modelId || encoder.dim !== this.dim) {
      throw new CanopyError(ErrorCodes.badInput, `Embedding cache for ${this.modelId} used with encoder ${encoder.id}`);
    }
    const keys = texts.map(keyBytes);
    const found = this.lookupKeys(keys);
    const missKeys: string[] = [];
    const missTexts: string[] = [];
    const seen = new Set<string>();
    keys.forEach((k, i) => {
      if (found[i]) return;
      const hex = k.toString('hex');
      if (!seen.has(hex)) {
        seen.add(hex);
        missKeys.push(hex);
        missTexts.push(texts[i] as string);
      }
    });
    if (missTexts.length > 0) {
      const fresh = await encoder.encode(missTexts, signal);
      if (fresh.length !== missTexts.length) throw new CanopyError(ErrorCodes.encoderFailed, `encoder returned ${fresh.length} vectors for ${missTexts.length} texts`);
      fresh.forEach((v, i) => {
        if (v.length !== this.dim) throw new CanopyError(ErrorCodes.encoderFailed, `encoder returned a ${v.length}-d vector, expected ${this.dim}`);
        this.pending.set(missKeys[i] as string, v);
      });
    }
    return keys.map((k, i) => found[i] ?? this.pending.get(k.toString('hex'))!);
  }

  /** Persist what changed: a new segment with the added vectors, or a compacted main file. */
  async save(): Promise<void> {
    if (this.pending.size === 0 && !this.rewrite) return;
    await mkdir(dirname(this.file), { recursive: true });
    const compact = this.rewrite || this.segments.length >= MAX_SEGMENTS || this.segmentEntries + this.pending.size > this.mainEntries / 2;
    if (compact) {
      await this.compact();
      return;
    }
    const segment = `${this.file}.seg-${Date.now().toString(36)}-${process.pid}-${randomBytes(4).toString('hex')}`;
    const added = [...this.pending].filter(([k]) => !this.locate(Buffer.from(k, 'hex')));
    const keys = Buffer.concat(added.map(([k]) => Buffer.from(k, 'hex')));
    const vectors = Buffer.alloc(added.length * this.dim * 4);
    added.forEach(([, v], i) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(vectors, i * this.dim * 4));
    const header = this.header(added.length, createHash('sha256').update(vectors).digest());
    const head = Buffer.concat([header, keys]);
    await this.writeAtomic(segment, [head, vectors, createHash('sha256').update(head).digest()]);
    this.addPart({ file: segment, count: added.length, vectorsOffset: head.length, keys, vectorHash: undefined });
    this.segments.push(segment);
    this.segmentEntries += added.length;
    this.pending.clear();
  }

  /** Segment files beside the main file, as they are on disk now (for tests and diagnostics). */
  async segmentFiles(): Promise<string[]> {
    const prefix = `${basename(this.file)}.seg-`;
    try {
      return (await readdir(dirname(this.file))).filter((f) => f.startsWith(prefix) && !f.includes('.tmp-')).map((f) => join(dirname(this.file), f));
    } catch {
      return [];
    }
  }

  // ---- the key table ----

  private locate(key: Buffer): Location | undefined {
    const mask = this.slotPart.length - 1;
    if (mask < 0) return undefined;
    for (let s = key.readUInt32LE(0) & mask; ; s = (s + 1) & mask) {
      const part = this.slotPart[s]!;
      if (part === 0xffff) return undefined;
      const row = this.slotRow[s]!;
      if (this.parts[part]!.keys.compare(key, 0, KEY_BYTES, row * KEY_BYTES, (row + 1) * KEY_BYTES) === 0) return this.parts[part]!.dead ? undefined : { part, row };
    }
  }

  private insert(part: number, row: number): void {
    if ((this.tableCount + 1) * 2 > this.slotPart.length) this.grow();
    const keys = this.parts[part]!.keys;
    const mask = this.slotPart.length - 1;
    for (let s = keys.readUInt32LE(row * KEY_BYTES) & mask; ; s = (s + 1) & mask) {
      const p = this.slotPart[s]!;
      if (p === 0xffff) {
        this.slotPart[s] = part;
        this.slotRow[s] = row;
        this.tableCount++;
        return;
      }
      // Already present (a duplicate left by a crash between compaction and segment removal),
      // unless it was in a file that vanished: then the new copy replaces it.
      if (this.parts[p]!.keys.compare(keys, row * KEY_BYTES, (row + 1) * KEY_BYTES, this.slotRow[s]! * KEY_BYTES, (this.slotRow[s]! + 1) * KEY_BYTES) === 0) {
        if (this.parts[p]!.dead) {
          this.slotPart[s] = part;
          this.slotRow[s] = row;
        }
        return;
      }
    }
  }

  private grow(): void {
    const oldPart = this.slotPart;
    const oldRow = this.slotRow;
    const size = Math.max(1024, oldPart.length * 2);
    this.slotPart = new Uint16Array(size).fill(0xffff);
    this.slotRow = new Uint32Array(size);
    this.tableCount = 0;
    for (let s = 0; s < oldPart.length; s++) if (oldPart[s] !== 0xffff) this.insert(oldPart[s]!, oldRow[s]!);
  }

  private addPart(part: Part): number {
    if (this.parts.length >= 0xffff) throw new CanopyError(ErrorCodes.internal, `embedding cache ${this.file} has too many segment files`);
    const index = this.parts.length;
    this.parts.push(part);
    for (let row = 0; row < part.count; row++) this.insert(index, row);
    return index;
  }

  private resetTable(): void {
    this.parts = [];
    this.slotPart = new Uint16Array(0);
    this.slotRow = new Uint32Array(0);
    this.tableCount = 0;
  }

  /** Vectors for keys: this session's additions from memory, the rest read from their files. */
  private lookupKeys(keys: Buffer[]): Array<Float32Array | undefined> {
    const out: Array<Float32Array | undefined> = new Array(keys.length).fill(undefined);
    const byPart = new Map<number, Array<{ i: number; row: number }>>();
    keys.forEach((k, i) => {
      const mem = this.pending.size > 0 ? this.pending.get(k.toString('hex')) : undefined;
      if (mem) {
        out[i] = mem;
        return;
      }
      const at = this.locate(k);
      if (!at) return;
      let list = byPart.get(at.part);
      if (!list) byPart.set(at.part, (list = []));
      list.push({ i, row: at.row });
    });
    const bytes = this.dim * 4;
    for (const [p, list] of byPart) {
      const part = this.parts[p]!;
      let fd: number;
      try {
        fd = openSync(part.file, 'r');
      } catch {
        part.dead = true; // removed by another process's compaction: misses, encoded again
        continue;
      }
      try {
        // Rows sorted and read in runs: a document's leaves were encoded together, so their rows
        // mostly lie side by side, and one read per run replaces one read per vector.
        const rows = [...new Set(list.map((x) => x.row))].sort((a, b) => a - b);
        const vectors = new Map<number, Float32Array>();
        for (let start = 0; start < rows.length; ) {
          let end = start + 1;
          while (end < rows.length && rows[end]! - rows[end - 1]! <= RUN_GAP && rows[end]! - rows[start]! < RUN_ROWS) end++;
          const first = rows[start]!;
          const span = rows[end - 1]! - first + 1;
          const run = new Uint8Array(span * bytes);
          const n = readSync(fd, run, 0, run.length, part.vectorsOffset + first * bytes);
          for (let j = start; j < end; j++) {
            const at = (rows[j]! - first) * bytes;
            if (at + bytes > n) continue;
            const v = new Float32Array(run.buffer.slice(at, at + bytes));
            if (v.every(Number.isFinite)) vectors.set(rows[j]!, v);
          }
          start = end;
        }
        for (const { i, row } of list) {
          const v = vectors.get(row);
          if (v) out[i] = v;
        }
      } finally {
        closeSync(fd);
      }
    }
    return out;
  }

  // ---- files ----

  private header(count: number, vectorHash: Buffer): Buffer {
    const idBytes = Buffer.from(this.modelId, 'utf8');
    const padded = Math.ceil((HEADER_V2 + idBytes.length) / 4) * 4;
    const h = Buffer.alloc(padded);
    MAGIC.copy(h, 0);
    h.writeUInt32LE(CACHE_FORMAT_VERSION, 8);
    h.writeUInt32LE(this.dim, 12);
    h.writeUInt32LE(count, 16);
    h.writeUInt32LE(idBytes.length, 20);
    vectorHash.copy(h, 24);
    idBytes.copy(h, HEADER_V2);
    return h;
  }

  private async writeAtomic(file: string, chunks: Buffer[]): Promise<void> {
    const tmp = `${file}.tmp-${process.pid}-${this.saves++}`;
    try {
      await writeFile(tmp, Buffer.concat(chunks));
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /**
   * Rewrites the main file with every entry (checking each file's vector region on the way; a
   * damaged one is left out with a warning) and removes the segments.
   */
  private async compact(): Promise<void> {
    const bytes = this.dim * 4;
    const good = new Set<number>();
    for (let p = 0; p < this.parts.length; p++) {
      if (this.parts[p]!.dead) continue;
      const problem = await this.checkVectors(this.parts[p]!);
      if (problem) this.logger.log('warn', `Discarded embedding cache ${this.parts[p]!.file}: ${problem}. Its vectors will be encoded again.`);
      else good.add(p);
    }
    // Entries in table order of their parts, then this session's additions.
    const rows: Location[] = [];
    for (let s = 0; s < this.slotPart.length; s++) if (this.slotPart[s] !== 0xffff && good.has(this.slotPart[s]!)) rows.push({ part: this.slotPart[s]!, row: this.slotRow[s]! });
    rows.sort((a, b) => a.part - b.part || a.row - b.row);
    const extra = [...this.pending].filter(([k]) => {
      const at = this.locate(Buffer.from(k, 'hex'));
      return !at || !good.has(at.part);
    });
    const count = rows.length + extra.length;
    const keys = Buffer.alloc(count * KEY_BYTES);
    rows.forEach((r, i) => this.parts[r.part]!.keys.copy(keys, i * KEY_BYTES, r.row * KEY_BYTES, (r.row + 1) * KEY_BYTES));
    extra.forEach(([k], i) => Buffer.from(k, 'hex').copy(keys, (rows.length + i) * KEY_BYTES));
    const tmp = `${this.file}.tmp-${process.pid}-${this.saves++}`;
    const headerLen = this.header(0, Buffer.alloc(32)).length;
    const handle = await open(tmp, 'w');
    const vectorHash = createHash('sha256');
    try {
      let at = headerLen + keys.length;
      await handle.write(keys, 0, keys.length, headerLen);
      const chunk = Buffer.alloc(STREAM_VECTORS * bytes);
      let fill = 0;
      const flush = async () => {
        if (fill === 0) return;
        vectorHash.update(chunk.subarray(0, fill));
        await handle.write(chunk, 0, fill, at);
        at += fill;
        fill = 0;
      };
      let fd: number | undefined;
      let fdPart = -1;
      try {
        for (const r of rows) {
          if (r.part !== fdPart) {
            if (fd !== undefined) closeSync(fd);
            fd = openSync(this.parts[r.part]!.file, 'r');
            fdPart = r.part;
          }
          const n = readSync(fd!, chunk, fill, bytes, this.parts[r.part]!.vectorsOffset + r.row * bytes);
          if (n !== bytes) throw new Error(`${this.parts[r.part]!.file} is shorter than its header says`);
          fill += bytes;
          if (fill === chunk.length) await flush();
        }
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
      for (const [, v] of extra) {
        Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(chunk, fill);
        fill += bytes;
        if (fill === chunk.length) await flush();
      }
      await flush();
      const header = this.header(count, vectorHash.digest());
      await handle.write(header, 0, header.length, 0);
      const trailer = createHash('sha256').update(header).update(keys).digest();
      await handle.write(trailer, 0, trailer.length, at);
      await handle.close();
      await rename(tmp, this.file);
    } catch (err) {
      await handle.close().catch(() => undefined);
      await rm(tmp, { force: true });
      throw err;
    }
    const old = this.segments;
    this.resetTable();
    this.addPart({ file: this.file, count, vectorsOffset: headerLen + keys.length, keys, vectorHash: undefined });
    this.mainEntries = count;
    this.segments = [];
    this.segmentEntries = 0;
    this.rewrite = false;
    this.pending.clear();
    await Promise.all(old.map((f) => rm(f, { force: true })));
  }

  /** Undefined when the part's vector region matches its checksum (or was already checked), else the problem. */
  private async checkVectors(part: Part): Promise<string | undefined> {
    if (!part.vectorHash) return undefined;
    const bytes = part.count * this.dim * 4;
    const hash = createHash('sha256');
    let handle;
    try {
      handle = await open(part.file, 'r');
    } catch (err) {
      return `unreadable (${(err as Error).message})`;
    }
    try {
      const chunk = Buffer.alloc(Math.min(bytes, STREAM_VECTORS * this.dim * 4) || 1);
      for (let done = 0; done < bytes; ) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, bytes - done), part.vectorsOffset + done);
        if (bytesRead === 0) return 'vector region is cut off';
        hash.update(chunk.subarray(0, bytesRead));
        done += bytesRead;
      }
    } finally {
      await handle.close();
    }
    if (!hash.digest().equals(part.vectorHash)) return 'checksum mismatch in the vectors (damaged file)';
    part.vectorHash = undefined;
    return undefined;
  }

  private async load(): Promise<void> {
    const main = await this.readPart(this.file);
    if (main !== undefined) this.mainEntries = this.parts[main]!.count;
    for (const segment of await this.segmentFiles()) {
      const p = await this.readPart(segment);
      // A segment that cannot be used is removed at the next compaction, as the used ones are.
      this.segments.push(segment);
      if (p !== undefined) this.segmentEntries += this.parts[p]!.count;
    }
  }

  /** Adds one file's keys to the table; returns its part number, or undefined (missing or discarded with a warning). */
  private async readPart(file: string): Promise<number | undefined> {
    const part = await this.readKeys(file).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return `unreadable (${(err as Error).message})`;
    });
    if (part === undefined) return undefined;
    if (typeof part === 'string') {
      this.logger.log('warn', `Discarded embedding cache ${file}: ${part}. It will be rebuilt.`);
      // Rewrite at the next save even if nothing new is added, replacing the bad file.
      this.rewrite = true;
      return undefined;
    }
    if (part.vectorHash && part.count * this.dim * 4 <= VERIFY_AT_OPEN_BYTES) {
      const problem = await this.checkVectors(part);
      if (problem) {
        this.logger.log('warn', `Discarded embedding cache ${file}: ${problem}. It will be rebuilt.`);
        this.rewrite = true;
        return undefined;
      }
    }
    return this.addPart(part);
  }

  /** A file's header and keys, or why the file is unusable. */
  private async readKeys(file: string): Promise<Part | string> {
    const size = (await stat(file)).size;
    const handle = await open(file, 'r');
    try {
      const read = async (offset: number, length: number): Promise<Buffer> => {
        const b = Buffer.alloc(length);
        const { bytesRead } = await handle.read(b, 0, length, offset);
        return b.subarray(0, bytesRead);
      };
      const fixed = await read(0, HEADER_V2);
      if (fixed.length < HEADER_V1 + 4) return 'file too short';
      if (!fixed.subarray(0, 8).equals(MAGIC)) return 'not an embedding cache file';
      const version = fixed.readUInt32LE(8);
      if (version !== 1 && version !== CACHE_FORMAT_VERSION) return `format version ${version}, expected ${CACHE_FORMAT_VERSION}`;
      const dim = fixed.readUInt32LE(12);
      const count = fixed.readUInt32LE(16);
      const idLen = fixed.readUInt32LE(20);
      const headerFixed = version === 1 ? HEADER_V1 : HEADER_V2;
      if (headerFixed + idLen > size) return 'header is cut off';
      const id = (await read(headerFixed, idLen)).toString('utf8');
      if (id !== this.modelId) return `it belongs to encoder ${id}`;
      if (dim !== this.dim) return `vectors are ${dim}-d, expected ${this.dim}`;
      const padded = Math.ceil((headerFixed + idLen) / 4) * 4;
      const expected = padded + count * KEY_BYTES + count * dim * 4 + 32;
      if (size !== expected) return `size ${size} bytes, expected ${expected} for ${count} entries`;
      const head = await read(0, padded + count * KEY_BYTES);
      const trailer = await read(size - 32, 32);
      const vectorsOffset = padded + count * KEY_BYTES;
      if (version === 1) {
        // Format 1 has one checksum over everything: check it whole, then rewrite in format 2 at the next save.
        const hash = createHash('sha256').update(head);
        const chunk = Buffer.alloc(STREAM_VECTORS * dim * 4 || 1);
        for (let at = vectorsOffset; at < size - 32; ) {
          const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - 32 - at), at);
          if (bytesRead === 0) return 'file is cut off';
          hash.update(chunk.subarray(0, bytesRead));
          at += bytesRead;
        }
        if (!hash.digest().equals(trailer)) return 'checksum mismatch (damaged file)';
        this.rewrite = true;
        return { file, count, vectorsOffset, keys: Buffer.from(head.subarray(padded)), vectorHash: undefined };
      }
      if (!createHash('sha256').update(head).digest().equals(trailer)) return 'checksum mismatch (damaged file)';
      return { file, count, vectorsOffset, keys: Buffer.from(head.subarray(padded)), vectorHash: Buffer.from(fixed.subarray(24, 56)) };
    } finally {
      await handle.close();
    }
  }
}
