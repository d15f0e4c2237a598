/**
 * Small dense-vector helpers for the topic compass: dot products over flat Float32Array rows,
 * normalisation, a seeded PRNG (so every fit and every training run is reproducible) and a
 * numerically stable softmax. Kept here rather than shared because the rest of the core reaches
 * vectors only through the VectorStore port.
 */

/** Dot product of `a` with row `row` of a flat row-major matrix of width `dim`. */
export function dotRow(a: ArrayLike<number>, matrix: Float32Array, row: number, dim: number): number {
  let s = 0;
  const off = row * dim;
  for (let j = 0; j < dim; j++) s += (a[j] as number) * (matrix[off + j] as number);
  return s;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let j = 0; j < n; j++) s += (a[j] as number) * (b[j] as number);
  return s;
}

/** Scales `v` to unit length in place; a zero vector stays zero. Returns `v`. */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let n = 0;
  for (let j = 0; j < v.length; j++) n += (v[j] as number) * (v[j] as number);
  if (n > 0) {
    const inv = 1 / Math.sqrt(n);
    for (let j = 0; j < v.length; j++) v[j] = (v[j] as number) * inv;
  }
  return v;
}

/** Cosine of two vectors of any length (0 when either is zero). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  const n = Math.min(a.length, b.length);
  for (let j = 0; j < n; j++) {
    const x = a[j] as number;
    const y = b[j] as number;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}

/** Fisher–Yates shuffle of a copy, driven by `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** softmax(values / temperature), stable against large inputs. */
export function softmax(values: ArrayLike<number>, temperature = 1): Float64Array {
  const out = new Float64Array(values.length);
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i] as number);
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const e = Math.exp(((values[i] as number) - max) / temperature);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / sum;
  return out;
}

/** Indices of the `m` largest values, largest first (ties: lower index first). */
export function topIndices(values: ArrayLike<number>, m: number): number[] {
  const n = values.length;
  const want = Math.max(0, Math.min(m, n));
  const before = (a: number, b: number) => (values[a] as number) > (values[b] as number) || ((values[a] as number) === (values[b] as number) && a < b);
  if (want * 8 >= n) {
    const idx = Array.from({ length: n }, (_, i) => i);
    idx.sort((a, b) => (values[b] as number) - (values[a] as number) || a - b);
    return idx.slice(0, want);
  }
  // A few of many (the compass's top-L selection over the whole bank): a heap of the `want` best
  // so far, its root the worst of them, instead of sorting every entry. Same order and ties.
  const heap: number[] = [];
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < heap.length && before(heap[w]!, heap[l]!)) w = l;
      if (r < heap.length && before(heap[w]!, heap[r]!)) w = r;
      if (w === i) return;
      [heap[i], heap[w]] = [heap[w]!, heap[i]!];
      i = w;
    }
  };
  for (let i = 0; i < n; i++) {
    if (heap.length < want) {
      heap.push(i);
      let c = heap.length - 1;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!before(heap[p]!, heap[c]!)) break;
        [heap[p], heap[c]] = [heap[c]!, heap[p]!];
        c = p;
      }
    } else if (want > 0 && before(i, heap[0]!)) {
      heap[0] = i;
      down(0);
    }
  }
  return heap.sort((a, b) => (values[b] as number) - (values[a] as number) || a - b);
}
