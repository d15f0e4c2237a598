/**
 * `canopy eval` as a library call: load any evaluation file, pick the configurations (one from
 * the flags, or the whole comparison with `sweep`), run the given-items or open-pool mode with
 * the embedding and index caches, and aggregate with paired bootstrap intervals. The result is
 * one JSON-serialisable report; `render.ts` prints it and writes the figures.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bpeTokenCounter } from '../compress/tokens';
import type { Critic } from '../critic/critic';
import { LlmCritic } from '../critic/llmCritic';
import { RuleCritic } from '../critic/ruleCritic';
import type { EncoderConfig } from '../encode/encoder';
import { CanopyError, ErrorCodes } from '../errors';
import type { ChatModel } from '../llm/llm';
import { silentLogger, type Logger } from '../ports';
import type { Reader } from '../read/reader';
import { BootstrapPlan } from './bootstrap';
import { defaultSweep, describeConfig, singleConfig, sweepConfigs, type CriticChoice, type RunConfig, type SweepOptions } from './configs';
import { loadDataset } from './datasets/load';
import type { Dataset, EvalQuestion } from './datasets/types';
import { openEvalEmbeddings } from './embeddings';
import { runGiven } from './given';
import type { Outcome } from './outcome';
import { openPoolIndex } from './poolIndex';
import { runPool } from './poolRun';
import { aggregate, compressionMetrics, gradedNdcgMetric, retrievalMetrics, type Aggregated, type MetricSpec } from './report';
import { shortAnswerReader } from './shortAnswer';

export type EvalMode = 'given' | 'pool';
/** `hybrid:bm25=<w>` weights BM25 by w in the fusion (a measured variant; plain `hybrid` is the pipeline's RRF). */
export type RetrievalChoice = 'hybrid' | 'dense' | 'bm25' | `hybrid:bm25=${number}`;

export function parseRetrieval(value: string): { dense: boolean; bm25: boolean; bm25Weight?: number } | undefined {
  if (value === 'hybrid') return { dense: true, bm25: true };
  if (value === 'dense') return { dense: true, bm25: false };
  if (value === 'bm25') return { dense: false, bm25: true };
  const m = /^hybrid:bm25=(\d*\.?\d+)$/.exec(value);
  return m ? { dense: true, bm25: true, bm25Weight: Number(m[1]) } : undefined;
}

export interface EvalOptions {
  file: string;
  mode: EvalMode;
  topK: number;
  rounds: number;
  branching: number;
  compressor: string;
  critic: CriticChoice;
  retrieval: RetrievalChoice;
  encoder: EncoderConfig;
  builtinModelDir: string;
  /** Adapter checkpoint: recorded; loading arrives with the adapter issue. */
  adapter?: string;
  limit?: number;
  seed: number;
  resamples: number;
  sweep: boolean;
  sweepOptions?: Partial<SweepOptions>;
  cacheDir: string;
  /** Annotation files: their workspace folder. */
  root?: string;
  peerChunkSize: number;
  peerBm25?: boolean;
  /** An LLM for the reader (EM/F1) and, with critic 'llm', the critic. */
  llm?: ChatModel;
  logger?: Logger;
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

export interface EvalReport {
  report: 'canopy-eval';
  version: 1;
  createdAt: string;
  dataset: { schema: string; file: string; questions: number; totalQuestions: number; limit?: number; notes: string[] };
  mode: EvalMode;
  settings: {
    topK: number;
    rounds: number;
    branching: number;
    critic: CriticChoice;
    retrieval: RetrievalChoice;
    encoder: string;
    adapter?: string;
    tokenizer: string;
    seed: number;
    resamples: number;
    peerChunkSize: number;
    peerBm25: boolean;
    reader: string;
  };
  configs: RunConfig[];
  results: Aggregated;
  diagnostics: Record<string, unknown>;
  timing: { seconds: number; encodedTexts: number; indexSeconds?: number };
}

export class AdapterNotAvailableError extends CanopyError {
  constructor(checkpoint: string) {
    super(
      ErrorCodes.badInput,
      `--adapter ${checkpoint}: loading adapter checkpoints is not implemented yet (it arrives with the adapter-training issue); rerun without --adapter to evaluate the frozen encoder`,
    );
  }
}

function hashOf(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

export function chooseConfigs(options: Pick<EvalOptions, 'mode' | 'sweep' | 'compressor' | 'branching' | 'rounds' | 'critic' | 'topK' | 'sweepOptions'>): RunConfig[] {
  const defaults = { branching: options.branching, rounds: options.mode === 'given' ? 1 : options.rounds, critic: options.critic, topK: options.topK };
  if (options.sweep) return sweepConfigs(options.mode, defaults, { ...defaultSweep, ...options.sweepOptions });
  const c = singleConfig(options.compressor, defaults);
  if (c.compressor.name !== 'peer') return [c];
  // The peer needs a budget: CANOPY's tokens on the same questions.
  const ref = singleConfig('canopy', defaults);
  c.compressor = { name: 'peer', budgetFrom: ref.id };
  c.rounds = 1;
  c.id = describeConfig(c);
  return [ref, c];
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const started = Date.now();
  const log = options.logger ?? silentLogger;
  const progress = options.onProgress ?? (() => undefined);
  if (options.adapter) throw new AdapterNotAvailableError(options.adapter);
  if (options.critic === 'llm' && !options.llm) throw new CanopyError(ErrorCodes.badInput, '--critic llm needs an LLM: set CANOPY_LLM_BASE_URL and CANOPY_LLM_MODEL (and CANOPY_LLM_API_KEY when the endpoint needs one)');
  const dataset: Dataset = loadDataset(options.file, options.root ? { root: options.root } : {});
  const all = dataset.questions;
  const questions: EvalQuestion[] = options.limit ? all.slice(0, options.limit) : all;
  if (questions.length === 0) throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: no questions to evaluate`);
  const configs = chooseConfigs(options);
  if (options.mode === 'pool') {
    if (!dataset.pool) throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: no open pool for ${dataset.schema} (${dataset.noPoolReason ?? 'none found'}); use --mode given`);
    const bad = configs.find((c) => c.groupVectors === 'encoded' || c.margin);
    if (bad) throw new CanopyError(ErrorCodes.badInput, `${bad.id}: groups=encoded and margin are measured in the given-items mode only (the pipeline scores nodes itself in the open pool)`);
  }
  const datasetDir = join(options.cacheDir, `${dataset.schema}-${hashOf(dataset.file)}`);
  mkdirSync(datasetDir, { recursive: true });
  const embeddings = await openEvalEmbeddings({ encoder: options.encoder, builtinModelDir: options.builtinModelDir, cacheDir: join(options.cacheDir, 'embeddings'), logger: log });
  const tokens = bpeTokenCounter();
  const reader: Reader | undefined = options.llm ? shortAnswerReader(options.llm) : undefined;
  const every = Math.max(1, Math.round(questions.length / 20));
  const onQuestion = (done: number, total: number) => {
    if (done % every === 0 || done === total) progress(`${done}/${total} questions (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  };
  let outcomes: Outcome[][];
  let diagnostics: Record<string, unknown>;
  let indexSeconds: number | undefined;
  let specs: MetricSpec[] = compressionMetrics;
  try {
    if (options.mode === 'given') {
      const r = await runGiven(questions, configs, {
        embeddings,
        tokens,
        scratchDir: datasetDir,
        peerChunkSize: options.peerChunkSize,
        ...(reader ? { read: async (question, regions) => (await reader.answer(question, { text: '', tokens: 0, truncated: false, regions: regions.map((x) => ({ itemId: x.item.id, itemTitle: x.item.title, file: x.item.file, node: x.node, score: x.score })) })).text } : {}),
        onQuestion,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      outcomes = r.outcomes;
      const s = [...r.diagnostics.leafScores].sort((a, b) => a - b);
      const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
      diagnostics = { unresolvedGold: r.diagnostics.unresolvedGold, peerBm25Skipped: r.diagnostics.peerBm25Skipped, leafScoreQuantiles: { p10: q(0.1), p25: q(0.25), p50: q(0.5), p75: q(0.75), p90: q(0.9) } };
    } else {
      const pool = dataset.pool!;
      if (pool.kind !== 'docs') throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: the open-pool mode for ${dataset.schema} (a folder of files) is not supported yet; use --mode given`);
      progress(`reading the pool (${pool.files.length} file(s))`);
      const docs = pool.read();
      const t0 = Date.now();
      const index = await openPoolIndex(docs, { cacheDir: options.cacheDir, branchingFactor: options.branching, embeddings, logger: { log: (level, m) => (level === 'info' ? progress(m) : log.log(level, m)) }, ...(options.signal ? { signal: options.signal } : {}) });
      if (index.built) indexSeconds = (Date.now() - t0) / 1000;
      const critic = (c: RunConfig): Critic | undefined => (c.critic === 'llm' && options.llm ? new LlmCritic(options.llm, { logger: log }) : c.critic === 'none' ? undefined : new RuleCritic());
      const r = await runPool(questions, configs, {
        embeddings,
        tokens,
        pool: index,
        retrieval: parseRetrieval(options.retrieval)!,
        critic,
        ...(reader ? { reader } : {}),
        peer: { chunkSize: options.peerChunkSize, bm25: options.peerBm25 ?? false },
        onQuestion,
        logger: progress,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      outcomes = r.outcomes;
      const askMs = Object.fromEntries(Object.entries(r.diagnostics.askMs).map(([k, v]) => [k, median(v)]));
      diagnostics = { unresolvedGold: r.diagnostics.unresolvedGold, peerChunks: r.diagnostics.peerChunks, peerBm25Skipped: r.diagnostics.peerBm25Skipped, medianAskMs: askMs, poolDocuments: docs.length, poolIndex: index.dir };
      const graded = [...questions].some((q) => [...q.goldDocs.values()].some((g) => g !== 1 && g > 0));
      const maxRounds = Math.max(...configs.map((c) => c.rounds));
      specs = [...compressionMetrics, ...retrievalMetrics(options.topK, maxRounds).map((m) => (graded && m.key === 'ndcg@10' ? gradedNdcgMetric() : m))];
    }
  } finally {
    await embeddings.save();
    await embeddings.dispose();
  }
  const plan = new BootstrapPlan(questions.length, options.resamples, options.seed);
  const results = aggregate(questions, configs, outcomes, specs, plan);
  return {
    report: 'canopy-eval',
    version: 1,
    createdAt: new Date().toISOString(),
    dataset: { schema: dataset.schema, file: dataset.file, questions: questions.length, totalQuestions: all.length, ...(options.limit ? { limit: options.limit } : {}), notes: dataset.notes },
    mode: options.mode,
    settings: {
      topK: options.topK,
      rounds: options.rounds,
      branching: options.branching,
      critic: options.critic,
      retrieval: options.retrieval,
      encoder: embeddings.id,
      ...(options.adapter ? { adapter: options.adapter } : {}),
      tokenizer: tokens.name,
      seed: options.seed,
      resamples: options.resamples,
      peerChunkSize: options.peerChunkSize,
      peerBm25: options.mode === 'given' ? true : (options.peerBm25 ?? false),
      reader: options.llm ? `llm:${options.llm.id}` : 'extractive (no EM/F1)',
    },
    configs,
    results,
    diagnostics,
    timing: { seconds: (Date.now() - started) / 1000, encodedTexts: embeddings.encoded, ...(indexSeconds !== undefined ? { indexSeconds } : {}) },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
