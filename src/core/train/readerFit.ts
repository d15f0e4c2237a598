/**
 * The reader model fitted to a workspace's gold spans (issue 32, "Gold annotations reach it";
 * `canopy train` and the extension's Train command). Each annotated question's own file is
 * compressed as an ask would compress it (its items' node vectors against the question's vector,
 * the hybrid node score, CANOPY with the workspace's settings), its kept leaves read as the reader
 * reads them (judge/readerFeatures.ts), and a leaf that overlaps a gold span is one that answers.
 * The built-in model is fine-tuned listwise on the training questions, pulled towards its own
 * weights (a few dozen questions cannot re-learn the features), and kept only when [1] lies on a
 * gold span for more held-back questions than the built-in model's [1] does: then it is written
 * into the index folder (`reader-model.json`), which later asks read (app/askService.ts).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { coverage } from '../annotate/overlap';
import { compress } from '../compress/compressor';
import { fuseNodeScores, lexicalScores, type NodeScoreWeights } from '../compress/hybridScore';
import { scoreNodes } from '../compress/nodeScorer';
import type { TokenCounter } from '../compress/tokens';
import type { KeptRegion } from '../critic/critic';
import { throwIfCancelled } from '../errors';
import { JUDGE_MODEL_SCHEMA, JUDGE_MODEL_VERSION, LinearModel, type JudgeModelFile } from '../judge/linearModel';
import { readQuestion } from '../judge/questionReading';
import { readerCandidates } from '../judge/readerFeatures';
import { writeFileAtomic } from '../store/atomicFile';
import type { CompressorSetting } from '../../contracts/trace';
import type { RegionNode } from '../../contracts/region';
import { fitListwise, type ListwiseGroup } from './listwise';
import type { PreparedQuestion } from './report';

/** The workspace's reader model, beside the index (read by the AskService when present). */
export const READER_MODEL_FILE = 'reader-model.json';

/** Held-back questions with a located gold leaf a fit needs before it may replace the built-in model. */
export const MIN_READER_HELD_BACK = 5;

/** The pull towards the built-in weights (per question, on standardised features). */
const PRIOR_L2 = 0.05;

export interface ReaderFitMetrics {
  /** Questions whose kept evidence holds a leaf overlapping a gold span. */
  questions: number;
  /** … whose [1] (the likeliest quotable leaf) overlaps a gold span. */
  firstOnGold: number;
}

export interface ReaderFitReport {
  /** The model the fit starts from. */
  base: string;
  questions: { train: number; heldBack: number };
  before: ReaderFitMetrics;
  after?: ReaderFitMetrics;
  /** The fitted model's id and file, when it was written. */
  written?: { id: string; file: string };
  /** Why it was, or was not, written. */
  reason: string;
}

interface LabelledQuestion {
  key: string;
  question: string;
  /** Quotable leaves: features and whether they overlap gold. */
  rows: Array<{ features: Record<string, number>; gold: boolean }>;
}

/** A leaf overlaps gold when a gold span covers at least this share of it. */
const GOLD_LEAF = 0.5;

/** One annotated question's own file compressed as an ask would, its leaves labelled by the gold spans. */
function labelQuestion(q: PreparedQuestion, o: { compressor: CompressorSetting; nodeScore: NodeScoreWeights; tokens: TokenCounter }): LabelledQuestion {
  const items = q.candidates.map((c) => c.item);
  const dense = new Map<string, number>();
  for (const c of q.candidates) for (const [id, s] of scoreNodes(q.query, c.vectors)) dense.set(id, s);
  const fused = fuseNodeScores(dense, lexicalScores(q.question, items, o.nodeScore.model), o.nodeScore);
  const score = (n: RegionNode) => fused.scores.get(n.id) ?? Number.NEGATIVE_INFINITY;
  const { kept } = compress(items, o.compressor, score, false, q.question, o.tokens);
  const regions: KeptRegion[] = items.flatMap((item) =>
    (kept.get(item.id) ?? []).map((node) => ({
      itemId: item.id,
      itemTitle: item.title,
      file: item.file,
      node,
      score: score(node),
      leafScores: fused.scores,
      components: fused.components,
      ...(item.traits ? { document: item.traits } : {}),
    })),
  );
  const reading = readerCandidates(readQuestion(q.question), regions);
  return {
    key: q.key,
    question: q.question,
    rows: reading.candidates.filter((c) => c.quotable).map((c) => ({ features: c.features, gold: coverage(c.leaf.anchor, q.gold) >= GOLD_LEAF })),
  };
}

function measure(model: LinearModel, questions: readonly LabelledQuestion[]): ReaderFitMetrics {
  let n = 0;
  let first = 0;
  for (const q of questions) {
    if (!q.rows.some((r) => r.gold)) continue;
    n++;
    let best = q.rows[0]!;
    let bestP = Number.NEGATIVE_INFINITY;
    for (const r of q.rows) {
      const p = model.predict(r.features).logit;
      if (p > bestP) {
        best = r;
        bestP = p;
      }
    }
    if (best.gold) first++;
  }
  return { questions: n, firstOnGold: first };
}

export interface ReaderFitOptions {
  base: LinearModel;
  compressor: CompressorSetting;
  nodeScore: NodeScoreWeights;
  tokens: TokenCounter;
  /** The index folder the fitted model is written into; none: report only. */
  indexDir?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** The part of a prepared training run the fit reads (train/run.ts `PreparedRun`). */
export interface ReaderFitInput {
  split: { kept: readonly string[]; heldBack: readonly string[] };
  prepared: ReadonlyMap<string, PreparedQuestion>;
}

export async function fitReader(prepared: ReaderFitInput, o: ReaderFitOptions): Promise<ReaderFitReport> {
  const label = (keys: readonly string[]) =>
    keys.flatMap((k) => {
      throwIfCancelled(o.signal);
      const q = prepared.prepared.get(k);
      return q && q.gold.length > 0 ? [labelQuestion(q, o)] : [];
    });
  const train = label(prepared.split.kept);
  const heldBack = label(prepared.split.heldBack);
  const base = o.base;
  const before = measure(base, heldBack);
  const report: ReaderFitReport = { base: base.id, questions: { train: train.length, heldBack: heldBack.length }, before, reason: '' };
  const file = base.file;
  const z = (f: Record<string, number>) => file.features.map((name, i) => (f[name] === undefined ? 0 : (f[name]! - file.center[i]!) / file.scale[i]!));
  const groups: ListwiseGroup[] = train.filter((q) => q.rows.length > 1 && q.rows.some((r) => r.gold)).map((q) => ({ x: q.rows.map((r) => z(r.features)), y: q.rows.map((r) => (r.gold ? 1 : 0)), weight: 1 }));
  if (groups.length === 0) {
    report.reason = 'no training question has a gold span among the leaves the ask keeps';
    return report;
  }
  const weights = fitListwise(groups, file.features.length, { l2: PRIOR_L2, prior: file.weights });
  const id = `${base.id}+workspace-${new Date().toISOString().slice(0, 10)}`;
  const fitted: JudgeModelFile = {
    ...file,
    schema: JUDGE_MODEL_SCHEMA,
    version: JUDGE_MODEL_VERSION,
    id,
    weights: weights.map((w) => Math.round(w * 1e6) / 1e6),
    training: { base: base.id, from: 'the workspace gold spans', trainQuestions: groups.length, heldBack: heldBack.length, priorL2: PRIOR_L2 },
  };
  const model = LinearModel.from(fitted, 'the fitted reader model');
  report.after = measure(model, heldBack);
  if (report.before.questions < MIN_READER_HELD_BACK) {
    report.reason = `${report.before.questions} held-back question(s) with a gold span in the kept leaves; at least ${MIN_READER_HELD_BACK} are needed to tell whether the fit is better`;
    return report;
  }
  if (report.after.firstOnGold <= report.before.firstOnGold) {
    report.reason = `not better on the held-back questions: [1] on a gold span ${report.before.firstOnGold} → ${report.after.firstOnGold} of ${report.before.questions}`;
    return report;
  }
  if (o.dryRun || !o.indexDir) {
    report.reason = `better on the held-back questions (${report.before.firstOnGold} → ${report.after.firstOnGold} of ${report.before.questions}), not written (${o.dryRun ? 'dry run' : 'no index'})`;
    return report;
  }
  const target = path.join(o.indexDir, READER_MODEL_FILE);
  await fs.mkdir(o.indexDir, { recursive: true });
  await writeFileAtomic(target, `${JSON.stringify(fitted, null, 1)}\n`);
  report.written = { id, file: target };
  report.reason = `better on the held-back questions: [1] on a gold span ${report.before.firstOnGold} → ${report.after.firstOnGold} of ${report.before.questions}`;
  return report;
}

/** The workspace's fitted reader model in an index folder, when there is a usable one (else undefined, with why). */
export async function readWorkspaceReaderModel(indexDir: string): Promise<{ model?: LinearModel; problem?: string }> {
  const target = path.join(indexDir, READER_MODEL_FILE);
  let text: string;
  try {
    text = await fs.readFile(target, 'utf8');
  } catch {
    return {};
  }
  try {
    return { model: LinearModel.from(JSON.parse(text), target) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}
