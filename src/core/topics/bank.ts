/**
 * The metadata bank (design §4, MCompassRAG §3.1): the topic model (centroids in the encoder's
 * space, labels) and, per chunk, its top-M topic distribution plus a compact int8 copy of its
 * vector. The vector copy is what lets the compass select bank entries for a query and compute
 * chunk-side features for *any* hybrid candidate (BM25-only ones too) without a get-by-id on
 * the VectorStore port; int8 with a per-row scale is a quarter of float32 and changes cosines by
 * well under 0.01.
 *
 * File format (little-endian): magic "CNPYTOPB" | u32 version | u32 header bytes | header JSON
 * (UTF-8, space-padded to a multiple of 4) | K×dim f32 centroids | N f32 row scales | N×M f32
 * topic weights | N×M u16 topic ids (padded to 4 bytes) | N×dim i8 vectors | 32-byte SHA-256
 * of everything before it. Written atomically (store/atomicFile.ts).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CanopyError, ErrorCodes } from '../errors';
import { writeFileAtomic } from '../store/atomicFile';
import type { TopicTerms } from './labels';

const MAGIC = Buffer.from('CNPYTOPB', 'ascii');
export const TOPIC_BANK_VERSION = 1;

/** The fitted topic model: K unit centroids of width dim, and what each topic is about. */
export interface TopicModel {
  k: number;
  dim: number;
  /** k × dim, row-major, unit rows. */
  centroids: Float32Array;
  labels: string[];
  terms: TopicTerms[];
  /** Softmax temperature used for chunk distributions. */
  temperature: number;
  seed: number;
  /** The encoder whose space the centroids live in (vectors of another encoder are meaningless here). */
  encoderId: string;
}

/** Bookkeeping for incremental updates (when to refit). */
export interface TopicFitStats {
  /** Chunks the model was fitted on. */
  fittedOn: number;
  /** Mean cosine of those chunks to their nearest centroid at fit time. */
  meanSimilarity: number;
  /** Chunks added or removed since the fit. */
  changedSinceFit: number;
  /** Running sum of nearest-centroid cosines of chunks added since the fit. */
  addedSimilaritySum: number;
  added: number;
}

export class TopicBank {
  private readonly row = new Map<string, number>();

  constructor(
    readonly model: TopicModel,
    /** Chunk (item) ids, one per entry. */
    readonly ids: string[],
    /** M: topics kept per entry. */
    readonly m: number,
    /** N × M topic ids, best first. */
    readonly topicIds: Uint16Array,
    /** N × M weights (sum to 1 per row). */
    readonly topicWeights: Float32Array,
    /** N × dim int8 vectors; value × scale ≈ the unit vector. */
    readonly vectors: Int8Array,
    readonly scales: Float32Array,
    readonly stats: TopicFitStats,
  ) {
    ids.forEach((id, i) => this.row.set(id, i));
  }

  get size(): number {
    return this.ids.length;
  }

  get dim(): number {
    return this.model.dim;
  }

  /** Entry index of a chunk id, or undefined when the chunk is not in the bank. */
  indexOf(id: string): number | undefined {
    return this.row.get(id);
  }

  /** Cosine (dot product of unit vectors, dequantised) of `query` with entry `i`. */
  similarity(query: ArrayLike<number>, i: number): number {
    const dim = this.model.dim;
    const off = i * dim;
    let s = 0;
    for (let j = 0; j < dim; j++) s += (query[j] as number) * (this.vectors[off + j] as number);
    return s * (this.scales[i] as number);
  }

  /**
   * `similarity` for every entry at once (the compass's selection scan): one pass over the int8
   * rows with the query copied into a Float32Array, faster than a call per entry. The same values
   * up to float rounding (four partial sums).
   */
  similarities(query: ArrayLike<number>): Float64Array {
    const dim = this.model.dim;
    const n = this.ids.length;
    const q = query instanceof Float32Array ? query : Float32Array.from(query);
    const v = this.vectors;
    const out = new Float64Array(n);
    const tail = dim & ~3;
    for (let i = 0, off = 0; i < n; i++, off += dim) {
      // Four running sums (unrolled): the loop the selection spends its time in.
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let j = 0;
      for (; j < tail; j += 4) {
        s0 += q[j]! * v[off + j]!;
        s1 += q[j + 1]! * v[off + j + 1]!;
        s2 += q[j + 2]! * v[off + j + 2]!;
        s3 += q[j + 3]! * v[off + j + 3]!;
      }
      for (; j < dim; j++) s0 += q[j]! * v[off + j]!;
      out[i] = (s0 + s1 + s2 + s3) * this.scales[i]!;
    }
    return out;
  }

  /** The dequantised vector of entry `i`. */
  vector(i: number): Float32Array {
    const dim = this.model.dim;
    const out = new Float32Array(dim);
    const scale = this.scales[i] as number;
    for (let j = 0; j < dim; j++) out[j] = (this.vectors[i * dim + j] as number) * scale;
    return out;
  }

  /** Entry `i`'s sparse topic distribution. */
  distribution(i: number): Array<{ topic: number; weight: number }> {
    const out: Array<{ topic: number; weight: number }> = [];
    for (let t = 0; t < this.m; t++) {
      const w = this.topicWeights[i * this.m + t] as number;
      if (w > 0) out.push({ topic: this.topicIds[i * this.m + t] as number, weight: w });
    }
    return out;
  }

  async save(file: string): Promise<void> {
    await writeFileAtomic(file, this.toBytes());
  }

  static async load(file: string): Promise<TopicBank> {
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch (err) {
      throw new CanopyError(ErrorCodes.notFound, `no topic bank at ${file} (${(err as Error).message})`, { cause: err });
    }
    return TopicBank.fromBytes(buf, file);
  }

  toBytes(): Buffer {
    const { model } = this;
    const n = this.size;
    const header = Buffer.from(
      JSON.stringify({
        k: model.k,
        dim: model.dim,
        m: this.m,
        count: n,
        ids: this.ids,
        labels: model.labels,
        terms: model.terms,
        temperature: model.temperature,
        seed: model.seed,
        encoderId: model.encoderId,
        stats: this.stats,
      }),
      'utf8',
    );
    const headerLen = pad4(header.length);
    const idsLen = pad4(n * this.m * 2);
    const parts = [
      MAGIC,
      u32(TOPIC_BANK_VERSION),
      u32(headerLen),
      Buffer.concat([header, Buffer.alloc(headerLen - header.length, 0x20)]),
      bytesOf(model.centroids),
      bytesOf(this.scales),
      bytesOf(this.topicWeights),
      Buffer.concat([bytesOf(this.topicIds), Buffer.alloc(idsLen - n * this.m * 2)]),
      bytesOf(this.vectors),
    ];
    const body = Buffer.concat(parts);
    return Buffer.concat([body, createHash('sha256').update(body).digest()]);
  }

  static fromBytes(buf: Buffer, name = 'topic bank'): TopicBank {
    const corrupt = (why: string): CanopyError => new CanopyError(ErrorCodes.indexCorrupt, `${name} is unusable: ${why}; refit the topics`);
    if (buf.length < 48 || !buf.subarray(0, 8).equals(MAGIC)) throw corrupt('not a topic bank file');
    const version = buf.readUInt32LE(8);
    if (version !== TOPIC_BANK_VERSION) throw corrupt(`format version ${version}, expected ${TOPIC_BANK_VERSION}`);
    const checksum = createHash('sha256').update(buf.subarray(0, buf.length - 32)).digest();
    if (!checksum.equals(buf.subarray(buf.length - 32))) throw corrupt('checksum mismatch (damaged file)');
    const headerLen = buf.readUInt32LE(12);
    const h = JSON.parse(buf.toString('utf8', 16, 16 + headerLen)) as {
      k: number;
      dim: number;
      m: number;
      count: number;
      ids: string[];
      labels: string[];
      terms: TopicTerms[];
      temperature: number;
      seed: number;
      encoderId: string;
      stats: TopicFitStats;
    };
    const { k, dim, m, count: n } = h;
    const expected = 16 + headerLen + k * dim * 4 + n * 4 + n * m * 4 + pad4(n * m * 2) + n * dim + 32;
    if (buf.length !== expected || h.ids.length !== n) throw corrupt(`size ${buf.length} bytes, expected ${expected}`);
    let off = 16 + headerLen;
    // Copy into fresh, aligned buffers: a Buffer slice may sit at any byte offset.
    const take = (bytes: number): ArrayBuffer => {
      const out = new Uint8Array(bytes);
      out.set(buf.subarray(off, off + bytes));
      off += bytes;
      return out.buffer;
    };
    const centroids = new Float32Array(take(k * dim * 4));
    const scales = new Float32Array(take(n * 4));
    const weights = new Float32Array(take(n * m * 4));
    const topicIds = new Uint16Array(take(pad4(n * m * 2))).subarray(0, n * m);
    const vectors = new Int8Array(take(n * dim));
    const model: TopicModel = { k, dim, centroids, labels: h.labels, terms: h.terms, temperature: h.temperature, seed: h.seed, encoderId: h.encoderId };
    return new TopicBank(model, h.ids, m, topicIds, weights, vectors, scales, h.stats);
  }
}

/** int8 quantisation of a unit vector with one scale per row (max |x| maps to 127). */
export function quantize(v: ArrayLike<number>): { q: Int8Array; scale: number } {
  let max = 0;
  for (let j = 0; j < v.length; j++) max = Math.max(max, Math.abs(v[j] as number));
  const scale = max > 0 ? max / 127 : 1;
  const q = new Int8Array(v.length);
  for (let j = 0; j < v.length; j++) q[j] = Math.round((v[j] as number) / scale);
  return { q, scale };
}

function pad4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v, 0);
  return b;
}

function bytesOf(a: Float32Array | Uint16Array | Int8Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}
