/**
 * The node-encoder adapter W = I + A·B (design §3, CANOPY §3.4 in place of LoRA) and its
 * pairwise ranking loss, in plain Float64Array math: at 512-d and rank 16 one forward/backward
 * pass is ~50k multiply-adds per vector, so thousands of pairs train in seconds in-process.
 *
 *   adapter(v) = v + A (B v)          A: dim×rank, B: rank×dim, row-major
 *   s(q, v)    = cos(q, adapter(v))   (q is the frozen query vector, unit length)
 *   loss       = softplus(−scale · (s(q, preferred) − s(q, other)))   per pair (weighted mean)
 *
 * A starts at zero, so the untrained adapter is exactly the identity; B starts small and random
 * (seeded), which is what lets A's gradient be non-zero from the first step (as in LoRA).
 */
import { seededRandom } from '../random';

export interface LowRank {
  dim: number;
  rank: number;
  A: Float64Array;
  B: Float64Array;
}

export function initLowRank(dim: number, rank: number, seed: number): LowRank {
  const rand = seededRandom(seed);
  const B = new Float64Array(rank * dim);
  // Uniform in ±1/sqrt(dim): B·v then has entries of order 1/sqrt(dim) for unit v.
  const r = 1 / Math.sqrt(dim);
  for (let i = 0; i < B.length; i++) B[i] = (rand() * 2 - 1) * r;
  return { dim, rank, A: new Float64Array(dim * rank), B };
}

/** adapter(v), not normalised (the scorer re-normalises). */
export function applyLowRank(m: LowRank, v: Float32Array | Float64Array, out = new Float32Array(m.dim)): Float32Array {
  const { dim, rank, A, B } = m;
  const h = new Float64Array(rank);
  for (let k = 0; k < rank; k++) {
    let s = 0;
    const row = k * dim;
    for (let j = 0; j < dim; j++) s += B[row + j]! * v[j]!;
    h[k] = s;
  }
  for (let i = 0; i < dim; i++) {
    let s = v[i]!;
    const row = i * rank;
    for (let k = 0; k < rank; k++) s += A[row + k]! * h[k]!;
    out[i] = s;
  }
  return out;
}

/** One training pair: query, the node that should score higher, the node that should score lower. */
export interface TrainPair {
  q: Float32Array;
  preferred: Float32Array;
  other: Float32Array;
  /** Weight in the mean loss (default 1), e.g. to balance the two preference rules. */
  weight?: number;
}

interface Forward {
  h: Float64Array;
  u: Float64Array;
  norm: number;
  s: number;
}

function forward(m: LowRank, q: Float32Array, v: Float32Array): Forward {
  const { dim, rank, A, B } = m;
  const h = new Float64Array(rank);
  for (let k = 0; k < rank; k++) {
    let s = 0;
    const row = k * dim;
    for (let j = 0; j < dim; j++) s += B[row + j]! * v[j]!;
    h[k] = s;
  }
  const u = new Float64Array(dim);
  let nn = 0;
  let qu = 0;
  for (let i = 0; i < dim; i++) {
    let s = v[i]!;
    const row = i * rank;
    for (let k = 0; k < rank; k++) s += A[row + k]! * h[k]!;
    u[i] = s;
    nn += s * s;
    qu += q[i]! * s;
  }
  const norm = Math.sqrt(nn) || 1e-12;
  return { h, u, norm, s: qu / norm };
}

/** Adds c · ∂s/∂(A, B) for one vector into gA, gB. */
function backward(m: LowRank, q: Float32Array, v: Float32Array, f: Forward, c: number, gA: Float64Array, gB: Float64Array): void {
  const { dim, rank, A } = m;
  // ∂s/∂u = (q − s·u/|u|) / |u|
  const gh = new Float64Array(rank);
  for (let i = 0; i < dim; i++) {
    const gu = (c * (q[i]! - (f.s * f.u[i]!) / f.norm)) / f.norm;
    if (gu === 0) continue;
    const row = i * rank;
    for (let k = 0; k < rank; k++) {
      gA[row + k]! += gu * f.h[k]!;
      gh[k]! += A[row + k]! * gu;
    }
  }
  for (let k = 0; k < rank; k++) {
    const g = gh[k]!;
    if (g === 0) continue;
    const row = k * dim;
    for (let j = 0; j < dim; j++) gB[row + j]! += g * v[j]!;
  }
}

function softplus(x: number): number {
  return x > 30 ? x : Math.log1p(Math.exp(x));
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** Mean pairwise logistic loss over `pairs`. */
export function rankingLoss(m: LowRank, pairs: readonly TrainPair[], scale: number): number {
  if (pairs.length === 0) return 0;
  let total = 0;
  let weights = 0;
  for (const p of pairs) {
    const w = p.weight ?? 1;
    total += w * softplus(-scale * (forward(m, p.q, p.preferred).s - forward(m, p.q, p.other).s));
    weights += w;
  }
  return total / (weights || 1);
}

/** Loss and gradient (mean over the batch) of the ranking loss. */
export function lossAndGradient(m: LowRank, pairs: readonly TrainPair[], scale: number): { loss: number; gA: Float64Array; gB: Float64Array } {
  const gA = new Float64Array(m.A.length);
  const gB = new Float64Array(m.B.length);
  let loss = 0;
  const n = pairs.reduce((acc, p) => acc + (p.weight ?? 1), 0) || 1;
  for (const p of pairs) {
    const w = p.weight ?? 1;
    const fp = forward(m, p.q, p.preferred);
    const fo = forward(m, p.q, p.other);
    const margin = scale * (fp.s - fo.s);
    loss += w * softplus(-margin);
    // d softplus(−x)/dx = −σ(−x)
    const d = -sigmoid(-margin) * scale * w;
    backward(m, p.q, p.preferred, fp, d / n, gA, gB);
    backward(m, p.q, p.other, fo, -d / n, gA, gB);
  }
  return { loss: loss / n, gA, gB };
}
