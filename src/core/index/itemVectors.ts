/**
 * Item vectors of one generation of the local store, in one binary file read without parsing
 * JSON, searched exactly (every item scored; no approximate index to build or tune).
 *
 * Two encodings:
 *  - `f32`: the unit vectors themselves, held in one Float32Array — 2 KiB per 512-d item;
 *  - `i8`: per-item symmetric int8 codes plus one scale each, held in memory (a quarter of the
 *    size); the search scores every item on the codes and rescores the best few times k with the
 *    exact float32 vectors, read from the file on demand.
 *
 * File (little-endian): magic "CNPYVECS" | u32 version | u32 dim | u32 count | u32 encoding
 * (0 f32, 1 i8) | u32 bytes of the modality-name JSON | u32 bytes of the ids | names | id offsets
 * (u32 × count+1) | ids (UTF-8) | modality codes (u8 × count) | [i8: scales (f32 × count) | codes
 * (i8 × count·dim)] | float32 vectors | SHA-256 of the head (everything before the float32
 * vectors) | SHA-256 of the float32 vectors. Sections start on 8-byte boundaries.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { TopK } from './bm25';

export type VectorEncoding = 'f32' | 'i8';

export interface ItemVector {
  id: string;
  modality: string;
  vector: Float32Array;
}

export interface VectorHit {
  id: string;
  score: number;
}

const MAGIC = Buffer.from('CNPYVECS', 'ascii');
const VERSION = 1;
const HEADER = 32;
/** int8 search: how many candidates per requested hit are rescored exactly. */
const RESCORE_FACTOR = 4;

const pad8 = (n: number) => (8 - (n % 8)) % 8;

function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  if (norm === 0 || Math.abs(norm - 1) < 1e-6) return v;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

/** The whole file for `items` (vectors normalised to unit length), as chunks to write in order. */
export function encodeItemVectors(items: readonly ItemVector[], dim: number, encoding: VectorEncoding): Buffer[] {
  const names = [...new Set(items.map((i) => i.modality))].sort();
  if (names.length > 255) throw new Error('more than 255 modalities');
  const codeOf = new Map(names.map((n, i) => [n, i]));
  const nameBytes = Buffer.from(JSON.stringify(names), 'utf8');
  const idChunks = items.map((i) => Buffer.from(i.id, 'utf8'));
  const idOffsets = new Uint32Array(items.length + 1);
  idChunks.forEach((c, i) => (idOffsets[i + 1] = idOffsets[i]! + c.length));
  const count = items.length;
  const parts: Buffer[] = [];
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(VERSION, 8);
  header.writeUInt32LE(dim, 12);
  header.writeUInt32LE(count, 16);
  header.writeUInt32LE(encoding === 'f32' ? 0 : 1, 20);
  header.writeUInt32LE(nameBytes.length, 24);
  header.writeUInt32LE(idOffsets[count]!, 28);
  const section = (b: Buffer) => {
    parts.push(b);
    if (pad8(b.length)) parts.push(Buffer.alloc(pad8(b.length)));
  };
  parts.push(header);
  section(nameBytes);
  section(Buffer.from(idOffsets.buffer));
  section(Buffer.concat(idChunks));
  section(Buffer.from(Uint8Array.from(items, (i) => codeOf.get(i.modality)!)));
  const vectors = new Float32Array(count * dim);
  items.forEach((item, i) => {
    if (item.vector.length !== dim) throw new Error(`item ${item.id} has a ${item.vector.length}-d vector, expected ${dim}`);
    vectors.set(unit(item.vector), i * dim);
  });
  if (encoding === 'i8') {
    const scales = new Float32Array(count);
    const codes = new Int8Array(count * dim);
    for (let i = 0; i < count; i++) {
      let max = 0;
      for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(vectors[i * dim + j]!));
      const scale = max > 0 ? max / 127 : 1;
      scales[i] = scale;
      for (let j = 0; j < dim; j++) codes[i * dim + j] = Math.round(vectors[i * dim + j]! / scale);
    }
    section(Buffer.from(scales.buffer));
    section(Buffer.from(codes.buffer));
  }
  const head = Buffer.concat(parts);
  const body = Buffer.from(vectors.buffer);
  return [head, body, createHash('sha256').update(head).digest(), createHash('sha256').update(body).digest()];
}

/** An opened item-vector file. */
export class ItemVectors {
  private readonly decoder = new TextDecoder();

  private constructor(
    readonly dim: number,
    readonly size: number,
    readonly encoding: VectorEncoding,
    private readonly names: string[],
    private readonly idOffsets: Uint32Array,
    private readonly idBytes: Uint8Array,
    private readonly codes: Uint8Array,
    /** f32: every vector; i8: undefined (read from the file when rescoring). */
    private readonly vectors: Float32Array | undefined,
    private readonly i8: { scales: Float32Array; codes: Int8Array } | undefined,
    private readonly vectorsOffset: number,
    /** i8: the file, held open so that rescoring still reads it after a newer generation replaced it. */
    private fd: number | undefined,
  ) {}

  /** Opens and checks a file; throws an Error saying what is wrong with a damaged or foreign one. */
  static async open(file: string): Promise<ItemVectors> {
    const size = (await stat(file)).size;
    const handle = await open(file, 'r');
    try {
      const header = Buffer.alloc(HEADER);
      await handle.read(header, 0, HEADER, 0);
      if (size < HEADER + 64 || !header.subarray(0, 8).equals(MAGIC)) throw new Error('not a Canopy item-vector file');
      const version = header.readUInt32LE(8);
      if (version !== VERSION) throw new Error(`item-vector format ${version}, expected ${VERSION}`);
      const dim = header.readUInt32LE(12);
      const count = header.readUInt32LE(16);
      const encoding: VectorEncoding = header.readUInt32LE(20) === 0 ? 'f32' : 'i8';
      const namesLen = header.readUInt32LE(24);
      const idLen = header.readUInt32LE(28);
      const sizes = [namesLen, (count + 1) * 4, idLen, count, ...(encoding === 'i8' ? [count * 4, count * dim] : [])];
      const headLen = HEADER + sizes.reduce((a, n) => a + n + pad8(n), 0);
      const bodyLen = count * dim * 4;
      if (size !== headLen + bodyLen + 64) throw new Error(`size ${size} bytes, expected ${headLen + bodyLen + 64} for ${count} ${dim}-d vectors`);
      // One aligned buffer for the head; the body is read whole (f32) or only checked (i8).
      const head = new Uint8Array(headLen);
      await handle.read(head, 0, headLen, 0);
      const sums = Buffer.alloc(64);
      await handle.read(sums, 0, 64, headLen + bodyLen);
      if (!createHash('sha256').update(head).digest().equals(sums.subarray(0, 32))) throw new Error('checksum mismatch in the head (damaged file)');
      let at = HEADER;
      const take = (n: number) => {
        const o = at;
        at += n + pad8(n);
        return o;
      };
      const namesAt = take(namesLen);
      const offsetsAt = take((count + 1) * 4);
      const idsAt = take(idLen);
      const codesAt = take(count);
      const names = JSON.parse(Buffer.from(head.buffer, namesAt, namesLen).toString('utf8')) as string[];
      const idOffsets = new Uint32Array(head.buffer, offsetsAt, count + 1);
      const idBytes = head.subarray(idsAt, idsAt + idLen);
      const codes = head.subarray(codesAt, codesAt + count);
      let i8: { scales: Float32Array; codes: Int8Array } | undefined;
      if (encoding === 'i8') {
        const scalesAt = take(count * 4);
        const codesI8At = take(count * dim);
        i8 = { scales: new Float32Array(head.buffer, scalesAt, count), codes: new Int8Array(head.buffer, codesI8At, count * dim) };
      }
      // The float32 body: read into memory (f32), or streamed through the checksum (i8).
      const bodyHash = createHash('sha256');
      let vectors: Float32Array | undefined;
      if (encoding === 'f32') {
        vectors = new Float32Array(count * dim);
        const bytes = new Uint8Array(vectors.buffer);
        for (let done = 0; done < bodyLen; ) {
          const { bytesRead } = await handle.read(bytes, done, Math.min(bodyLen - done, 1 << 24), headLen + done);
          if (bytesRead === 0) throw new Error('vectors are cut off');
          done += bytesRead;
        }
        bodyHash.update(bytes);
      } else {
        const chunk = Buffer.alloc(Math.min(bodyLen, 1 << 22) || 1);
        for (let done = 0; done < bodyLen; ) {
          const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, bodyLen - done), headLen + done);
          if (bytesRead === 0) throw new Error('vectors are cut off');
          bodyHash.update(chunk.subarray(0, bytesRead));
          done += bytesRead;
        }
      }
      if (!bodyHash.digest().equals(sums.subarray(32))) throw new Error('checksum mismatch in the vectors (damaged file)');
      return new ItemVectors(dim, count, encoding, names, idOffsets, idBytes, codes, vectors, i8, headLen, encoding === 'i8' ? openSync(file, 'r') : undefined);
    } finally {
      await handle.close();
    }
  }

  id(i: number): string {
    return this.decoder.decode(this.idBytes.subarray(this.idOffsets[i]!, this.idOffsets[i + 1]!));
  }

  modality(i: number): string {
    return this.names[this.codes[i]!]!;
  }

  /** Exact float32 vectors of the given rows (from memory, or read from the file). */
  vectorsOf(rows: readonly number[]): Float32Array[] {
    if (this.vectors) return rows.map((r) => this.vectors!.subarray(r * this.dim, (r + 1) * this.dim));
    const fd = this.fd;
    if (fd === undefined) throw new Error('item vectors are closed');
    return rows.map((r) => {
      const v = new Float32Array(this.dim);
      readSync(fd, new Uint8Array(v.buffer), 0, this.dim * 4, this.vectorsOffset + r * this.dim * 4);
      return v;
    });
  }

  /** Releases the file (i8); the f32 vectors stay usable until dropped. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Top-k items by cosine similarity, best first; only the given modalities when set. */
  query(vector: Float32Array, k: number, modalities?: readonly string[]): VectorHit[] {
    if (this.size === 0 || k <= 0) return [];
    if (vector.length !== this.dim) throw new Error(`query vector is ${vector.length}-d, the index holds ${this.dim}-d vectors`);
    const q = unit(vector);
    const allowed = modalities ? new Set(modalities.map((m) => this.names.indexOf(m)).filter((c) => c >= 0)) : undefined;
    if (allowed && allowed.size === 0) return [];
    const dim = this.dim;
    if (this.vectors) {
      const heap = new TopK(k);
      const v = this.vectors;
      for (let i = 0, o = 0; i < this.size; i++, o += dim) {
        if (allowed && !allowed.has(this.codes[i]!)) continue;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        let j = 0;
        for (; j + 3 < dim; j += 4) {
          s0 += q[j]! * v[o + j]!;
          s1 += q[j + 1]! * v[o + j + 1]!;
          s2 += q[j + 2]! * v[o + j + 2]!;
          s3 += q[j + 3]! * v[o + j + 3]!;
        }
        for (; j < dim; j++) s0 += q[j]! * v[o + j]!;
        const s = s0 + s1 + s2 + s3;
        if (s >= heap.floor) heap.push(i, s);
      }
      return heap.sorted().map((h) => ({ id: this.id(h.index), score: h.score }));
    }
    // int8: approximate scores on the codes, then exact scores for the best candidates.
    const { scales, codes } = this.i8!;
    const candidates = new TopK(Math.min(this.size, k * RESCORE_FACTOR));
    for (let i = 0, o = 0; i < this.size; i++, o += dim) {
      if (allowed && !allowed.has(this.codes[i]!)) continue;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let j = 0;
      for (; j + 3 < dim; j += 4) {
        s0 += q[j]! * codes[o + j]!;
        s1 += q[j + 1]! * codes[o + j + 1]!;
        s2 += q[j + 2]! * codes[o + j + 2]!;
        s3 += q[j + 3]! * codes[o + j + 3]!;
      }
      for (; j < dim; j++) s0 += q[j]! * codes[o + j]!;
      const s = (s0 + s1 + s2 + s3) * scales[i]!;
      if (s >= candidates.floor) candidates.push(i, s);
    }
    const rows = candidates.sorted().map((c) => c.index);
    const exact = this.vectorsOf(rows);
    const heap = new TopK(k);
    rows.forEach((r, n) => {
      const v = exact[n]!;
      let s = 0;
      for (let j = 0; j < dim; j++) s += q[j]! * v[j]!;
      heap.push(r, s);
    });
    return heap.sorted().map((h) => ({ id: this.id(h.index), score: h.score }));
  }

  /** Every item with its exact vector, in file order. */
  all(): ItemVector[] {
    const rows = Array.from({ length: this.size }, (_, i) => i);
    const vectors = this.vectorsOf(rows);
    return rows.map((r) => ({ id: this.id(r), modality: this.modality(r), vector: vectors[r]! }));
  }
}
