/**
 * Cross-validated choice of how far to train and how much of the adapter to apply (the default
 * recipe of `canopy train` and of the extension's Train command).
 *
 * A single validation split of the training questions (`recall-guard`) is too small a sample for
 * "no lower gold recall": 60 validation questions said "recall unchanged" where 60 held-back
 * questions then lost 3.3 points (docs/annotations.md). Here every training question is used
 * for selection once, by a model that never trained on it:
 *
 * 1. the training questions are dealt (seeded) into k folds;
 * 2. k adapters are trained in lockstep, each on the other folds' pairs; after every epoch each
 *    is evaluated on its own fold at every blend weight α (node vector v + α·A·B·v), giving per
 *    question counts for every candidate (epoch, α) — the untrained encoder is the baseline;
 * 3. the counts are pooled over the folds. A candidate is eligible when its pooled
 *    refinement-decision accuracy is higher, its evidence tokens fewer and its gold recall not
 *    lower than the untrained encoder's. Among the eligible, the one whose gold-recall gain has
 *    the highest one-sided 95 % lower confidence bound (paired over questions) is chosen — the
 *    most *certainly* recall-safe improvement, not the one that only just ties — then higher
 *    pooled accuracy, smaller α and the earlier epoch break ties. Training stops when that
 *    bound has not improved for `patience` epochs;
 * 4. the caller refits one adapter on all training questions for as many optimizer steps as the
 *    fold adapters took to the chosen epoch, and applies it at the chosen α. When no candidate
 *    is eligible the untrained encoder (the identity) is kept.
 */
import type { TokenCounter } from '../compress/tokens';
import type { ProgressSink } from '../ports';
import { seededRandom } from '../random';
import { adapterFromWeights } from './checkpoint';
import type { LowRank, TrainPair } from './lowRank';
import { addQuestionCounts, questionCounts, sideMetrics, zeroCounts, type PreparedQuestion, type QuestionCounts } from './report';
import type { SideMetrics } from '../../contracts/training';
import { resolveTrainOptions, trainSteps, type TrainOptions } from './trainer';

/** Folds of the default recipe. */
export const CV_FOLDS = 4;
/** z of the one-sided 95 % lower confidence bound on the recall gain. */
export const RECALL_GAIN_Z = 1.645;

export interface CvCandidate {
  epoch: number;
  blend: number;
  /** Pooled over the folds (each question scored by the adapter that did not train on it). */
  metrics: SideMetrics;
  /** Gold-recall gain over the untrained encoder, pooled, and its one-sided 95 % lower bound. */
  recallGain: number;
  recallGainLowerBound: number;
  eligible: boolean;
}

export interface CrossValidation {
  folds: number;
  questions: number;
  /** Epochs each fold adapter was trained. */
  epochsRun: number;
  baseline: SideMetrics;
  /** Absent when no candidate was eligible (the identity is kept). */
  chosen?: CvCandidate & { steps: number };
  /** The best candidate of each epoch (eligible first), for the report. */
  perEpoch: CvCandidate[];
}

export interface CrossValidateOptions {
  dim: number;
  prepared: ReadonlyMap<string, PreparedQuestion>;
  /** The training questions (never the held-back ones). */
  keys: readonly string[];
  folds: number;
  /** Blend weights tried (e.g. [1], or BLEND_WEIGHTS). */
  blends: readonly number[];
  tokens: TokenCounter;
  pairs: (keys: readonly string[]) => TrainPair[];
  /** The trainer's options; `epochs` caps and `patience` stops the lockstep run. */
  train?: TrainOptions;
  blendWeights: (w: LowRank, alpha: number) => LowRank;
  signal?: AbortSignal;
  progress?: ProgressSink;
}

/** Keys shuffled by `seed`, dealt round-robin into `k` folds (each sorted). */
export function dealFolds(keys: readonly string[], k: number, seed: number): string[][] {
  const shuffled = [...keys].sort();
  const rand = seededRandom(seed);
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return Array.from({ length: k }, (_, f) => shuffled.filter((_, i) => i % k === f).sort());
}

/** Pooled gold-recall gain of `after` over `before` (per question counts, same questions) and its lower bound. */
export function recallGainBound(before: readonly QuestionCounts[], after: readonly QuestionCounts[], z = RECALL_GAIN_Z): { gain: number; lowerBound: number } {
  const n = before.length;
  const spans = before.reduce((s, c) => s + c.goldSpans, 0);
  if (n === 0 || spans === 0) return { gain: 0, lowerBound: 0 };
  const d = before.map((b, i) => after[i]!.goldKept - b.goldKept);
  const mean = d.reduce((s, x) => s + x, 0) / n;
  const variance = n > 1 ? d.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1) : 0;
  const gain = (mean * n) / spans;
  // SE of Σd / Σspans with the spans taken as fixed: sd·√n / Σspans.
  return { gain, lowerBound: gain - (z * Math.sqrt(variance) * Math.sqrt(n)) / spans };
}

const sum = (cs: readonly QuestionCounts[]) => cs.reduce(addQuestionCounts, zeroCounts());

/**
 * One candidate's pooled figures against the untrained encoder's (`before`, the same questions
 * in the same order): eligible when decision accuracy is higher, evidence tokens fewer and gold
 * recall not lower.
 */
export function scoreCandidate(epoch: number, blend: number, before: readonly QuestionCounts[], after: readonly QuestionCounts[]): CvCandidate {
  const baseline = sideMetrics(sum(before), before.length);
  const metrics = sideMetrics(sum(after), after.length);
  const { gain, lowerBound } = recallGainBound(before, after);
  const eligible = metrics.decisionAccuracy > baseline.decisionAccuracy && metrics.evidenceTokens < baseline.evidenceTokens && metrics.goldRecall >= baseline.goldRecall;
  return { epoch, blend, metrics, recallGain: gain, recallGainLowerBound: lowerBound, eligible };
}

/** Whether `a` beats `b`: eligible first, then the recall gain's lower bound, accuracy, smaller α, earlier epoch. */
export function betterCandidate(a: CvCandidate, b: CvCandidate | undefined): boolean {
  if (!b) return true;
  const ka = [a.eligible ? 1 : 0, a.recallGainLowerBound, a.metrics.decisionAccuracy, -a.blend, -a.epoch];
  const kb = [b.eligible ? 1 : 0, b.recallGainLowerBound, b.metrics.decisionAccuracy, -b.blend, -b.epoch];
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! > kb[i]!;
  return false;
}

export async function crossValidate(o: CrossValidateOptions): Promise<CrossValidation> {
  const t = resolveTrainOptions(o.train ?? {});
  const k = Math.min(o.folds, o.keys.length);
  const folds = dealFolds(o.keys, k, t.seed + 2);
  const questionsOf = folds.map((f) => f.map((key) => o.prepared.get(key)!));
  const baseCounts = questionsOf.map((qs) => qs.map((q) => questionCounts(q, o.tokens)));
  const pooledBase = baseCounts.flat();
  const baseline = sideMetrics(sum(pooledBase), pooledBase.length);

  // counts[fold][epoch - 1][blend index] = per question counts on that fold.
  const counts: QuestionCounts[][][][] = folds.map(() => []);
  const batches: number[] = [];
  const runs = folds.map((fold, fi) => {
    const inFold = new Set(fold);
    const pairs = o.pairs(o.keys.filter((key) => !inFold.has(key)));
    batches.push(Math.ceil(pairs.length / t.batchSize));
    let calls = 0;
    return trainSteps(o.dim, pairs, o.pairs(fold), {
      ...o.train,
      // Lockstep: every epoch is kept going here; the pooled criterion below decides when to stop.
      patience: Number.MAX_SAFE_INTEGER,
      select: (w) => {
        if (calls++ > 0) counts[fi]!.push(o.blends.map((alpha) => questionsOf[fi]!.map((q) => questionCounts(q, o.tokens, adapterFromWeights(o.blendWeights(w, alpha))))));
        return { score: calls, eligible: true };
      },
      ...(o.signal ? { signal: o.signal } : {}),
    });
  });

  const perEpoch: CvCandidate[] = [];
  let chosen: CvCandidate | undefined;
  let bestEpoch = 0;
  let epochsRun = 0;
  for (let epoch = 1; epoch <= t.epochs; epoch++) {
    for (const [fi, run] of runs.entries()) {
      while (counts[fi]!.length < epoch) {
        if (run.next().done) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    if (counts.some((c) => c.length < epoch)) break;
    epochsRun = epoch;
    let bestHere: CvCandidate | undefined;
    for (const [bi, blend] of o.blends.entries()) {
      const c = scoreCandidate(
        epoch,
        blend,
        pooledBase,
        counts.flatMap((fc) => fc[epoch - 1]![bi]!),
      );
      if (betterCandidate(c, bestHere)) bestHere = c;
    }
    perEpoch.push(bestHere!);
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    o.progress?.report({
      done: epoch,
      total: t.epochs,
      message: `cross-validation epoch ${epoch}: best α ${bestHere!.blend}, decision acc ${pct(bestHere!.metrics.decisionAccuracy)}, recall gain ${pct(bestHere!.recallGain)} (≥ ${pct(bestHere!.recallGainLowerBound)})${bestHere!.eligible ? '' : ', not eligible'}`,
    });
    if (bestHere!.eligible && betterCandidate(bestHere!, chosen)) {
      chosen = bestHere;
      bestEpoch = epoch;
    } else if (epoch - bestEpoch >= t.patience) break;
  }
  for (const run of runs) run.return(undefined as never);
  // Refit for as many optimizer steps as the fold adapters took to the chosen epoch (their mean).
  const steps = chosen ? Math.round((chosen.epoch * batches.reduce((s, b) => s + b, 0)) / Math.max(1, batches.length)) : 0;
  return { folds: k, questions: o.keys.length, epochsRun, baseline, ...(chosen ? { chosen: { ...chosen, steps } } : {}), perEpoch };
}
