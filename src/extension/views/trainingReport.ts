/**
 * The inspector's Training view data, without VS Code: the adapter checkpoints (the files
 * `src/core/train/checkpoint.ts` writes — no second format) summarised for the webview, newest
 * first, with the one the `canopy.adapter.checkpoint` setting names marked active, and the
 * figures only a just-finished run knows (the split and the §10 preference counts).
 *
 * A checkpoint's `metrics` is free-form JSON (older or hand-edited files may lack parts of it):
 * every figure is read defensively and left out when it is not there or not a finite number, so
 * the webview's validation never refuses a report because of one odd checkpoint.
 */
import * as path from 'node:path';
import type { PreferenceCounts } from '../../core/annotate/preferences';
import type { AdapterCheckpoint } from '../../core/train/checkpoint';
import type { TrainRunReport } from '../../core/train/run';
import { describeFusion } from '../../core/app/scoringFit';
import { describeWeights } from '../../core/train/nodeScoreFit';
import type { ScoringReport } from '../../core/train/scoringReport';
import type { TrainingCheckpointSummary, TrainingFigures, TrainingPreferenceCounts, TrainingReport, TrainingRunSummary, TrainingScoring } from '../../protocol/messages';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const count = (v: unknown): number | undefined => (finite(v) && v >= 0 ? Math.round(v) : undefined);
const clampShare = (v: number) => Math.min(1, Math.max(0, v));

const shareKeys = ['decisionAccuracy', 'pairAccuracy', 'goldRecall', 'prunedItemShare'] as const;
const countKeys = ['decisions', 'pairs', 'goldSpans', 'evidenceTokens', 'wholeTokens', 'items', 'questions'] as const;

/** `SideMetrics` (or its JSON) → the protocol's figures; undefined when a figure is missing. */
export function trainingFigures(v: unknown): TrainingFigures | undefined {
  if (!isRecord(v)) return undefined;
  const out: Partial<TrainingFigures> = {};
  for (const k of shareKeys) {
    const x = v[k];
    if (!finite(x)) return undefined;
    out[k] = clampShare(x);
  }
  for (const k of countKeys) {
    const x = count(v[k]);
    if (x === undefined) return undefined;
    out[k] = x;
  }
  out.tokenShare = finite(v.tokenShare) ? Math.max(0, v.tokenShare) : out.wholeTokens! > 0 ? out.evidenceTokens! / out.wholeTokens! : 0;
  return out as TrainingFigures;
}

function recipeText(recipe: unknown): string | undefined {
  if (!isRecord(recipe)) return undefined;
  const parts: string[] = [];
  if (recipe.selection === 'recall-guard') parts.push('recall-guarded selection');
  else if (recipe.selection === 'loss') parts.push('selection by validation loss');
  else if (recipe.selection === 'cross-validated') parts.push(`cross-validated selection${finite(recipe.folds) ? ` (${recipe.folds} folds)` : ''}`);
  else if (typeof recipe.selection === 'string' && recipe.selection) parts.push(`selection ${recipe.selection}`);
  if (finite(recipe.blend) && recipe.blend !== 1) parts.push(`blend ${recipe.blend}`);
  parts.push(recipe.prunePairs === true ? '§10 + prune-sibling pairs' : '§10 pairs');
  if (recipe.balanceRules === true) parts.push('rules balanced');
  if (finite(recipe.validation)) parts.push(`validation ${recipe.validation}`);
  if (finite(recipe.holdout)) parts.push(`held back ${recipe.holdout}`);
  return parts.join(', ');
}

/** One checkpoint as the Training view lists it. */
export function checkpointSummary(c: AdapterCheckpoint, active: boolean): TrainingCheckpointSummary {
  const m = isRecord(c.metrics) ? c.metrics : {};
  const training = isRecord(m.training) ? m.training : {};
  const options = isRecord(training.options) ? training.options : {};
  const report = isRecord(m.report) ? m.report : {};
  const before = trainingFigures(report.before);
  const after = trainingFigures(report.after);
  const validation = isRecord(m.validation) ? { before: trainingFigures(m.validation.before), after: trainingFigures(m.validation.after) } : undefined;
  const ask = isRecord(m.ask) && typeof m.ask.configuration === 'string' && typeof m.ask.configurationBefore === 'string' ? m.ask : undefined;
  const askBefore = ask ? trainingFigures(ask.before) : undefined;
  const askAfter = ask ? trainingFigures(ask.after) : undefined;
  const trainedOn: Record<string, unknown> = isRecord(c.trainedOn) ? c.trainedOn : {};
  const recipe = recipeText(m.recipe);
  const seed = finite(options.seed) && Number.isSafeInteger(options.seed) ? options.seed : undefined;
  const bestEpoch = count(training.bestEpoch);
  const epochs = Array.isArray(training.epochs) ? training.epochs.length : undefined;
  return {
    id: c.id,
    createdAt: c.createdAt,
    active,
    baseEncoderId: c.baseEncoderId,
    rank: count(c.rank) ?? 0,
    ...(seed !== undefined ? { seed } : {}),
    ...(bestEpoch !== undefined ? { bestEpoch } : {}),
    ...(epochs !== undefined ? { epochs } : {}),
    ...(recipe ? { recipe } : {}),
    trainedOn: {
      questions: count(trainedOn.questions) ?? 0,
      annotations: count(trainedOn.annotations) ?? 0,
      pairs: count(trainedOn.pairs) ?? 0,
      validationPairs: count(trainedOn.validationPairs) ?? 0,
    },
    ...(Array.isArray(m.heldOutQuestions) ? { heldOutQuestions: m.heldOutQuestions.length } : {}),
    ...(before && after ? { before, after } : {}),
    ...(validation?.before && validation.after ? { validation: { before: validation.before, after: validation.after } } : {}),
    ...(ask && askBefore && askAfter ? { ask: { configurationBefore: ask.configurationBefore as string, configuration: ask.configuration as string, blend: finite(ask.blend) ? ask.blend : 1, before: askBefore, after: askAfter } } : {}),
  };
}

function preferenceCounts(c: PreferenceCounts): TrainingPreferenceCounts {
  return { pairs: c.pairs, refine: c.perRule.refine, keepWhole: c.perRule['keep-whole'], identical: c.identical, itemsWithGold: c.itemsWithGold, itemsWithoutGold: c.itemsWithoutGold };
}

const clampNdcg = (x: number) => (Number.isFinite(x) ? clampShare(x) : 0);

/** The run's fusion and node-score fits, in words and figures, for the Training view. */
export function scoringSummary(s: ScoringReport): TrainingScoring {
  const f = s.fusion;
  const n = s.nodeScore;
  const before = n.heldBack ? trainingFigures(n.heldBack.before) : undefined;
  const after = n.heldBack ? trainingFigures(n.heldBack.after) : undefined;
  return {
    fusion: {
      adopted: f.adopted,
      reason: f.reason,
      before: describeFusion(f.before),
      ...(f.after ? { after: describeFusion(f.after) } : {}),
      questions: { ...f.questions },
      ...(f.heldBack ? { heldBack: { questions: f.heldBack.questions, before: clampNdcg(f.heldBack.before), after: clampNdcg(f.heldBack.after) } } : {}),
    },
    nodeScore: { adopted: n.adopted, reason: n.reason, before: describeWeights(n.before), after: describeWeights(n.after), ...(before && after ? { heldBack: { before, after } } : {}) },
    ...(s.profile ? { profileFile: s.profile.file } : {}),
  };
}

/** The figures of a just-finished run that checkpoints do not keep. */
export function runSummary(r: TrainRunReport): TrainingRunSummary {
  return {
    ...(r.scoring ? { scoring: scoringSummary(r.scoring) } : {}),
    ...(r.ask
      ? {
          ask: {
            before: r.ask.describe.before,
            after: r.ask.describe.after,
            blend: r.ask.blend,
            adopted: r.ask.adopted,
            reason: r.ask.reason,
            ...(r.ask.heldBack ? { heldBack: { before: r.ask.heldBack.before, after: r.ask.heldBack.after, plainBefore: r.ask.heldBack.plain.before, plainAfter: r.ask.heldBack.plain.after } } : {}),
            ...(r.checkpointSkipped ? { checkpointSkipped: r.checkpointSkipped } : {}),
          },
        }
      : {}),
    ...(r.reader
      ? {
          reader: {
            base: r.reader.base,
            heldBack: r.reader.before.questions,
            before: r.reader.before.firstOnGold,
            ...(r.reader.after ? { after: r.reader.after.firstOnGold } : {}),
            ...(r.reader.written ? { written: r.reader.written.id } : {}),
            reason: r.reader.reason,
          },
        }
      : {}),
    ...(r.checkpoint ? { checkpointId: r.checkpoint.id } : {}),
    questions: { ...r.questions },
    annotations: { total: r.annotations.total, lost: r.annotations.relocation.lost, corrupt: r.annotations.corrupt.length },
    preferences: { train: preferenceCounts(r.preferences.train), validation: preferenceCounts(r.preferences.validation), heldOut: preferenceCounts(r.preferences.heldOut) },
    prunePairs: { ...r.prunePairs },
  };
}

/**
 * The Training view for the checkpoints found (any order; shown newest first, one per id),
 * `active` the resolved path of the active checkpoint ('' = the untrained encoder), and the run
 * that just finished, if any.
 */
export function trainingReport(found: ReadonlyArray<{ file: string; checkpoint: AdapterCheckpoint }>, active: string, run?: TrainRunReport): TrainingReport {
  const sorted = [...found].sort((a, b) => b.checkpoint.createdAt.localeCompare(a.checkpoint.createdAt));
  const seen = new Set<string>();
  const activeFile = active ? path.resolve(active) : '';
  const activeId = sorted.find((f) => activeFile !== '' && path.resolve(f.file) === activeFile)?.checkpoint.id;
  const checkpoints: TrainingCheckpointSummary[] = [];
  for (const { checkpoint } of sorted) {
    if (seen.has(checkpoint.id)) continue;
    seen.add(checkpoint.id);
    checkpoints.push(checkpointSummary(checkpoint, checkpoint.id === activeId));
  }
  return {
    checkpoints,
    ...(activeFile && !activeId ? { activeNote: `The active checkpoint setting names ${path.basename(activeFile)}, which is not among the checkpoints listed here.` } : {}),
    ...(run ? { lastRun: runSummary(run) } : {}),
  };
}
