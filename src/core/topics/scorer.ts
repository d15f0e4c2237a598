/**
 * The small trainable scorer of the topic compass: standardised features → one hidden tanh
 * layer (or none: a linear model) → a relevance logit. It only ever scores a hybrid candidate
 * set (tens of chunks), never the whole corpus — the design's CPU warning (§4).
 *
 * "Without topics" means every topic feature at its training mean (standardised value 0, also
 * what a missing (NaN) feature becomes), so the trace's per-chunk lift is
 * score(all features) − score(topic features neutral).
 *
 * Training: Adam on per-query groups, either BCE with positives up-weighted (MCompassRAG's
 * multi-label objective) or a listwise softmax cross-entropy over each query's candidates.
 * Seeded and deterministic.
 */
import { seededRandom } from '../random';
import { shuffled } from './vectorMath';

export interface ScorerWeights {
  features: string[];
  mean: number[];
  std: number[];
  /** Which features are topic signals (zeroed for the "without topics" score). */
  topicFeatures: number[];
  hidden: number;
  /** hidden × features (or 1 × features when hidden is 0), row-major. */
  w1: number[];
  b1: number[];
  /** hidden (unused when hidden is 0). */
  w2: number[];
  b2: number;
}

export class TopicScorer {
  constructor(readonly weights: ScorerWeights) {}

  /** Logit for one raw feature row; `withTopics` false sets the topic features to neutral. */
  score(row: ArrayLike<number>, withTopics = true): number {
    const z = this.standardize(row, withTopics);
    return forward(this.weights, z).out;
  }

  standardize(row: ArrayLike<number>, withTopics = true): Float64Array {
    const { mean, std, topicFeatures } = this.weights;
    const z = new Float64Array(mean.length);
    for (let j = 0; j < z.length; j++) {
      const x = row[j] as number;
      z[j] = Number.isFinite(x) ? (x - (mean[j] as number)) / (std[j] as number) : 0;
    }
    if (!withTopics) for (const j of topicFeatures) z[j] = 0;
    return z;
  }

  toJSON(): ScorerWeights {
    return this.weights;
  }

  static fromJSON(w: ScorerWeights): TopicScorer {
    return new TopicScorer(w);
  }
}

function forward(w: ScorerWeights, z: Float64Array): { out: number; h: Float64Array } {
  const f = z.length;
  if (w.hidden === 0) {
    let s = w.b2;
    for (let j = 0; j < f; j++) s += (w.w1[j] as number) * (z[j] as number);
    return { out: s, h: new Float64Array(0) };
  }
  const h = new Float64Array(w.hidden);
  let out = w.b2;
  for (let u = 0; u < w.hidden; u++) {
    let s = w.b1[u] as number;
    for (let j = 0; j < f; j++) s += (w.w1[u * f + j] as number) * (z[j] as number);
    h[u] = Math.tanh(s);
    out += (w.w2[u] as number) * (h[u] as number);
  }
  return { out, h };
}

/** One query's candidates: raw feature rows and 0/1 labels. */
export interface ScorerGroup {
  rows: Float64Array[];
  labels: number[];
}

export interface TrainScorerOptions {
  features: readonly string[];
  /** Indices of topic features; an empty list trains a topic-free scorer on the base features. */
  topicFeatures: number[];
  /** Only these feature indices are used (others fixed at neutral); default all. */
  use?: number[];
  hidden?: number;
  loss?: 'bce' | 'listwise';
  epochs?: number;
  learningRate?: number;
  l2?: number;
  seed?: number;
}

export interface TrainedScorer {
  scorer: TopicScorer;
  /** Mean training loss per epoch (the first entry is before any update). */
  losses: number[];
}

export function trainScorer(groups: readonly ScorerGroup[], options: TrainScorerOptions): TrainedScorer {
  const f = options.features.length;
  const hidden = options.hidden ?? 8;
  const loss = options.loss ?? 'listwise';
  const epochs = options.epochs ?? 30;
  const lr = options.learningRate ?? 0.01;
  const l2 = options.l2 ?? 1e-4;
  const random = seededRandom(options.seed ?? 1);
  const use = new Set(options.use ?? Array.from({ length: f }, (_, j) => j));

  // Standardisation from the training rows (NaN → ignored); unused features get std 1, mean 0
  // and zero weight, so they never move a score.
  const mean = new Array<number>(f).fill(0);
  const std = new Array<number>(f).fill(1);
  for (let j = 0; j < f; j++) {
    if (!use.has(j)) continue;
    let s = 0;
    let s2 = 0;
    let c = 0;
    for (const g of groups)
      for (const r of g.rows) {
        const x = r[j] as number;
        if (!Number.isFinite(x)) continue;
        s += x;
        s2 += x * x;
        c++;
      }
    if (c > 0) {
      mean[j] = s / c;
      std[j] = Math.sqrt(Math.max(s2 / c - (s / c) ** 2, 0)) || 1;
    }
  }
  const width = hidden === 0 ? 1 : hidden;
  const w: ScorerWeights = {
    features: [...options.features],
    mean,
    std,
    topicFeatures: [...options.topicFeatures],
    hidden,
    w1: Array.from({ length: width * f }, (_, i) => (use.has(i % f) ? (random() * 2 - 1) * Math.sqrt(1 / f) : 0)),
    b1: new Array<number>(hidden).fill(0),
    w2: Array.from({ length: hidden }, () => (random() * 2 - 1) * Math.sqrt(1 / Math.max(1, hidden))),
    b2: 0,
  };
  const scorer = new TopicScorer(w);
  const data = groups
    .filter((g) => g.rows.length > 0 && (loss === 'bce' || g.labels.some((l) => l > 0)))
    .map((g) => ({ z: g.rows.map((r) => scorer.standardize(r)), labels: g.labels }));
  let positives = 0;
  let total = 0;
  for (const d of data)
    for (const l of d.labels) {
      if (l > 0) positives++;
      total++;
    }
  const posWeight = positives > 0 ? Math.min(20, (total - positives) / positives) : 1;

  // Adam state over one flat parameter view.
  const params: number[][] = [w.w1, w.b1, w.w2];
  const m1 = params.map((p) => new Float64Array(p.length));
  const v1 = params.map((p) => new Float64Array(p.length));
  let mb2 = 0;
  let vb2 = 0;
  let step = 0;
  const beta1 = 0.9;
  const beta2 = 0.999;
  const eps = 1e-8;

  const groupLoss = (d: (typeof data)[number], grads?: { g: Float64Array[]; gb2: { v: number } }): number => {
    const fw = d.z.map((z) => forward(w, z));
    const outs = fw.map((x) => x.out);
    let lossValue = 0;
    const dOut = new Float64Array(outs.length);
    if (loss === 'bce') {
      outs.forEach((o, i) => {
        const y = (d.labels[i] as number) > 0 ? 1 : 0;
        const p = 1 / (1 + Math.exp(-o));
        const wt = y === 1 ? posWeight : 1;
        lossValue += -wt * (y * Math.log(Math.max(p, 1e-12)) + (1 - y) * Math.log(Math.max(1 - p, 1e-12)));
        dOut[i] = (wt * (p - y)) / outs.length;
      });
      lossValue /= outs.length;
    } else {
      const max = Math.max(...outs);
      const exps = outs.map((o) => Math.exp(o - max));
      const z = exps.reduce((a, b) => a + b, 0);
      const pos = d.labels.filter((l) => l > 0).length;
      outs.forEach((o, i) => {
        const t = (d.labels[i] as number) > 0 ? 1 / pos : 0;
        const p = (exps[i] as number) / z;
        if (t > 0) lossValue -= t * Math.log(Math.max(p, 1e-12));
        dOut[i] = p - t;
      });
    }
    if (grads) {
      const [g1, gb1, g2] = grads.g as [Float64Array, Float64Array, Float64Array];
      d.z.forEach((z, i) => {
        const go = dOut[i] as number;
        if (go === 0) return;
        grads.gb2.v += go;
        if (hidden === 0) {
          for (let j = 0; j < f; j++) g1[j] = (g1[j] as number) + go * (z[j] as number);
          return;
        }
        const h = fw[i]!.h;
        for (let u = 0; u < hidden; u++) {
          g2[u] = (g2[u] as number) + go * (h[u] as number);
          const gh = go * (w.w2[u] as number) * (1 - (h[u] as number) ** 2);
          gb1[u] = (gb1[u] as number) + gh;
          for (let j = 0; j < f; j++) g1[u * f + j] = (g1[u * f + j] as number) + gh * (z[j] as number);
        }
      });
    }
    return lossValue;
  };

  const meanLoss = (): number => (data.length === 0 ? 0 : data.reduce((s, d) => s + groupLoss(d), 0) / data.length);
  const losses = [meanLoss()];
  const batch = 16;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const order = shuffled(data, random);
    for (let b = 0; b < order.length; b += batch) {
      const grads = { g: params.map((p) => new Float64Array(p.length)), gb2: { v: 0 } };
      const slice = order.slice(b, b + batch);
      for (const d of slice) groupLoss(d, grads);
      step++;
      const c1 = 1 - beta1 ** step;
      const c2 = 1 - beta2 ** step;
      params.forEach((p, pi) => {
        const g = grads.g[pi] as Float64Array;
        const m = m1[pi] as Float64Array;
        const v = v1[pi] as Float64Array;
        for (let i = 0; i < p.length; i++) {
          // Unused input features keep weight 0 (their column of w1).
          if (pi === 0 && !use.has(i % f)) continue;
          const gi = (g[i] as number) / slice.length + (pi === 1 ? 0 : l2 * (p[i] as number));
          m[i] = beta1 * (m[i] as number) + (1 - beta1) * gi;
          v[i] = beta2 * (v[i] as number) + (1 - beta2) * gi * gi;
          p[i] = (p[i] as number) - (lr * ((m[i] as number) / c1)) / (Math.sqrt((v[i] as number) / c2) + eps);
        }
      });
      const gb = grads.gb2.v / slice.length;
      mb2 = beta1 * mb2 + (1 - beta1) * gb;
      vb2 = beta2 * vb2 + (1 - beta2) * gb * gb;
      w.b2 -= (lr * (mb2 / c1)) / (Math.sqrt(vb2 / c2) + eps);
    }
    losses.push(meanLoss());
  }
  return { scorer, losses };
}
