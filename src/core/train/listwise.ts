/**
 * A linear scorer trained listwise: within each question, the softmax over its candidates'
 * scores, and the loss the negative log of the probability mass on its positive candidates
 * (any of them answering is enough), plus L2 on the weights (towards a prior's, for a fine-tune).
 * Used by tools/judge (the shipped reader model) and train/readerFit.ts (a workspace's gold
 * spans). Full-batch Adam from zero weights (or the prior's),
 * so the result is deterministic. Ranking is what the reader does with the scores ([1] is the
 * best); `calibrate` then fits one scale and one offset so that the logistic of the scaled score
 * is the probability that a candidate answers, which keeps the model linear (the weights times
 * the scale), so each feature's contribution stays weight × value.
 */
import { fitLogistic } from './logistic';

export interface ListwiseGroup {
  /** Standardised feature rows of the question's candidates. */
  x: number[][];
  /** 1 for a positive candidate. */
  y: number[];
  /** The question's weight in the loss. */
  weight: number;
}

export interface ListwiseOptions {
  l2: number;
  iterations?: number;
  learningRate?: number;
  /** Start from these weights, and let the L2 penalty pull towards them instead of towards 0 (a fine-tune of a shipped model). */
  prior?: readonly number[];
}

export function fitListwise(groups: readonly ListwiseGroup[], d: number, options: ListwiseOptions): number[] {
  const prior = options.prior ?? new Array<number>(d).fill(0);
  const w = [...prior];
  const m = new Array<number>(d).fill(0);
  const v = new Array<number>(d).fill(0);
  const lr = options.learningRate ?? 0.05;
  const iterations = options.iterations ?? 400;
  const total = groups.reduce((a, g) => a + g.weight, 0);
  for (let it = 1; it <= iterations; it++) {
    const grad = new Array<number>(d).fill(0);
    for (const g of groups) {
      if (!g.y.some((y) => y === 1) || g.x.length < 2) continue;
      const s = g.x.map((row) => row.reduce((a, x, j) => a + x * w[j]!, 0));
      const max = Math.max(...s);
      const e = s.map((z) => Math.exp(z - max));
      const all = e.reduce((a, b) => a + b, 0);
      const pos = e.reduce((a, b, i) => a + (g.y[i] === 1 ? b : 0), 0);
      for (let i = 0; i < g.x.length; i++) {
        // d/ds_i of −log(pos/all) = p_i − q_i (q: the softmax over the positives only).
        const coef = (e[i]! / all - (g.y[i] === 1 ? e[i]! / pos : 0)) * (g.weight / total);
        if (coef === 0) continue;
        const row = g.x[i]!;
        for (let j = 0; j < d; j++) grad[j]! += coef * row[j]!;
      }
    }
    for (let j = 0; j < d; j++) {
      const gj = grad[j]! + options.l2 * (w[j]! - prior[j]!);
      m[j] = 0.9 * m[j]! + 0.1 * gj;
      v[j] = 0.999 * v[j]! + 0.001 * gj * gj;
      const mh = m[j]! / (1 - 0.9 ** it);
      const vh = v[j]! / (1 - 0.999 ** it);
      w[j]! -= (lr * mh) / (Math.sqrt(vh) + 1e-8);
    }
  }
  return w;
}

/** The scale and offset that make σ(scale × score + offset) the probability that a candidate is a positive. */
export function calibrate(scores: readonly number[], labels: readonly number[], weights: readonly number[]): { scale: number; offset: number } {
  const fit = fitLogistic(
    scores.map((s) => [s]),
    labels,
    weights,
    { l2: 1e-6 },
  );
  return { scale: fit.weights[0]!, offset: fit.bias };
}
