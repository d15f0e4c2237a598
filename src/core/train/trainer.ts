/**
 * Trains the low-rank node adapter on preference pairs: Adam on A and B with weight decay,
 * seeded shuffling, early stopping on a validation split (held back from the training
 * questions by the caller), cancellable between batches, with per-epoch progress. Same pairs,
 * same options, same seed → the same weights, bit for bit.
 */
import { throwIfCancelled } from '../errors';
import type { ProgressSink } from '../ports';
import { seededRandom } from '../random';
import { initLowRank, lossAndGradient, rankingLoss, type LowRank, type TrainPair } from './lowRank';

export interface TrainOptions {
  rank?: number;
  /** Most passes over the training pairs (default 30). */
  epochs?: number;
  /** Adam step size (default 0.003). */
  learningRate?: number;
  batchSize?: number;
  /** Multiplies cosine differences inside the logistic loss (cosines differ by little; default 20). */
  scale?: number;
  /** L2 penalty on A and B, keeping W near the identity (default 1e-4). */
  weightDecay?: number;
  /** Epochs without a better validation loss before stopping (default 4). */
  patience?: number;
  seed?: number;
  /**
   * Model selection other than the validation loss: called with the weights after each epoch
   * (and once before training); the best `score` among `eligible` epochs is kept and patience
   * counts epochs without a better one. The identity (epoch 0) competes too.
   */
  select?: (weights: LowRank) => { score: number; eligible: boolean };
  /**
   * Stop after this many batches (optimizer steps) in all, mid-epoch if need be, and return the
   * weights then: no selection, no early stopping. Used to refit on all training questions for as
   * many updates as cross-validation chose.
   */
  steps?: number;
  signal?: AbortSignal;
  progress?: ProgressSink;
}

export interface EpochRecord {
  epoch: number;
  trainLoss: number;
  validationLoss: number;
  /** The `select` score, when selecting by one. */
  selectScore?: number;
  eligible?: boolean;
}

export interface TrainResult {
  weights: LowRank;
  /** Loss of the identity adapter (before training) and of the returned weights. */
  initialTrainLoss: number;
  finalTrainLoss: number;
  initialValidationLoss: number;
  finalValidationLoss: number;
  bestEpoch: number;
  epochs: EpochRecord[];
  options: Required<Omit<TrainOptions, 'signal' | 'progress' | 'select' | 'steps'>>;
  /** Whether a `select` function chose the epoch (else the validation loss did, or `steps` fixed the end). */
  selectedBy: 'validation-loss' | 'select' | 'steps';
  /** Optimizer steps taken to the returned weights. */
  steps: number;
}

export function resolveTrainOptions(o: TrainOptions): Required<Omit<TrainOptions, 'signal' | 'progress' | 'select' | 'steps'>> {
  return {
    rank: o.rank ?? 16,
    epochs: o.epochs ?? 30,
    learningRate: o.learningRate ?? 0.003,
    batchSize: o.batchSize ?? 64,
    scale: o.scale ?? 20,
    weightDecay: o.weightDecay ?? 1e-4,
    patience: o.patience ?? 4,
    seed: o.seed ?? 1,
  };
}

function shuffle<T>(xs: T[], rand: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

export function trainLowRank(dim: number, train: readonly TrainPair[], validation: readonly TrainPair[], options: TrainOptions = {}): TrainResult {
  const steps = trainSteps(dim, train, validation, options);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * The same training, giving the event loop a turn after every batch, so that a host that runs it
 * in its own thread (the extension) stays responsive and can cancel it mid-epoch. Same weights.
 */
export async function trainLowRankAsync(dim: number, train: readonly TrainPair[], validation: readonly TrainPair[], options: TrainOptions = {}): Promise<TrainResult> {
  const steps = trainSteps(dim, train, validation, options);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * The training loop; yields after each batch (and calls `select` after each epoch), so a caller can
 * drive several runs in lockstep (cross-validation) or stop one when it likes.
 */
export function* trainSteps(dim: number, train: readonly TrainPair[], validation: readonly TrainPair[], options: TrainOptions): Generator<void, TrainResult, void> {
  const o = resolveTrainOptions(options);
  const m = initLowRank(dim, o.rank, o.seed);
  const rand = seededRandom(o.seed ^ 0x9e3779b9);
  const params = [m.A, m.B];
  const mom = params.map((p) => new Float64Array(p.length));
  const vel = params.map((p) => new Float64Array(p.length));
  const beta1 = 0.9;
  const beta2 = 0.999;
  let step = 0;
  // Without a validation split, early stopping watches the training loss.
  const watch = validation.length > 0 ? validation : train;
  const initialTrainLoss = rankingLoss(m, train, o.scale);
  const initialValidationLoss = rankingLoss(m, watch, o.scale);
  const initialSelect = options.select?.(m);
  let best = { loss: initialValidationLoss, score: initialSelect?.eligible ? initialSelect.score : Number.NEGATIVE_INFINITY, epoch: 0, steps: 0, A: m.A.slice(), B: m.B.slice() };
  const epochs: EpochRecord[] = [];
  const order = train.map((_, i) => i);
  const fixedSteps = options.steps;
  for (let epoch = 1; epoch <= o.epochs && !(fixedSteps !== undefined && step >= fixedSteps); epoch++) {
    shuffle(order, rand);
    let trainLoss = 0;
    let seen = 0;
    for (let start = 0; start < order.length; start += o.batchSize) {
      throwIfCancelled(options.signal);
      const batch = order.slice(start, start + o.batchSize).map((i) => train[i]!);
      const { loss, gA, gB } = lossAndGradient(m, batch, o.scale);
      trainLoss += loss * batch.length;
      seen += batch.length;
      step++;
      const grads = [gA, gB];
      const c1 = 1 - beta1 ** step;
      const c2 = 1 - beta2 ** step;
      params.forEach((p, pi) => {
        const g = grads[pi]!;
        const mm = mom[pi]!;
        const vv = vel[pi]!;
        for (let i = 0; i < p.length; i++) {
          const gi = g[i]! + o.weightDecay * p[i]!;
          mm[i] = beta1 * mm[i]! + (1 - beta1) * gi;
          vv[i] = beta2 * vv[i]! + (1 - beta2) * gi * gi;
          p[i] = p[i]! - (o.learningRate * (mm[i]! / c1)) / (Math.sqrt(vv[i]! / c2) + 1e-8);
        }
      });
      yield;
      if (fixedSteps !== undefined && step >= fixedSteps) break;
    }
    const validationLoss = rankingLoss(m, watch, o.scale);
    if (fixedSteps !== undefined) {
      epochs.push({ epoch, trainLoss: trainLoss / Math.max(1, seen), validationLoss });
      options.progress?.report({ done: epoch, total: Math.ceil(fixedSteps / Math.max(1, Math.ceil(order.length / o.batchSize))), message: `epoch ${epoch}: train loss ${(trainLoss / Math.max(1, seen)).toFixed(4)}` });
      best = { loss: validationLoss, score: Number.NEGATIVE_INFINITY, epoch, steps: step, A: m.A.slice(), B: m.B.slice() };
      if (step >= fixedSteps) break;
      continue;
    }
    const sel = options.select?.(m);
    epochs.push({ epoch, trainLoss: trainLoss / Math.max(1, order.length), validationLoss, ...(sel ? { selectScore: sel.score, eligible: sel.eligible } : {}) });
    options.progress?.report({ done: epoch, total: o.epochs, message: `epoch ${epoch}: train loss ${(trainLoss / Math.max(1, order.length)).toFixed(4)}, validation loss ${validationLoss.toFixed(4)}` });
    const better = sel ? sel.eligible && sel.score > best.score : validationLoss < best.loss;
    if (better) best = { loss: validationLoss, score: sel?.score ?? Number.NEGATIVE_INFINITY, epoch, steps: step, A: m.A.slice(), B: m.B.slice() };
    else if (epoch - best.epoch >= o.patience) break;
  }
  m.A.set(best.A);
  m.B.set(best.B);
  return {
    weights: m,
    initialTrainLoss,
    finalTrainLoss: rankingLoss(m, train, o.scale),
    initialValidationLoss,
    finalValidationLoss: rankingLoss(m, watch, o.scale),
    bestEpoch: best.epoch,
    epochs,
    options: o,
    selectedBy: fixedSteps !== undefined ? 'steps' : options.select ? 'select' : 'validation-loss',
    steps: best.steps,
  };
}
