/**
 * One training run over a workspace's annotations: read → re-locate against the files as they
 * are now (lost spans are reported and left out) → group by question → split questions into
 * training and held-back sets (seeded; no question is in both) → parse the candidate files →
 * node vectors through the caller's cached embedder (never a fresh encode of the corpus) →
 * §10 preference pairs → train → before/after report on the held-back questions → checkpoint.
 *
 * Candidate items of a question: every file in the folders that hold its gold files (for an
 * imported dataset that is the question's own context, the "given items" setting of design §13).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { EmbedTexts } from '../encode/nodeVectors';
import { nodeVectors } from '../encode/nodeVectors';
import type { TokenCounter } from '../compress/tokens';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { formatForPath } from '../ingest/documentFormat';
import { parseFile } from '../ingest/parseFile';
import type { ParseOptions, ParsedDocument } from '../ingest/parsedDocument';
import type { Anchor, Item } from '../../contracts/region';
import { silentLogger, type Logger, type ProgressSink } from '../ports';
import { addCounts, buildPreferences, type PreferenceCounts } from '../annotate/preferences';
import { prunePairs, type PrunePair } from '../annotate/prunePairs';
import { relocateAll, type RelocationStatus } from '../annotate/relocate';
import { type Annotation, AnnotationStore, type CorruptLine } from '../annotate/store';
import { adapterFromWeights, makeCheckpoint, saveCheckpoint } from './checkpoint';
import type { LowRank, TrainPair } from './lowRank';
import type { ReaderFitReport } from './readerFit';
import type { ScoringReport } from './scoringReport';
import { beforeAfter, evaluateSide, type BeforeAfter, type PreparedQuestion } from './report';
import type { SideMetrics } from '../../contracts/training';
import { seededRandom } from '../random';
import { CV_FOLDS, crossValidate, type CrossValidation } from './crossValidate';
import { trainLowRankAsync, type TrainOptions, type TrainResult } from './trainer';
import type { AskConfiguration } from './askPipeline';
import { fitAsk, type AskFit } from './askFit';

export interface TrainRunOptions {
  /** The workspace folder the annotations' paths are relative to. */
  root: string;
  annotationsFile: string;
  /** Where the checkpoint is written; none is written when absent. */
  outDir?: string;
  /** Text → unit vectors through the embedding cache; also used for the (frozen) query side. */
  embed: EmbedTexts;
  encoderId: string;
  dim: number;
  tokens: TokenCounter;
  branchingFactor?: number;
  /**
   * Parses one candidate file. The hosts pass their parse workers (core/ingest/parsePool.ts), so
   * a hostile file fails alone under the memory and time limits instead of exhausting the
   * extension host; default: `parseFile` in this thread (tests, research scripts).
   */
  parse?: (relPath: string, bytes: Uint8Array, options: ParseOptions) => Promise<ParsedDocument>;
  /** Share of questions held back for the before/after report (default 0.2). */
  holdout?: number;
  /**
   * Share of the training questions carved off for selection with 'loss' and 'recall-guard'
   * (default 0.1). Cross-validation uses every training question instead.
   */
  validation?: number;
  train?: TrainOptions;
  /**
   * How the epoch (and blend) is chosen, on training questions only:
   * - 'cross-validated' (default): k folds of the training questions, the candidate (epoch, α)
   *   with the highest lower confidence bound on its gold-recall gain among those with higher
   *   decision accuracy, fewer tokens and no lower recall than the untrained encoder, then a refit
   *   on all training questions (`crossValidate.ts`);
   * - 'recall-guard': on one validation split, the highest refinement-decision accuracy among
   *   epochs whose gold recall is not below, and whose evidence tokens are not above, the
   *   untrained adapter's (the identity always qualifies);
   * - 'loss': the lowest validation ranking loss.
   */
  selection?: TrainSelection;
  /** Folds of 'cross-validated' (default `CV_FOLDS`, 4). */
  folds?: number;
  /**
   * Also try each epoch's adapter at a blend weight α (node vector v + α·A·B·v, i.e.
   * (1 − α)·v + α·W·v) from `BLEND_WEIGHTS`, under the selection's criterion; the checkpoint
   * stores the chosen blend (A scaled by α). Default on; needs 'recall-guard' or 'cross-validated'.
   */
  blend?: boolean;
  /**
   * Weight pairs so each rule carries an equal share of the loss (default on). Refine pairs
   * outnumber keep-whole pairs ~8:1, which teaches "children beat parents" in general;
   * balancing asks for both decisions.
   */
  balanceRules?: boolean;
  /**
   * Also train on the prune-sibling pairs of `annotate/prunePairs.ts` (a partly gold parent over
   * each of its gold-free children). Default on; off, the pairs are exactly §10's.
   */
  prunePairs?: boolean;
  /**
   * The configuration the workspace's ask runs (its compressor and node score, issue 36). When
   * given, the adapter's blend and the configuration are fitted to what an ask decides
   * (`askFit.ts`), the report measures the ask's configuration beside the plain rule, and the
   * checkpoint is written only when the fit is adopted (better on the held-back questions with
   * the ask's configuration) and the adapter takes part in it.
   */
  ask?: AskConfiguration;
  signal?: AbortSignal;
  progress?: ProgressSink;
  logger?: Logger;
}

export interface TrainRunReport {
  annotations: { total: number; corrupt: CorruptLine[]; relocation: Record<RelocationStatus, number> };
  questions: { total: number; train: number; validation: number; heldOut: number };
  preferences: { train: PreferenceCounts; validation: PreferenceCounts; heldOut: PreferenceCounts };
  /** Prune-sibling pairs used in training (0 unless `prunePairs`). */
  prunePairs: { train: number; validation: number };
  /**
   * How the epoch was chosen, and the figures that chose it: the validation questions' (or, for
   * 'cross-validated', the folds' pooled) untrained and chosen metrics.
   */
  selection: { by: TrainSelection; baseline?: SideMetrics; chosen?: SideMetrics; blend: number; crossValidation?: CrossValidation };
  training: Omit<TrainResult, 'weights'>;
  /** The plain rule's before/after on the held-back questions, for the adapter as written (with `ask`, the ask fit's blend). */
  report: BeforeAfter;
  /** The fit to the ask's configuration and its held-back figures (with `TrainRunOptions.ask`). */
  ask?: AskFit;
  /** Why no checkpoint was written though a folder was given (with `ask`: the fit was not adopted, or the adapter takes no part). */
  checkpointSkipped?: string;
  checkpoint?: { id: string; file: string };
  /**
   * The retrieval fusion and node-score weights fitted on the same split (the TrainingService
   * adds it; `runTraining` alone trains only the adapter).
   */
  scoring?: ScoringReport;
  /** The reader model fitted to the same gold spans (the TrainingService adds it; train/readerFit.ts). */
  reader?: ReaderFitReport;
}

export type TrainSelection = 'loss' | 'recall-guard' | 'cross-validated';

/**
 * The default recipe of `canopy train` and the extension's Train command (each flag has an
 * opt-out): prune-sibling pairs, balanced rules, cross-validated selection of epoch and blend.
 */
export const DEFAULT_RECIPE = { selection: 'cross-validated', prunePairs: true, balanceRules: true, blend: true, folds: CV_FOLDS } as const satisfies Partial<TrainRunOptions>;

/** Blend weights tried with `blend` (1 = the trained adapter as is). */
export const BLEND_WEIGHTS: readonly number[] = [0.25, 0.5, 0.75, 1];

/** v + α·A·B·v: the adapter's change to every node vector scaled by α (A scaled; B kept). */
export function blendWeights(w: LowRank, alpha: number): LowRank {
  return alpha === 1 ? w : { ...w, A: w.A.map((x) => x * alpha) };
}

/** Questions are grouped by dataset id when there is one, else by their text. */
export function questionKey(a: Annotation): string {
  return a.questionId !== undefined ? `id:${a.questionId}` : `q:${a.question}`;
}

/** Sorted keys shuffled by `seed`, the first `share` of them held back (at least one when share > 0 and there are ≥ 2). */
export function splitKeys(keys: readonly string[], share: number, seed: number): { kept: string[]; heldBack: string[] } {
  const sorted = [...keys].sort();
  const rand = seededRandom(seed);
  for (let i = sorted.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [sorted[i], sorted[j]] = [sorted[j]!, sorted[i]!];
  }
  let n = Math.round(sorted.length * share);
  if (share > 0 && n === 0 && sorted.length >= 2) n = 1;
  return { heldBack: sorted.slice(0, n).sort(), kept: sorted.slice(n).sort() };
}

const emptyCounts = (): PreferenceCounts => ({ pairs: 0, identical: 0, itemsWithGold: 0, itemsWithoutGold: 0, perRule: { refine: 0, 'keep-whole': 0 } });

/** Everything a training run needs that does not depend on the training options: read once, reusable. */
export interface PreparedRun {
  annotations: { total: number; corrupt: CorruptLine[]; relocation: Record<RelocationStatus, number> };
  split: { kept: string[]; heldBack: string[] };
  inner: { kept: string[]; heldBack: string[] };
  prepared: Map<string, PreparedQuestion>;
  counts: Map<string, PreferenceCounts>;
}

/** The options with `DEFAULT_RECIPE` filled in where the caller said nothing. */
export function withDefaults(o: TrainRunOptions): { selection: TrainSelection; prunePairs: boolean; balanceRules: boolean; blend: boolean; folds: number } {
  const selection = o.selection ?? DEFAULT_RECIPE.selection;
  return {
    selection,
    prunePairs: o.prunePairs ?? DEFAULT_RECIPE.prunePairs,
    balanceRules: o.balanceRules ?? DEFAULT_RECIPE.balanceRules,
    // Blending needs a selection that measures it; with 'loss' it stays off unless asked.
    blend: o.blend ?? (selection !== 'loss' && DEFAULT_RECIPE.blend),
    folds: o.folds ?? DEFAULT_RECIPE.folds,
  };
}

export async function runTraining(o: TrainRunOptions): Promise<TrainRunReport> {
  return trainPrepared(await prepareRun(o), o);
}

/** Read, re-locate, split, parse and embed: the part of a run shared by every training option. */
export async function prepareRun(o: TrainRunOptions): Promise<PreparedRun> {
  const log = o.logger ?? silentLogger;
  const store = new AnnotationStore(o.annotationsFile);
  const { annotations, corrupt } = await store.read();
  for (const c of corrupt) log.log('warn', `${c.file}:${c.line}: ${c.reason} (line kept, not used)`);
  if (annotations.length === 0) throw new CanopyError(ErrorCodes.badInput, `${o.annotationsFile} holds no annotations`, { file: o.annotationsFile });

  // Re-locate against the files as they are now.
  const readText = async (file: string) => fs.readFile(path.join(o.root, ...file.split('/')), 'utf8').catch(() => undefined);
  const relocations = await relocateAll(annotations, async (file) => (formatForPath(file) === 'pdf' ? undefined : readText(file)));
  const relocation: Record<RelocationStatus, number> = { unchanged: 0, moved: 0, context: 0, fuzzy: 0, lost: 0, unchecked: 0 };
  const located = new Map<string, { question: string; anchors: Anchor[] }>();
  for (const r of relocations) {
    relocation[r.status]++;
    if (r.status === 'lost') {
      log.log('warn', `annotation ${r.annotation.id} (${r.annotation.file}) can no longer be located; left out of training`);
      continue;
    }
    const key = questionKey(r.annotation);
    const entry = located.get(key) ?? { question: r.annotation.question, anchors: [] };
    entry.anchors.push(r.anchor ?? r.annotation.anchor);
    located.set(key, entry);
  }

  const holdout = o.holdout ?? 0.2;
  const seed = o.train?.seed ?? 1;
  const split = splitKeys([...located.keys()], holdout, seed);
  const inner = splitKeys(split.kept, o.validation ?? 0.1, seed + 1);

  // Candidate files per question, parsed once each.
  const dirFiles = new Map<string, string[]>();
  const listDir = async (dir: string): Promise<string[]> => {
    if (!dirFiles.has(dir)) {
      const names = await fs.readdir(path.join(o.root, ...dir.split('/').filter(Boolean))).catch(() => [] as string[]);
      dirFiles.set(
        dir,
        names
          .filter((n) => !n.startsWith('.') && formatForPath(n) !== undefined)
          .sort()
          .map((n) => (dir ? `${dir}/${n}` : n)),
      );
    }
    return dirFiles.get(dir)!;
  };
  const parsed = new Map<string, Promise<Item[]>>();
  const parse = o.parse ?? parseFile;
  const itemsOf = (file: string): Promise<Item[]> => {
    if (!parsed.has(file)) {
      parsed.set(
        file,
        fs
          .readFile(path.join(o.root, ...file.split('/')))
          .then((bytes) => parse(file, bytes, { branchingFactor: o.branchingFactor ?? 2, ...(o.signal ? { signal: o.signal } : {}) }))
          .then((doc) => doc.items)
          .catch((err: unknown) => {
            log.log('warn', `${file}: ${(err as Error).message}; its items are left out`);
            return [] as Item[];
          }),
      );
    }
    return parsed.get(file)!;
  };

  const keys = [...located.keys()].sort();
  const prepared = new Map<string, PreparedQuestion>();
  const counts = new Map<string, PreferenceCounts>();
  const queries = await o.embed(
    keys.map((k) => located.get(k)!.question),
    o.signal,
  );
  let done = 0;
  for (const [qi, key] of keys.entries()) {
    throwIfCancelled(o.signal);
    const { question, anchors } = located.get(key)!;
    const dirs = [...new Set(anchors.map((a) => (a.file.includes('/') ? a.file.slice(0, a.file.lastIndexOf('/')) : '')))];
    const files = [...new Set([...(await Promise.all(dirs.map(listDir))).flat(), ...anchors.map((a) => a.file)])].sort();
    const items = (await Promise.all(files.map(itemsOf))).flat();
    const { pairs, counts: c } = buildPreferences(items, anchors);
    const candidates = [];
    for (const item of items) candidates.push({ item, vectors: await nodeVectors(item.root, o.embed, o.signal) });
    prepared.set(key, { key, question, query: queries[qi]!, gold: anchors, candidates, pairs });
    counts.set(key, c);
    o.progress?.report({ done: ++done, total: keys.length, message: 'preparing questions' });
  }
  return { annotations: { total: annotations.length, corrupt, relocation }, split, inner, prepared, counts };
}

/** A question's prune-sibling pairs (`annotate/prunePairs.ts`). */
function pruneSiblingPairs(q: PreparedQuestion): PrunePair[] {
  return prunePairs(
    q.candidates.map((c) => c.item),
    q.gold,
  );
}

/**
 * The training pairs of questions `keys`: their §10 pairs (plus the prune-sibling pairs with
 * `prunePairs`) as vectors; with `balanceRules` every rule present carries an equal share of the loss.
 */
export function trainingPairs(prepared: ReadonlyMap<string, PreparedQuestion>, keys: readonly string[], o: { prunePairs?: boolean; balanceRules?: boolean }): TrainPair[] {
  const perQuestion = keys.map((k) => {
    const q = prepared.get(k)!;
    return { q, pairs: [...q.pairs, ...(o.prunePairs ? pruneSiblingPairs(q) : [])] };
  });
  const perRule = new Map<string, number>();
  for (const { pairs } of perQuestion) for (const p of pairs) perRule.set(p.rule, (perRule.get(p.rule) ?? 0) + 1);
  const total = [...perRule.values()].reduce((a, b) => a + b, 0);
  return perQuestion.flatMap(({ q, pairs }) => {
    const vec = new Map<string, Float32Array>();
    for (const c of q.candidates) for (const [id, v] of c.vectors) vec.set(id, v);
    return pairs.map((p) => ({
      q: q.query,
      preferred: vec.get(p.preferred)!,
      other: vec.get(p.other)!,
      ...(o.balanceRules ? { weight: total / (perRule.size * perRule.get(p.rule)!) } : {}),
    }));
  });
}

/** Trains on a prepared run: pairs → adapter → blend → held-back report → checkpoint. */
export async function trainPrepared(p: PreparedRun, options: TrainRunOptions): Promise<TrainRunReport> {
  const o = { ...options, ...withDefaults(options) };
  const { split, prepared, counts } = p;
  const crossValidated = o.selection === 'cross-validated';
  // Cross-validation selects on every training question; the others carve off a validation split.
  const inner = crossValidated ? { kept: split.kept, heldBack: [] as string[] } : p.inner;

  const sum = (ks: string[]) => ks.reduce((acc, k) => addCounts(acc, counts.get(k)!), emptyCounts());
  const pruneOf = (k: string) => (o.prunePairs ? pruneSiblingPairs(prepared.get(k)!) : []);
  const toPairs = (ks: readonly string[]): TrainPair[] => trainingPairs(prepared, ks, o);
  const trainPairs = toPairs(inner.kept);
  const validationPairs = toPairs(inner.heldBack);
  if (trainPairs.length === 0) throw new CanopyError(ErrorCodes.badInput, 'No preference pairs: no annotation could be located in a parsed file');

  const validationQuestions = inner.heldBack.map((k) => prepared.get(k)!);
  let select: TrainOptions['select'];
  let baseline: SideMetrics | undefined;
  let cv: CrossValidation | undefined;
  let steps: number | undefined;
  // `select` is called once before training (epoch 0) and once after each epoch, in order.
  const byEpoch: Array<{ metrics: SideMetrics; blend: number }> = [];
  if (crossValidated) {
    if (inner.kept.length < 2) throw new CanopyError(ErrorCodes.badInput, `Cross-validated selection needs at least 2 training questions (there are ${inner.kept.length}); annotate more questions or select by loss`);
    cv = await crossValidate({
      dim: o.dim,
      prepared,
      keys: inner.kept,
      folds: o.folds ?? CV_FOLDS,
      blends: o.blend ? BLEND_WEIGHTS : [1],
      tokens: o.tokens,
      pairs: toPairs,
      blendWeights,
      ...(o.train ? { train: o.train } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.progress ? { progress: o.progress } : {}),
    });
    baseline = cv.baseline;
    steps = cv.chosen?.steps ?? 0;
  } else if (o.selection === 'recall-guard' && validationQuestions.length > 0) {
    const base = evaluateSide(validationQuestions, o.tokens);
    baseline = base;
    // Eligible: no lower gold recall and no more evidence tokens than the untrained encoder.
    const eligible = (m: SideMetrics) => m.goldRecall >= base.goldRecall && m.evidenceTokens <= base.evidenceTokens;
    select = (w) => {
      let best: { metrics: SideMetrics; blend: number } | undefined;
      for (const alpha of o.blend ? BLEND_WEIGHTS : [1]) {
        const m = evaluateSide(validationQuestions, o.tokens, adapterFromWeights(blendWeights(w, alpha)));
        const better = !best || (eligible(m) && (!eligible(best.metrics) || m.decisionAccuracy > best.metrics.decisionAccuracy));
        if (better) best = { metrics: m, blend: alpha };
      }
      byEpoch.push(best!);
      return { score: best!.metrics.decisionAccuracy, eligible: eligible(best!.metrics) };
    };
  }
  // Cross-validated: refit on all training questions for the chosen number of optimizer steps.
  const result = await trainLowRankAsync(o.dim, trainPairs, validationPairs, {
    ...o.train,
    ...(select ? { select } : {}),
    ...(steps !== undefined ? { steps } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.progress && !crossValidated ? { progress: o.progress } : {}),
  });
  const chosen = cv ? cv.chosen : byEpoch[result.bestEpoch];
  const blend = chosen?.blend ?? 1;
  const heldOut = split.heldBack.map((k) => prepared.get(k)!);
  const { weights: trained, ...training } = result;
  // With the ask's configuration, the blend is chosen with it (α 0: the adapter takes no part).
  const ask = o.ask
    ? fitAsk({ train: split.kept.map((k) => prepared.get(k)!), heldBack: heldOut, tokens: o.tokens, current: o.ask, adapter: trained, blendWeights, ...(o.signal ? { signal: o.signal } : {}) })
    : undefined;
  const weights = blendWeights(trained, ask ? ask.blend : blend);
  const report = ask?.heldBack?.plain ?? beforeAfter(heldOut, o.tokens, adapterFromWeights(weights));
  const by: TrainSelection = crossValidated ? 'cross-validated' : select ? 'recall-guard' : 'loss';
  const out: TrainRunReport = {
    annotations: p.annotations,
    questions: { total: prepared.size, train: inner.kept.length, validation: inner.heldBack.length, heldOut: split.heldBack.length },
    preferences: { train: sum(inner.kept), validation: sum(inner.heldBack), heldOut: sum(split.heldBack) },
    prunePairs: { train: inner.kept.reduce((n, k) => n + pruneOf(k).length, 0), validation: inner.heldBack.reduce((n, k) => n + pruneOf(k).length, 0) },
    selection: { by, ...(baseline ? { baseline } : {}), ...(chosen ? { chosen: chosen.metrics } : {}), blend, ...(cv ? { crossValidation: cv } : {}) },
    training,
    report,
    ...(ask ? { ask } : {}),
  };
  if (o.outDir && ask && !(ask.adopted && ask.blend > 0)) {
    out.checkpointSkipped = ask.adopted
      ? 'the configuration fitted to the ask is better without the adapter (blend 0); no checkpoint is needed'
      : `no checkpoint written: ${ask.reason}`;
  } else if (o.outDir) {
    const checkpoint = makeCheckpoint(weights, {
      baseEncoderId: o.encoderId,
      trainedOn: {
        annotationsFile: path.relative(o.root, path.resolve(o.annotationsFile)).split(path.sep).join('/'),
        questions: inner.kept.length,
        annotations: p.annotations.total,
        pairs: trainPairs.length,
        validationPairs: validationPairs.length,
      },
      metrics: {
        training,
        report,
        heldOutQuestions: split.heldBack,
        recipe: {
          prunePairs: o.prunePairs,
          balanceRules: o.balanceRules,
          selection: out.selection.by,
          blend: ask ? ask.blend : out.selection.blend,
          ...(cv ? { folds: cv.folds, epoch: cv.chosen?.epoch ?? 0, steps: training.steps } : { validation: o.validation ?? 0.1 }),
          holdout: o.holdout ?? 0.2,
        },
        ...(out.selection.baseline && out.selection.chosen ? { validation: { before: out.selection.baseline, after: out.selection.chosen } } : {}),
        ...(ask?.heldBack ? { ask: { configuration: ask.describe.after, before: ask.heldBack.before, after: ask.heldBack.after, configurationBefore: ask.describe.before, blend: ask.blend } } : {}),
      },
    });
    out.checkpoint = { id: checkpoint.id, file: await saveCheckpoint(o.outDir, checkpoint) };
  }
  return out;
}
