/**
 * A learned judgment as a logistic model over named features (house style, "Learned judgment, not
 * fitted rules"): `features(…) → Record<name, value>`, `predict → probability`, and each feature's
 * contribution to the logit (weight × standardised value), so the trace explains every decision
 * without re-deriving it.
 *
 * The model file (`canopy.judge`, version 1) is small JSON: the feature names, each feature's
 * centre and scale (the training set's mean and standard deviation), the weights on the
 * standardised values, the bias, an optional decision threshold, and how it was trained (data,
 * seed, command). A feature the model names but the caller does not give counts at its centre
 * (it contributes nothing): profile features exist only for documents of that profile. Features
 * the caller gives and the model does not name are ignored.
 */
import { CanopyError } from '../errors';
import type { TraceJudgment } from '../../contracts/trace';

export const JUDGE_MODEL_SCHEMA = 'canopy.judge';
export const JUDGE_MODEL_VERSION = 1;

export type FeatureValues = Readonly<Record<string, number>>;

export interface JudgeModelFile {
  schema: typeof JUDGE_MODEL_SCHEMA;
  version: typeof JUDGE_MODEL_VERSION;
  /** e.g. `reader-2026-12-07`; written into every judgment it makes. */
  id: string;
  kind: 'reader' | 'critic';
  features: string[];
  center: number[];
  scale: number[];
  weights: number[];
  bias: number;
  /** The probability at or above which the decision is "yes" (the critic's stop), when the model has one. */
  threshold?: number;
  /** Where it came from: data, seed, command, held-back figures. Free-form, for people. */
  training?: Record<string, unknown>;
}

export interface Prediction {
  probability: number;
  logit: number;
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

export class LinearModel {
  private constructor(readonly file: JudgeModelFile) {}

  get id(): string {
    return this.file.id;
  }

  get threshold(): number | undefined {
    return this.file.threshold;
  }

  get features(): readonly string[] {
    return this.file.features;
  }

  /** Checks a parsed model file; `where` names it in errors. */
  static from(value: unknown, where: string): LinearModel {
    const fail = (why: string): never => {
      throw new CanopyError('E_MODEL_INVALID', `${where}: not a usable judgment model: ${why}`);
    };
    if (typeof value !== 'object' || value === null) fail('not a JSON object');
    const f = value as Partial<JudgeModelFile>;
    if (f.schema !== JUDGE_MODEL_SCHEMA) fail(`schema must be "${JUDGE_MODEL_SCHEMA}"`);
    if (f.version !== JUDGE_MODEL_VERSION) fail(`version ${String(f.version)} is not supported (expected ${JUDGE_MODEL_VERSION})`);
    if (typeof f.id !== 'string' || f.id.length === 0) fail('id must be a non-empty string');
    if (f.kind !== 'reader' && f.kind !== 'critic') fail('kind must be "reader" or "critic"');
    const n = Array.isArray(f.features) ? f.features.length : fail('features must be a list');
    for (const key of ['center', 'scale', 'weights'] as const) {
      const xs = f[key];
      if (!Array.isArray(xs) || xs.length !== n || xs.some((x) => typeof x !== 'number' || !Number.isFinite(x))) fail(`${key} must be ${n} finite numbers`);
    }
    if (f.features!.some((x) => typeof x !== 'string') || new Set(f.features).size !== n) fail('features must be distinct names');
    if (f.scale!.some((s) => s <= 0)) fail('every scale must be positive');
    if (typeof f.bias !== 'number' || !Number.isFinite(f.bias)) fail('bias must be a finite number');
    if (f.threshold !== undefined && (typeof f.threshold !== 'number' || f.threshold < 0 || f.threshold > 1)) fail('threshold must be between 0 and 1');
    return new LinearModel(f as JudgeModelFile);
  }

  /** The standardised value of feature i for these values (0 when absent). */
  private z(values: FeatureValues, i: number): number {
    const v = values[this.file.features[i]!];
    return v === undefined || !Number.isFinite(v) ? 0 : (v - this.file.center[i]!) / this.file.scale[i]!;
  }

  predict(values: FeatureValues): Prediction {
    let logit = this.file.bias;
    for (let i = 0; i < this.file.features.length; i++) logit += this.file.weights[i]! * this.z(values, i);
    return { probability: sigmoid(logit), logit };
  }

  /** The prediction with every named feature's value and contribution, largest magnitude first (at most `top`). */
  explain(values: FeatureValues, top = 12): TraceJudgment {
    const { probability } = this.predict(values);
    const contributions = this.file.features
      .map((feature, i) => ({ feature, value: round(values[feature] ?? this.file.center[i]!), contribution: round(this.file.weights[i]! * this.z(values, i)) }))
      .filter((c) => c.contribution !== 0)
      .sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution))
      .slice(0, top);
    return { model: this.file.id, probability: round(probability), ...(this.file.threshold !== undefined ? { threshold: this.file.threshold } : {}), bias: round(this.file.bias), contributions };
  }
}

const round = (x: number) => Math.round(x * 10000) / 10000;
