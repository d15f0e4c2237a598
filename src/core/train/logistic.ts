/**
 * L2-regularised logistic regression fitted by Newton's method (iteratively reweighted least
 * squares), for the judgment models' few dozen standardised features. Deterministic (no random
 * start, no sampling), converges in a handful of steps, and its weights are read directly as the
 * features' contributions. (`ml-logistic-regression`, the registry's package, has neither L2 nor
 * row weights, which the per-question balancing below needs.)
 */

export interface FitOptions {
  /** L2 penalty on the weights (not the bias), per unit of total row weight. */
  l2: number;
  maxIterations?: number;
  tolerance?: number;
}

export interface Fitted {
  weights: number[];
  bias: number;
  iterations: number;
}

/** Solves A x = b for a symmetric positive definite A (Cholesky). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const l = a.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = a[i]![j]!;
      for (let k = 0; k < j; k++) sum -= l[i]![k]! * l[j]![k]!;
      if (i === j) l[i]![i] = Math.sqrt(Math.max(sum, 1e-12));
      else l[i]![j] = sum / l[j]![j]!;
    }
  }
  const y = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    let sum = b[i]!;
    for (let k = 0; k < i; k++) sum -= l[i]![k]! * y[k]!;
    y[i] = sum / l[i]![i]!;
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let sum = y[i]!;
    for (let k = i + 1; k < n; k++) sum -= l[k]![i]! * x[k]!;
    x[i] = sum / l[i]![i]!;
  }
  return x;
}

/** Fits weights and bias on rows `x` (standardised), labels `y` (0/1) and row weights `w`. */
export function fitLogistic(x: readonly number[][], y: readonly number[], w: readonly number[], options: FitOptions): Fitted {
  const d = x[0]?.length ?? 0;
  const n = x.length;
  const beta = new Array<number>(d + 1).fill(0); // last = bias
  const totalWeight = w.reduce((a, b) => a + b, 0);
  const lambda = options.l2 * totalWeight;
  let iterations = 0;
  for (; iterations < (options.maxIterations ?? 50); iterations++) {
    const grad = new Array<number>(d + 1).fill(0);
    const hess = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0));
    for (let i = 0; i < n; i++) {
      const row = x[i]!;
      let z = beta[d]!;
      for (let j = 0; j < d; j++) z += beta[j]! * row[j]!;
      const p = 1 / (1 + Math.exp(-z));
      const g = w[i]! * (p - y[i]!);
      const h = w[i]! * Math.max(p * (1 - p), 1e-9);
      for (let j = 0; j < d; j++) {
        grad[j]! += g * row[j]!;
        const hj = h * row[j]!;
        for (let k = 0; k <= j; k++) hess[j]![k]! += hj * row[k]!;
        hess[d]![j]! += hj;
      }
      grad[d]! += g;
      hess[d]![d]! += h;
    }
    for (let j = 0; j < d; j++) {
      grad[j]! += lambda * beta[j]!;
      hess[j]![j]! += lambda;
    }
    for (let j = 0; j <= d; j++) for (let k = j + 1; k <= d; k++) hess[j]![k] = hess[k]![j]!;
    const step = solve(hess, grad);
    let change = 0;
    for (let j = 0; j <= d; j++) {
      beta[j]! -= step[j]!;
      change = Math.max(change, Math.abs(step[j]!));
    }
    if (change < (options.tolerance ?? 1e-6)) {
      iterations++;
      break;
    }
  }
  return { weights: beta.slice(0, d), bias: beta[d]!, iterations };
}
