/**
 * The Encoder port: turns texts into unit-length vectors. The core depends only on this
 * interface; the built-in USE-lite model (useLiteEncoder.ts) and user-supplied Hugging Face ONNX
 * folders (onnxFolderEncoder.ts) implement it, and createEncoder.ts picks one from settings.
 *
 * Also here: the text normalisation every encoder applies (and the embedding cache keys on),
 * and the long-region strategy shared by the implementations.
 */

export interface Encoder {
  /**
   * Names the model *and* how texts become vectors (tokeniser, long-region strategy, weights
   * hash). Two encoders with the same id give the same vector for the same text, so the
   * embedding cache keys on it; anything that changes vectors must change the id.
   */
  readonly id: string;
  /** Length of every vector. */
  readonly dim: number;
  /** Pieces (tokens) the model reads in one window; longer texts are split (see `combineWindows`). */
  readonly maxPieces: number;
  /**
   * One unit-length Float32Array of length `dim` per text, in order. Texts may be any length:
   * longer ones are encoded window by window. Rejects with CancelledError once `signal` fires
   * (checked between batches) and with CanopyError(E_ENCODER) when the runtime fails.
   */
  encode(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Pieces the model's tokeniser makes of `text` after normalisation, before any windowing. */
  countPieces?(text: string): number;
  /** Releases the runtime session; the encoder must not be used afterwards. */
  dispose(): Promise<void>;
  /** What the encoder has done so far (cumulative), for the indexing benchmark; absent when not counted. */
  readonly stats?: EncoderStats;
}

/** Cumulative work of an encoder: calls, texts, model windows, and the milliseconds spent tokenising and in inference. */
export interface EncoderStats {
  calls: number;
  texts: number;
  windows: number;
  tokenizeMs: number;
  inferenceMs: number;
}

export function newEncoderStats(): EncoderStats {
  return { calls: 0, texts: 0, windows: 0, tokenizeMs: 0, inferenceMs: 0 };
}

/** Which encoder to use, as settings express it. */
export type EncoderConfig =
  | { kind: 'builtin' }
  | {
      kind: 'onnx-folder';
      /** Folder with model.onnx (or onnx/model.onnx) and tokenizer.json. */
      path: string;
    };

/**
 * Whitespace collapsed to single spaces and trimmed. Both encoders apply it before tokenising
 * (USE-lite turns every space into a '▁' piece boundary, so runs of spaces or newlines would
 * otherwise become extra pieces), and the embedding cache hashes this form, so texts that
 * differ only in whitespace share one vector.
 */
export function normalizeText(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** Scale `v` in place to unit length (left as is when it is all zeros). */
export function l2NormalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  }
  return v;
}

/** Cosine similarity of two vectors (dot product over norms; 0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Long-region strategy, part 1: split a piece sequence longer than `max` into windows of at
 * most `max` pieces and near-equal length (about ceil(n / max) of them, so no window is a tiny
 * tail): each cut aims at an equal share of what is left. When `isWordStart` is given, a cut
 * moves back (by at most a quarter window) to the nearest piece that starts a word, so words are
 * not split across windows.
 */
export function splitWindows<T extends ArrayLike<number>>(ids: T, max: number, isWordStart?: (id: number) => boolean): Array<[number, number]> {
  const n = ids.length;
  if (max < 1) throw new RangeError('window size must be at least 1');
  if (n <= max) return [[0, n]];
  const windows: Array<[number, number]> = [];
  let start = 0;
  do {
    const remaining = n - start;
    const target = Math.ceil(remaining / Math.ceil(remaining / max));
    let end = start + target;
    if (end < n && isWordStart) {
      const limit = Math.max(start + 1, end - Math.floor(target / 4));
      for (let p = end; p >= limit; p--) {
        if (isWordStart(ids[p] as number)) {
          end = p;
          break;
        }
      }
    }
    windows.push([start, end]);
    start = end;
  } while (start < n);
  return windows;
}

/**
 * Long-region strategy, part 2: the text's vector is the normalised mean of its windows' unit
 * vectors (unweighted: the windows are near-equal in length). A text of one window keeps its
 * vector unchanged.
 */
export function combineWindows(vectors: readonly Float32Array[], dim: number): Float32Array {
  if (vectors.length === 1) return vectors[0] as Float32Array;
  const out = new Float32Array(dim);
  for (const v of vectors) for (let i = 0; i < dim; i++) out[i] = (out[i] as number) + (v[i] as number);
  return l2NormalizeInPlace(out);
}
