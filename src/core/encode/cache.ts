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
 * Saved atomically (temp file + rename). A file that fails any check (magic, version, id, dim,
 * size, checksum) is discarded with a logged warning and the cache starts empty; it is never
 * a crash. The cache only grows; delete the folder to reset it.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import { type Logger, silentLogger } from '../ports';
import { type Encoder, normalizeText } from './encoder';

const MAGIC = Buffer.from('CNPYEMBC', 'ascii');
export const CACHE_FORMAT_VERSION = 1;
const KEY_BYTES = 32;
const HEADER_FIXED = 24;

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
  private dirty = false;
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
      });
      this.dirty = true;
    }
    return keys.map((k) => this.vectors.get(k) as Float32Array);
  }

  /** Write the cache file if anything changed (temp file + rename, so readers never see half a file). */
  async save(): Promise<void> {
    if (!this.dirty) return;
    const idBytes = Buffer.from(this.modelId, 'utf8');
    const headerLen = HEADER_FIXED + idBytes.length;
    const padded = Math.ceil(headerLen / 4) * 4;
    const count = this.vectors.size;
    const body = Buffer.alloc(padded + count * KEY_BYTES + count * this.dim * 4);
    MAGIC.copy(body, 0);
    body.writeUInt32LE(CACHE_FORMAT_VERSION, 8);
    body.writeUInt32LE(this.dim, 12);
    body.writeUInt32LE(count, 16);
    body.writeUInt32LE(idBytes.length, 20);
    idBytes.copy(body, HEADER_FIXED);
    let k = padded;
    let v = padded + count * KEY_BYTES;
    for (const [key, vec] of this.vectors) {
      body.write(key, k, 'hex');
      k += KEY_BYTES;
      Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).copy(body, v);
      v += this.dim * 4;
    }
    const checksum = createHash('sha256').update(body).digest();
    await mkdir(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp-${process.pid}-${this.saves++}`;
    try {
      await writeFile(tmp, Buffer.concat([body, checksum]));
      await rename(tmp, this.file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    this.dirty = false;
  }

  private async load(): Promise<void> {
    let buf: Buffer;
    try {
      buf = await readFile(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.log('warn', `Embedding cache ${this.file} unreadable (${(err as Error).message}); starting empty`);
      return;
    }
    const problem = this.parse(buf);
    if (problem) {
      this.vectors.clear();
      this.logger.log('warn', `Discarded embedding cache ${this.file}: ${problem}. It will be rebuilt.`);
      // Rewrite at the next save even if nothing new is added, replacing the bad file.
      this.dirty = true;
    }
  }

  /** Fills `vectors` from a file's bytes; returns why the file is unusable, or undefined. */
  private parse(buf: Buffer): string | undefined {
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
    for (let i = 0; i < count; i++) {
      const key = buf.toString('hex', padded + i * KEY_BYTES, padded + (i + 1) * KEY_BYTES);
      this.vectors.set(key, all.subarray(i * dim, (i + 1) * dim));
    }
    return undefined;
  }
}
