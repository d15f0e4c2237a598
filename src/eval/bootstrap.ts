/**
 * Paired bootstrap confidence intervals (seeded, so a rerun prints the same intervals). Every
 * metric is a ratio of sums over questions — Σ numerator / Σ denominator — which covers both
 * per-question means (denominator 1) and micro-averaged recalls (gold units kept / gold units).
 * "Paired": one set of resampled question indices is drawn and used for every configuration, so
 * the interval of a difference between two configurations (`differenceInterval`) accounts for
 * their being measured on the same questions.
 */
import { seededRandom } from '../core/random';

export interface Ratio {
  num: number;
  den: number;
}

export interface Interval {
  value: number;
  lo: number;
  hi: number;
  /** Questions with a defined value (den > 0). */
  n: number;
}

/** Resampled question index lists, shared by every configuration of a run. */
export class BootstrapPlan {
  readonly samples: Uint32Array[];

  constructor(
    readonly questions: number,
    readonly resamples = 1000,
    readonly seed = 1,
  ) {
    const rand = seededRandom(seed);
    this.samples = [];
    for (let b = 0; b < resamples; b++) {
      const idx = new Uint32Array(questions);
      for (let i = 0; i < questions; i++) idx[i] = Math.floor(rand() * questions);
      this.samples.push(idx);
    }
  }

  /** Point value and percentile 95% interval of Σnum/Σden; per-question entries may be undefined (left out). */
  interval(values: ReadonlyArray<Ratio | undefined>, level = 0.95): Interval {
    if (values.length !== this.questions) throw new RangeError(`expected ${this.questions} values, got ${values.length}`);
    const value = ratio(values, undefined);
    const n = values.filter((v) => v !== undefined && v.den > 0).length;
    const stats: number[] = [];
    for (const idx of this.samples) {
      const r = ratio(values, idx);
      if (!Number.isNaN(r)) stats.push(r);
    }
    const [lo, hi] = percentiles(stats, level);
    return { value, lo, hi, n };
  }

  /** The metric on every resample (NaN where a resample has no defined value). */
  replicates(values: ReadonlyArray<Ratio | undefined>): Float64Array {
    const out = new Float64Array(this.samples.length);
    this.samples.forEach((idx, b) => {
      out[b] = ratio(values, idx);
    });
    return out;
  }

  /** Interval of metric(a) − metric(b), resampling the same questions for both. */
  differenceInterval(a: ReadonlyArray<Ratio | undefined>, b: ReadonlyArray<Ratio | undefined>, level = 0.95): Interval {
    const value = ratio(a, undefined) - ratio(b, undefined);
    const stats: number[] = [];
    for (const idx of this.samples) {
      const d = ratio(a, idx) - ratio(b, idx);
      if (!Number.isNaN(d)) stats.push(d);
    }
    const [lo, hi] = percentiles(stats, level);
    const n = a.filter((v, i) => v !== undefined && v.den > 0 && b[i] !== undefined && b[i]!.den > 0).length;
    return { value, lo, hi, n };
  }
}

export function ratio(values: ReadonlyArray<Ratio | undefined>, idx: Uint32Array | undefined): number {
  let num = 0;
  let den = 0;
  const count = idx ? idx.length : values.length;
  for (let j = 0; j < count; j++) {
    const v = values[idx ? idx[j]! : j];
    if (v === undefined || !(v.den > 0)) continue;
    num += v.num;
    den += v.den;
  }
  return den > 0 ? num / den : Number.NaN;
}

/** Percentile interval (linear interpolation between order statistics). */
export function percentiles(xs: number[], level: number): [number, number] {
  if (xs.length === 0) return [Number.NaN, Number.NaN];
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => {
    const pos = p * (s.length - 1);
    const lo = Math.floor(pos);
    const hi = Math.ceil(pos);
    return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
  };
  const tail = (1 - level) / 2;
  return [q(tail), q(1 - tail)];
}
