/**
 * Embedding cache: a text is embedded once per model. Entries are keyed by the SHA-256 of the
 * text after `normalizeText` (the form every encoder actually reads), inside a file per
 * encoder id, so a different model — or a changed tokeniser or long-region recipe, which change
 * the id — never sees another's vectors. `getOrEncode` sends only misses to the encoder.
 *
 * File format (little-endian), one file per encoder id in the cache folder:
 *   magic "CNPYEMBC" | u32 version (1) | u32 dim | u32 count | u32 idBytes | id (UTF-8),
 *   zero-padded to a multiple of 4 | count x 32-byte SHA-256 keys | count x dim float32 |
 *   32-byte SHA-256 of everything before it.
 * Saved atomically (temp file + rename). Saves are incremental: the vectors added since the
 * last save go to a new *segment* file beside it (`<file>.seg-<unique>`, the same format), so
 * re-indexing one edited file writes a few kilobytes instead of the whole cache. A save
 * compacts — rewrites the main file with everything and removes the segments it knows — once
 * the segments hold more than half as many entries as the main file, or number
 * `maxSegments`. Opening reads the main file and every segment. A file that fails any check
 * (magic, version, id, dim, size, checksum) is discarded with a logged warning (the rest is
 * kept, and the next save compacts); it is never a crash. A crash between writing the main file
 * and removing the segments leaves duplicate entries, which are harmless. The cache only
 * grows; delete the folder to reset it.
 */
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import { type Logger, silentLogger } from '../ports';
import { type Encoder, normalizeText } from './encoder';

const MAGIC = Buffer.from('CNPYEMBC', 'ascii');
export const CACHE_FORMAT_VERSION = 1;
const KEY_BYTES = 32;
const HEADER_FIXED = 24;
/** Segments beyond this many are compacted into the main file at the next save. */
const MAX_SEGMENTS = 16;

export interface EmbeddingCacheOptions {
  /** Folder for cache files (e.g. `<workspace>/.canopy/embeddings`). */
  dir: string;
  /** The encoder whose vectors this cache holds (its id and width). */
  encoder: Pick<Encoder, 'id' | 'dim'>;
  logger?: Logger;
}

/** The cache key of a text: SHA-256 (hex) of its normalised form. */
export function contentKey(text: string): string {
  return createHash('sha256').update(normalizeText(text), 'utf8').digest('hex');
}

/** A file name for an encoder id: readable part plus a hash, so distinct ids never share a file. */
export function cacheFileName(modelId: string): string {
  const safe = modelId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  return `${safe}-${createHash('sha256').update(modelId).digest('hex').slice(0, 10)}.emb`;
}

export class EmbeddingCache {
  private readonly vectors = new Map<string, Float32Array>();
  /** Keys added since the last save (they go into the next segment). */
  private pending: string[] = [];
  /** The main file must be rewritten at the next save (it or a segment was unusable). */
  private rewrite = false;
  /** Entries in the main file, and the segment files (and their entries) written or read since it was. */
  private mainEntries = 0;
  private segments: string[] = [];
  private segmentEntries = 0;
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

  /** Open (or start) the cache for `encoder` in `dir`, loading what an earlier save left. */
  static async open(options: EmbeddingCacheOptions): Promise<EmbeddingCache> {
    const cache = new EmbeddingCache(options);
    await cache.load();
    return cache;
  }

  get size(): number {
    return this.vectors.size;
  }

  /** The cached vector of `text`, if any. Returned arrays are shared: do not modify them. */
  get(text: string): Float32Array | undefined {
    return this.vectors.get(contentKey(text));
  }

  /**
   * Vectors for `texts`, in order. Texts already cached (or repeated in this call) are not sent
   * to the encoder; the misses go in one `encode` call. Call `save()` to persist.
   */
  async getOrEncode(texts: readonly string[], encoder: Encoder, signal?: AbortSignal): Promise<Float32Array[]> {
    if (encoder.id !== this.modelId || encoder.dim !== this.dim) {
      throw new CanopyError(ErrorCodes.badInput, `Embedding cache for ${this.modelId} used with encoder ${encoder.id}`);
    }
    const keys = texts.map(contentKey);
    const missKeys: string[] = [];
    const missTexts: string[] = [];
    const seen = new Set<string>();
    keys.forEach((k, i) => {
      if (!this.vectors.has(k) && !seen.has(k)) {
        seen.add(k);
        missKeys.push(k);
        missTexts.push(texts[i] as string);
      }
    });
    if (missTexts.length > 0) {
      const fresh = await encoder.encode(missTexts, signal);
      if (fresh.length !== missTexts.length) throw new CanopyError(ErrorCodes.encoderFailed, `encoder returned ${fresh.length} vectors for ${missTexts.length} texts`);
      fresh.forEach((v, i) => {
        if (v.length !== this.dim) throw new CanopyError(ErrorCodes.encoderFailed, `encoder returned a ${v.length}-d vector, expected ${this.dim}`);
        this.vectors.set(missKeys[i] as string, v);
        this.pending.push(missKeys[i] as string);
      });
    }
    return keys.map((k) => this.vectors.get(k) as Float32Array);
  }

  /** Persist what changed: a new segment with the added vectors, or a compacted main file. */
  async save(): Promise<void> {
    if (this.pending.length === 0 && !this.rewrite) return;
    await mkdir(dirname(this.file), { recursive: true });
    const compact = this.rewrite || this.segments.length >= MAX_SEGMENTS || this.segmentEntries + this.pending.length > this.mainEntries / 2;
    if (compact) {
      await this.writeAtomic(this.file, this.vectors.entries(), this.vectors.size);
      const old = this.segments;
      this.mainEntries = this.vectors.size;
      this.segments = [];
      this.segmentEntries = 0;
      this.rewrite = false;
      this.pending = [];
      await Promise.all(old.map((f) => rm(f, { force: true })));
      return;
    }
    const segment = `${this.file}.seg-${Date.now().toString(36)}-${process.pid}-${randomBytes(4).toString('hex')}`;
    const keys = this.pending;
    await this.writeAtomic(
      segment,
      keys.map((k): [string, Float32Array] => [k, this.vectors.get(k)!]),
      keys.length,
    );
    this.segments.push(segment);
    this.segmentEntries += keys.length;
    this.pending = [];
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

  private async writeAtomic(file: string, entries: Iterable<[string, Float32Array]>, count: number): Promise<void> {
    const idBytes = Buffer.from(this.modelId, 'utf8');
    const headerLen = HEADER_FIXED + idBytes.length;
    const padded = Math.ceil(headerLen / 4) * 4;
    const body = Buffer.alloc(padded + count * KEY_BYTES + count * this.dim * 4);
    MAGIC.copy(body, 0);
    body.writeUInt32LE(CACHE_FORMAT_VERSION, 8);
    body.writeUInt32LE(this.dim, 12);
    body.writeUInt32LE(count, 16);
    body.writeUInt32LE(idBytes.length, 20);
    idBytes.copy(body, HEADER_FIXED);
    let k = padded;
    let v = padded + count * KEY_BYTES;
    for (const [key, vec] of entries) {
      body.write(key, k, 'hex');
      k += KEY_BYTES;
      Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).copy(body, v);
      v += this.dim * 4;
    }
    const checksum = createHash('sha256').update(body).digest();
    const tmp = `${file}.tmp-${process.pid}-${this.saves++}`;
    try {
      await writeFile(tmp, Buffer.concat([body, checksum]));
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  private async load(): Promise<void> {
    const main = await this.readPart(this.file);
    if (main !== undefined) this.mainEntries = main;
    for (const segment of await this.segmentFiles()) {
      const n = await this.readPart(segment);
      // A segment that cannot be used is removed at the next compaction, as the used ones are.
      this.segments.push(segment);
      if (n !== undefined) this.segmentEntries += n;
    }
  }

  /** Adds one file's entries; returns how many, or undefined (missing or discarded with a warning). */
  private async readPart(file: string): Promise<number | undefined> {
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.logger.log('warn', `Embedding cache ${file} unreadable (${(err as Error).message}); it will be rebuilt`);
        this.rewrite = true;
      }
      return undefined;
    }
    const parsed = this.parse(buf);
    if (typeof parsed === 'string') {
      this.logger.log('warn', `Discarded embedding cache ${file}: ${parsed}. It will be rebuilt.`);
      // Rewrite at the next save even if nothing new is added, replacing the bad file.
      this.rewrite = true;
      return undefined;
    }
    for (const [key, vec] of parsed) this.vectors.set(key, vec);
    return parsed.size;
  }

  /** A file's entries, or why the file is unusable. */
  private parse(buf: Buffer): Map<string, Float32Array> | string {
    if (buf.length < HEADER_FIXED + KEY_BYTES) return 'file too short';
    if (!buf.subarray(0, 8).equals(MAGIC)) return 'not an embedding cache file';
    const version = buf.readUInt32LE(8);
    if (version !== CACHE_FORMAT_VERSION) return `format version ${version}, expected ${CACHE_FORMAT_VERSION}`;
    const dim = buf.readUInt32LE(12);
    const count = buf.readUInt32LE(16);
    const idLen = buf.readUInt32LE(20);
    if (HEADER_FIXED + idLen > buf.length) return 'header is cut off';
    const id = buf.toString('utf8', HEADER_FIXED, HEADER_FIXED + idLen);
    if (id !== this.modelId) return `it belongs to encoder ${id}`;
    if (dim !== this.dim) return `vectors are ${dim}-d, expected ${this.dim}`;
    const padded = Math.ceil((HEADER_FIXED + idLen) / 4) * 4;
    const expected = padded + count * KEY_BYTES + count * dim * 4 + 32;
    if (buf.length !== expected) return `size ${buf.length} bytes, expected ${expected} for ${count} entries`;
    const checksum = createHash('sha256')
      .update(buf.subarray(0, buf.length - 32))
      .digest();
    if (!checksum.equals(buf.subarray(buf.length - 32))) return 'checksum mismatch (damaged file)';
    const vecStart = padded + count * KEY_BYTES;
    // One aligned copy of all vectors; entries are views into it.
    const all = new Float32Array(new Uint8Array(buf.subarray(vecStart, vecStart + count * dim * 4)).buffer);
    const out = new Map<string, Float32Array>();
    for (let i = 0; i < count; i++) {
      const key = buf.toString('hex', padded + i * KEY_BYTES, padded + (i + 1) * KEY_BYTES);
      out.set(key, all.subarray(i * dim, (i + 1) * dim));
    }
    return out;
  }
}
