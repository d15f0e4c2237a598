/**
 * BM25 over items in a compact binary form: postings in typed arrays, written as one file per
 * generation and read back without parsing JSON. It replaces a MiniSearch index serialised as
 * JSON, which at 25,000 items took ~11 s to load and ~90 ms per OR query on the shared 2-core
 * build machine (docs/architecture.md, "The storage port"); this one loads in a read and answers
 * by walking only the query terms' postings.
 *
 * Scoring is MiniSearch 7's, the library Canopy used before, so rankings are unchanged (a test
 * checks the scores against MiniSearch): for each query term t (a term repeated in the query
 * counts again) and field f (title, text) of an item,
 *
 *   boost_f · idf_f(t) · (δ + tf·(k1 + 1) / (tf + k1·(1 − b + b·len_f / avglen_f)))   (BM25+; δ = 0 here)
 *   idf_f(t) = ln(1 + (N − df_f(t) + 0.5) / (df_f(t) + 0.5))
 *
 * summed, then multiplied by the number of distinct query terms the item matched. A field's
 * length is its number of distinct words (stop words included); terms are text/terms.ts's
 * (stemmed, stop words removed), as everywhere else in Canopy.
 *
 * `scoring: 'flat'` ranks the same postings as one field (title and text together, the way
 * Anserini's "flat" BEIR runs index a document): tf = the title's + the text's, df = the items
 * holding the term in either field, length = the two fields' lengths summed, classic BM25 with the
 * same k1 and b and no coordination factor. It ranks differently from the per-field score
 * (SciFact nDCG@10 0.696 against 0.674, HotpotQA 0.759 against 0.769), and the retrieval profile
 * fuses the two (docs/evaluation.md, "Retrieval fusion: the encoder's profile").
 */
import { createHash } from 'node:crypto';
import { indexTerm, words } from '../text/terms';
import { titleKeyOf } from '../text/titles';

export interface LexicalDoc {
  id: string;
  title: string;
  text: string;
  modality: string;
}

/** How query terms are scored: per field with MiniSearch's coordination factor (default), or as one flat field. */
export type LexicalScoring = 'fields' | 'flat';

export interface LexicalHit {
  id: string;
  score: number;
}

const FIELDS = 2; // 0: title, 1: text
// Classic BM25 (MiniSearch's BM25+ term δ = 0) with titles weighted like text: chosen on the
// development pools over k1 ∈ {0.9, 1.2, 1.5}, b ∈ {0.4, 0.75}, δ ∈ {0, 0.5}, title boost ∈ {1, 2}:
// nDCG@10 SciFact 0.651 → 0.674, HotpotQA 0.766 → 0.769 against the former δ = 0.5, title × 2
// (docs/evaluation.md, "Retrieval fusion: the encoder's profile").
const BOOST = [1, 1] as const;
const K1 = 1.2;
const B = 0.75;
const DELTA = 0;
const MAGIC = Buffer.from('CNPYBM25', 'ascii');
/** 2: with each item's title key (format 1, read still, has none: its items are found by no title). */
const VERSION = 2;
const MAX_TF = 0xffff;

/** Terms and their frequencies in one field of one document (length: its distinct words). */
export interface FieldTerms {
  length: number;
  tf: Map<string, number>;
}

/**
 * How a document's field (0: title, 1: text) is split into terms: `fieldTerms`, or a caller's
 * cache of it (the rank gate keeps each item's, so a warm question does not re-tokenise them).
 */
export type FieldTermsOf = (doc: LexicalDoc, field: 0 | 1) => FieldTerms;

/** Terms and their frequencies in one field of one document. */
export function fieldTerms(text: string): FieldTerms {
  const tokens = words(text);
  const tf = new Map<string, number>();
  for (const w of tokens) {
    const t = indexTerm(w);
    if (t) tf.set(t, (tf.get(t) ?? 0) + 1);
  }
  return { length: new Set(tokens).size, tf };
}

/** Postings being assembled: per term and field, parallel arrays of document numbers and frequencies. */
type Draft = Map<string, Array<{ docs: number[]; tfs: number[] } | undefined>>;

export class Bm25Index {
  private readonly termDecoder = new TextDecoder();
  private idCache: Array<string | undefined>;
  private idToDoc: Map<string, number> | undefined;
  private scratch: { score: Float64Array; quality: Uint16Array; seen: Int32Array } | undefined;
  private byKey: Map<string, number[]> | undefined;

  private constructor(
    /** Document ids, UTF-8, delimited by idOffsets. */
    private readonly idBytes: Uint8Array,
    private readonly idOffsets: Uint32Array,
    private readonly modalityNames: string[],
    private readonly modalityCodes: Uint8Array,
    /** N × FIELDS distinct-word counts. */
    private readonly fieldLength: Uint32Array,
    private readonly avgFieldLength: Float64Array,
    /** Sorted terms, UTF-8, delimited by termOffsets. */
    private readonly termBytes: Uint8Array,
    private readonly termOffsets: Uint32Array,
    /** Per field: posting offsets per term (T + 1), document numbers, frequencies. */
    private readonly postings: Array<{ offsets: Uint32Array; docs: Uint32Array; tfs: Uint16Array }>,
    /** Title keys (text/titles.ts `titleKeyOf`), UTF-8, delimited by keyOffsets; all empty in a format-1 index. */
    private readonly keyBytes: Uint8Array,
    private readonly keyOffsets: Uint32Array,
  ) {
    this.idCache = new Array<string | undefined>(this.size);
  }

  static empty(): Bm25Index {
    return Bm25Index.fromDraft([], [], new Map(), [], []);
  }

  /** Builds an index over `docs` (ids must be unique). */
  static build(docs: readonly LexicalDoc[], termsOf?: FieldTermsOf): Bm25Index {
    return Bm25Index.empty().update([], docs, termsOf);
  }

  get size(): number {
    return this.idOffsets.length - 1;
  }

  get termCount(): number {
    return this.termOffsets.length - 1;
  }

  id(doc: number): string {
    let s = this.idCache[doc];
    if (s === undefined) {
      s = this.termDecoder.decode(this.idBytes.subarray(this.idOffsets[doc]!, this.idOffsets[doc + 1]!));
      this.idCache[doc] = s;
    }
    return s;
  }

  /** The item's title key (empty when the index was written without keys). */
  titleKey(doc: number): string {
    return this.termDecoder.decode(this.keyBytes.subarray(this.keyOffsets[doc]!, this.keyOffsets[doc + 1]!));
  }

  /**
   * For each key, the ids of the items whose title key it is (document order), only the given
   * modalities when set; a key no item has is absent. The key table is built at the first call.
   */
  titled(keys: readonly string[], modalities?: readonly string[]): Map<string, string[]> {
    if (!this.byKey) {
      this.byKey = new Map();
      for (let i = 0; i < this.size; i++) {
        const key = this.titleKey(i);
        if (!key) continue;
        const list = this.byKey.get(key);
        if (list) list.push(i);
        else this.byKey.set(key, [i]);
      }
    }
    const allowed = this.modalityCodesOf(modalities);
    const out = new Map<string, string[]>();
    for (const key of keys) {
      const docs = (this.byKey.get(key) ?? []).filter((d) => !allowed || allowed.has(this.modalityCodes[d]!));
      if (docs.length > 0) out.set(key, docs.map((d) => this.id(d)));
    }
    return out;
  }

  /** The codes of the given modalities (undefined: all). */
  private modalityCodesOf(modalities: readonly string[] | undefined): Set<number> | undefined {
    return modalities ? new Set(modalities.map((m) => this.modalityNames.indexOf(m)).filter((c) => c >= 0)) : undefined;
  }

  has(id: string): boolean {
    return this.docIndex().has(id);
  }

  /** Every id, in document order. */
  ids(): string[] {
    return Array.from({ length: this.size }, (_, i) => this.id(i));
  }

  /**
   * Every term of the text field with the documents (numbers, ascending) whose text holds it: the
   * distinct content terms of each document's text, read from the postings without tokenising again.
   */
  forEachTextTerm(fn: (term: string, docs: Uint32Array) => void): void {
    const p = this.postings[1]!;
    for (let t = 0; t < this.termCount; t++) {
      const start = p.offsets[t]!;
      const end = p.offsets[t + 1]!;
      if (end > start) fn(this.term(t), p.docs.subarray(start, end));
    }
  }

  private docIndex(): Map<string, number> {
    if (!this.idToDoc) {
      this.idToDoc = new Map();
      for (let i = 0; i < this.size; i++) this.idToDoc.set(this.id(i), i);
    }
    return this.idToDoc;
  }

  /**
   * A new index: this one without `remove` (ids not present are ignored) and with `add` (an id
   * already present is replaced). Only the added documents are tokenised; the kept ones' postings
   * are copied.
   */
  update(remove: Iterable<string>, add: readonly LexicalDoc[], termsOf?: FieldTermsOf): Bm25Index {
    const drop = new Set(remove);
    for (const d of add) drop.add(d.id);
    // Kept documents keep their order; added ones follow.
    const keep = new Int32Array(this.size).fill(-1);
    const ids: string[] = [];
    const modalities: string[] = [];
    const lengths: number[] = [];
    const keys: string[] = [];
    for (let i = 0; i < this.size; i++) {
      const id = this.id(i);
      if (drop.has(id)) continue;
      keep[i] = ids.length;
      ids.push(id);
      keys.push(this.titleKey(i));
      modalities.push(this.modalityNames[this.modalityCodes[i]!]!);
      for (let f = 0; f < FIELDS; f++) lengths.push(this.fieldLength[i * FIELDS + f]!);
    }
    const draft: Draft = new Map();
    for (let t = 0; t < this.termCount; t++) {
      let entry: Array<{ docs: number[]; tfs: number[] } | undefined> | undefined;
      for (let f = 0; f < FIELDS; f++) {
        const p = this.postings[f]!;
        const docs: number[] = [];
        const tfs: number[] = [];
        for (let j = p.offsets[t]!; j < p.offsets[t + 1]!; j++) {
          const n = keep[p.docs[j]!]!;
          if (n >= 0) {
            docs.push(n);
            tfs.push(p.tfs[j]!);
          }
        }
        if (docs.length > 0) {
          entry ??= new Array(FIELDS).fill(undefined);
          entry[f] = { docs, tfs };
        }
      }
      if (entry) draft.set(this.term(t), entry);
    }
    const seen = new Set<string>();
    for (const d of add) {
      if (seen.has(d.id)) throw new Error(`duplicate lexical document id ${d.id}`);
      seen.add(d.id);
      const n = ids.length;
      ids.push(d.id);
      keys.push(titleKeyOf(d.title));
      modalities.push(d.modality);
      [d.title, d.text].forEach((text, f) => {
        const { length, tf } = termsOf ? termsOf(d, f as 0 | 1) : fieldTerms(text);
        lengths.push(length);
        for (const [term, count] of tf) {
          let entry = draft.get(term);
          if (!entry) draft.set(term, (entry = new Array(FIELDS).fill(undefined)));
          const slot = (entry[f] ??= { docs: [], tfs: [] });
          slot.docs.push(n);
          slot.tfs.push(Math.min(count, MAX_TF));
        }
      });
    }
    return Bm25Index.fromDraft(ids, modalities, draft, lengths, keys);
  }

  private static fromDraft(ids: string[], modalities: string[], draft: Draft, lengths: number[], keys: string[]): Bm25Index {
    const [idBytes, idOffsets] = packStrings(ids);
    const [keyBytes, keyOffsets] = packStrings(keys);
    const names = [...new Set(modalities)].sort();
    if (names.length > 255) throw new Error('more than 255 modalities');
    const codeOf = new Map(names.map((n, i) => [n, i]));
    const modalityCodes = Uint8Array.from(modalities, (m) => codeOf.get(m)!);
    const fieldLength = Uint32Array.from(lengths);
    const avg = new Float64Array(FIELDS);
    for (let f = 0; f < FIELDS; f++) {
      let sum = 0;
      for (let i = 0; i < ids.length; i++) sum += fieldLength[i * FIELDS + f]!;
      avg[f] = ids.length > 0 ? sum / ids.length : 0;
    }
    // Terms sorted by their UTF-8 bytes, so lookup can binary-search the byte strings.
    const terms = [...draft.keys()].map((t) => ({ t, b: Buffer.from(t, 'utf8') })).sort((a, b) => Buffer.compare(a.b, b.b));
    const termOffsets = new Uint32Array(terms.length + 1);
    terms.forEach((x, i) => (termOffsets[i + 1] = termOffsets[i]! + x.b.length));
    const termBytes = new Uint8Array(termOffsets[terms.length]!);
    terms.forEach((x, i) => termBytes.set(x.b, termOffsets[i]!));
    const postings = Array.from({ length: FIELDS }, (_, f) => {
      const offsets = new Uint32Array(terms.length + 1);
      terms.forEach((x, i) => (offsets[i + 1] = offsets[i]! + (draft.get(x.t)![f]?.docs.length ?? 0)));
      const docs = new Uint32Array(offsets[terms.length]!);
      const tfs = new Uint16Array(offsets[terms.length]!);
      terms.forEach((x, i) => {
        const slot = draft.get(x.t)![f];
        if (!slot) return;
        docs.set(slot.docs, offsets[i]!);
        tfs.set(slot.tfs, offsets[i]!);
      });
      return { offsets, docs, tfs };
    });
    return new Bm25Index(idBytes, idOffsets, names, modalityCodes, fieldLength, avg, termBytes, termOffsets, postings, keyBytes, keyOffsets);
  }

  private term(t: number): string {
    return this.termDecoder.decode(this.termBytes.subarray(this.termOffsets[t]!, this.termOffsets[t + 1]!));
  }

  /** The term's number, or -1: a binary search over the sorted UTF-8 terms. */
  private termId(term: string): number {
    const key = Buffer.from(term, 'utf8');
    const bytes = Buffer.from(this.termBytes.buffer, this.termBytes.byteOffset, this.termBytes.byteLength);
    let lo = 0;
    let hi = this.termCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(bytes.subarray(this.termOffsets[mid]!, this.termOffsets[mid + 1]!), key);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The k best items for `text` (OR over its terms), best first; only the given modalities when set. */
  query(text: string, k: number, modalities?: readonly string[], scoring: LexicalScoring = 'fields'): LexicalHit[] {
    const n = this.size;
    if (n === 0 || k <= 0) return [];
    const queryTerms: string[] = [];
    for (const w of words(text)) {
      const t = indexTerm(w);
      if (t) queryTerms.push(t);
    }
    if (queryTerms.length === 0) return [];
    if (!this.scratch || this.scratch.score.length !== n) {
      this.scratch = { score: new Float64Array(n), quality: new Uint16Array(n), seen: new Int32Array(n).fill(-1) };
    }
    if (scoring === 'flat') return this.queryFlat(queryTerms, k, modalities);
    const { score, quality, seen } = this.scratch;
    const touched: number[] = [];
    const distinct = new Map<string, number>();
    for (const term of queryTerms) {
      const t = this.termId(term);
      if (t < 0) continue;
      let ordinal = distinct.get(term);
      if (ordinal === undefined) distinct.set(term, (ordinal = distinct.size));
      for (let f = 0; f < FIELDS; f++) {
        const p = this.postings[f]!;
        const start = p.offsets[t]!;
        const end = p.offsets[t + 1]!;
        const df = end - start;
        if (df === 0) continue;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        const avg = this.avgFieldLength[f]!;
        const boost = BOOST[f]!;
        for (let j = start; j < end; j++) {
          const d = p.docs[j]!;
          const tf = p.tfs[j]!;
          const len = this.fieldLength[d * FIELDS + f]!;
          const s = boost * idf * (DELTA + (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / avg)));
          if (seen[d] === -1) {
            touched.push(d);
            score[d] = 0;
            quality[d] = 0;
            seen[d] = -2;
          }
          score[d] = score[d]! + s;
          // Distinct terms get increasing ordinals at their first occurrence, so a larger ordinal
          // than the item's last one is a distinct term matching it for the first time.
          if (seen[d] === -2 || seen[d]! < ordinal) {
            quality[d] = quality[d]! + 1;
            seen[d] = ordinal;
          }
        }
      }
    }
    const allowed = this.modalityCodesOf(modalities);
    const heap = new TopK(k);
    for (const d of touched) {
      const final = score[d]! * quality[d]!;
      seen[d] = -1; // reset for the next query
      if (allowed && !allowed.has(this.modalityCodes[d]!)) continue;
      heap.push(d, final);
    }
    return heap.sorted().map(({ index, score: s }) => ({ id: this.id(index), score: s }));
  }

  /** `query` with `scoring: 'flat'`: both fields' postings merged as one field, no coordination factor. */
  private queryFlat(queryTerms: string[], k: number, modalities?: readonly string[]): LexicalHit[] {
    const n = this.size;
    const { score, seen } = this.scratch!;
    const touched: number[] = [];
    const avg = this.avgFieldLength[0]! + this.avgFieldLength[1]!;
    const [title, text] = this.postings as [(typeof this.postings)[0], (typeof this.postings)[0]];
    const add = (d: number, tf: number, idf: number) => {
      const len = this.fieldLength[d * FIELDS]! + this.fieldLength[d * FIELDS + 1]!;
      if (seen[d] === -1) {
        touched.push(d);
        score[d] = 0;
        seen[d] = -2;
      }
      score[d] = score[d]! + idf * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / avg)));
    };
    for (const term of queryTerms) {
      const t = this.termId(term);
      if (t < 0) continue;
      // Both lists hold document numbers in ascending order: one merge gives df and the summed tf.
      let i = title.offsets[t]!;
      const iEnd = title.offsets[t + 1]!;
      let j = text.offsets[t]!;
      const jEnd = text.offsets[t + 1]!;
      let df = 0;
      for (let a = i, b = j; a < iEnd || b < jEnd; df++) {
        if (b >= jEnd || (a < iEnd && title.docs[a]! < text.docs[b]!)) a++;
        else if (a >= iEnd || text.docs[b]! < title.docs[a]!) b++;
        else {
          a++;
          b++;
        }
      }
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      while (i < iEnd || j < jEnd) {
        if (j >= jEnd || (i < iEnd && title.docs[i]! < text.docs[j]!)) {
          add(title.docs[i]!, title.tfs[i]!, idf);
          i++;
        } else if (i >= iEnd || text.docs[j]! < title.docs[i]!) {
          add(text.docs[j]!, text.tfs[j]!, idf);
          j++;
        } else {
          add(title.docs[i]!, title.tfs[i]! + text.tfs[j]!, idf);
          i++;
          j++;
        }
      }
    }
    const allowed = this.modalityCodesOf(modalities);
    const heap = new TopK(k);
    for (const d of touched) {
      seen[d] = -1;
      if (allowed && !allowed.has(this.modalityCodes[d]!)) continue;
      heap.push(d, score[d]!);
    }
    return heap.sorted().map(({ index, score: s }) => ({ id: this.id(index), score: s }));
  }

  /** The binary form: header, ids, modalities, field lengths, terms, postings, title keys, SHA-256 of all before it. */
  toBuffer(): Buffer {
    const enc = new TextEncoder();
    const names = enc.encode(JSON.stringify(this.modalityNames));
    const parts: Uint8Array[] = [];
    const header = Buffer.alloc(32);
    MAGIC.copy(header, 0);
    header.writeUInt32LE(VERSION, 8);
    header.writeUInt32LE(this.size, 12);
    header.writeUInt32LE(this.termCount, 16);
    header.writeUInt32LE(FIELDS, 20);
    header.writeUInt32LE(names.length, 24);
    header.writeUInt32LE(this.idBytes.length, 28);
    parts.push(header);
    const aligned = (bytes: Uint8Array) => {
      parts.push(bytes);
      const pad = (8 - (bytes.byteLength % 8)) % 8;
      if (pad) parts.push(new Uint8Array(pad));
    };
    const view = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    aligned(view(this.avgFieldLength));
    aligned(names);
    aligned(view(this.idOffsets));
    aligned(this.idBytes);
    aligned(this.modalityCodes);
    aligned(view(this.fieldLength));
    aligned(view(this.termOffsets));
    aligned(this.termBytes);
    for (const p of this.postings) {
      aligned(view(p.offsets));
      aligned(view(p.docs));
      aligned(view(p.tfs));
    }
    aligned(view(this.keyOffsets));
    aligned(this.keyBytes);
    const body = Buffer.concat(parts);
    return Buffer.concat([body, createHash('sha256').update(body).digest()]);
  }

  /** Reads the binary form; throws an Error saying what is wrong with a damaged or foreign buffer. */
  static fromBuffer(input: Uint8Array): Bm25Index {
    const buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    if (buf.length < 64 || !buf.subarray(0, 8).equals(MAGIC)) throw new Error('not a Canopy BM25 index');
    const version = buf.readUInt32LE(8);
    if (version !== VERSION && version !== 1) throw new Error(`BM25 index format ${version}, expected ${VERSION}`);
    const body = buf.subarray(0, buf.length - 32);
    if (!createHash('sha256').update(body).digest().equals(buf.subarray(buf.length - 32))) throw new Error('BM25 index checksum mismatch (damaged file)');
    // Typed views need aligned offsets: copy once into a fresh, aligned buffer.
    const own = new Uint8Array(body.length);
    own.set(body);
    const n = buf.readUInt32LE(12);
    const terms = buf.readUInt32LE(16);
    const fields = buf.readUInt32LE(20);
    if (fields !== FIELDS) throw new Error(`BM25 index has ${fields} fields, expected ${FIELDS}`);
    const namesLen = buf.readUInt32LE(24);
    const idLen = buf.readUInt32LE(28);
    let at = 32;
    const take = <T>(bytes: number, make: (offset: number) => T): T => {
      if (at + bytes > own.length) throw new Error('BM25 index is cut off');
      const out = make(at);
      at += bytes + ((8 - (bytes % 8)) % 8);
      return out;
    };
    const avg = take(FIELDS * 8, (o) => new Float64Array(own.buffer, o, FIELDS));
    const names = take(namesLen, (o) => JSON.parse(new TextDecoder().decode(own.subarray(o, o + namesLen))) as string[]);
    const idOffsets = take((n + 1) * 4, (o) => new Uint32Array(own.buffer, o, n + 1));
    const idBytes = take(idLen, (o) => own.subarray(o, o + idLen));
    const codes = take(n, (o) => own.subarray(o, o + n));
    const lengths = take(n * FIELDS * 4, (o) => new Uint32Array(own.buffer, o, n * FIELDS));
    const termOffsets = take((terms + 1) * 4, (o) => new Uint32Array(own.buffer, o, terms + 1));
    const termLen = termOffsets[terms]!;
    const termBytes = take(termLen, (o) => own.subarray(o, o + termLen));
    const postings = Array.from({ length: FIELDS }, () => {
      const offsets = take((terms + 1) * 4, (o) => new Uint32Array(own.buffer, o, terms + 1));
      const p = offsets[terms]!;
      const docs = take(p * 4, (o) => new Uint32Array(own.buffer, o, p));
      const tfs = take(p * 2, (o) => new Uint16Array(own.buffer, o, p));
      return { offsets, docs, tfs };
    });
    const keyOffsets = version === 1 ? new Uint32Array(n + 1) : take((n + 1) * 4, (o) => new Uint32Array(own.buffer, o, n + 1));
    const keyLen = keyOffsets[n]!;
    const keyBytes = version === 1 ? new Uint8Array(0) : take(keyLen, (o) => own.subarray(o, o + keyLen));
    if (at !== own.length) throw new Error('BM25 index has trailing bytes');
    if (idOffsets[n] !== idLen) throw new Error('BM25 index ids are inconsistent');
    for (let i = 0; i < n; i++) if (keyOffsets[i + 1]! < keyOffsets[i]!) throw new Error('BM25 index title keys are inconsistent');
    return new Bm25Index(idBytes, idOffsets, names, codes, lengths, avg, termBytes, termOffsets, postings, keyBytes, keyOffsets);
  }
}

/** Strings as UTF-8 bytes and the offsets that delimit them (length + 1). */
function packStrings(strings: readonly string[]): [Uint8Array, Uint32Array] {
  const enc = new TextEncoder();
  const chunks = strings.map((s) => enc.encode(s));
  const offsets = new Uint32Array(strings.length + 1);
  chunks.forEach((c, i) => (offsets[i + 1] = offsets[i]! + c.length));
  const bytes = new Uint8Array(offsets[strings.length]!);
  chunks.forEach((c, i) => bytes.set(c, offsets[i]!));
  return [bytes, offsets];
}

/** The k largest scores seen, as a min-heap; ties keep the lower index first. */
export class TopK {
  private readonly index: number[] = [];
  private readonly score: number[] = [];
  constructor(private readonly k: number) {}

  private less(i: number, j: number): boolean {
    const a = this.score[i]!;
    const b = this.score[j]!;
    return a < b || (a === b && this.index[i]! > this.index[j]!);
  }

  private swap(i: number, j: number): void {
    [this.index[i], this.index[j]] = [this.index[j]!, this.index[i]!];
    [this.score[i], this.score[j]] = [this.score[j]!, this.score[i]!];
  }

  /** The smallest score kept, or -Infinity while fewer than k are kept. */
  get floor(): number {
    return this.index.length < this.k ? -Infinity : this.score[0]!;
  }

  push(index: number, score: number): void {
    if (this.k <= 0) return;
    if (this.index.length < this.k) {
      this.index.push(index);
      this.score.push(score);
      let i = this.index.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.less(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (score < this.score[0]! || (score === this.score[0]! && index > this.index[0]!)) return;
    this.index[0] = index;
    this.score[0] = score;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.index.length && this.less(l, m)) m = l;
      if (r < this.index.length && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }

  /** Best first; ties by index. */
  sorted(): Array<{ index: number; score: number }> {
    return this.index.map((index, i) => ({ index, score: this.score[i]! })).sort((a, b) => b.score - a.score || a.index - b.index);
  }
}
