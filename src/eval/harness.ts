/**
 * `canopy eval` as a library call: load any evaluation file, pick the configurations (one from
 * the flags, or the whole comparison with `sweep`), run the given-items or open-pool mode with
 * the embedding and index caches, and aggregate with paired bootstrap intervals. The result is
 * one JSON-serialisable report; `render.ts` prints it and writes the figures.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../core/random';
import { bpeTokenCounter } from '../core/compress/tokens';
import type { Critic } from '../core/critic/critic';
import { LlmCritic } from '../core/critic/llmCritic';
import { RuleCritic } from '../core/critic/ruleCritic';
import { LearnedCritic } from '../core/judge/learnedCritic';
import { builtinCriticModel } from '../core/judge/models';
import type { EncoderConfig } from '../core/encode/encoder';
import { CanopyError, ErrorCodes } from '../core/errors';
import type { ChatModel } from '../core/llm/llm';
import { silentLogger, type Logger } from '../core/ports';
import type { Reader } from '../core/read/reader';
import { BootstrapPlan } from './bootstrap';
import { defaultSweep, describeConfig, singleConfig, sweepConfigs, variantBase, type CriticChoice, type RunConfig, type SweepOptions } from './configs';
import { loadDataset } from './datasets/load';
import type { Dataset, EvalQuestion } from './datasets/types';
import { openEvalEmbeddings } from './embeddings';
import { runGiven } from './given';
import type { Outcome } from './outcome';
import { openPoolIndex } from './poolIndex';
import { runPool } from './poolRun';
import { JudgeDumpWriter } from './judgeDump';
import { pdfPagePool } from './pagePool';
import type { PoolDoc } from './datasets/types';
import { coarsenPool, coarsenQuestion, describeCoarse, type CoarseSpec } from './datasets/coarse';
import { prepareTopicVariants, topicDifferences, topicVariants, type TopicVariant } from './topicsAblation';
import type { Retriever } from '../core/retrieve/retriever';
import type { NodeScoreWeights } from '../core/compress/hybridScore';
import { profileFor, RRF_EQUAL, type FusionSetting } from '../core/retrieve/profile';
import { loadAdapter, type LoadedAdapter } from '../core/train/checkpoint';
import { aggregate, compressionMetrics, gradedNdcgMetric, retrievalMetrics, type Aggregated, type MetricSpec } from './report';
import { shortAnswerReader } from './shortAnswer';
import { resolveControllerOptions, type ControllerOptions } from '../core/controller/options';
import { documentComparison, documentConfigs, documentMetrics, documentVersus, ParsedDocumentCache, runDocumentComparison, type DocumentComparison } from './financebench';

export type EvalMode = 'given' | 'pool';
/**
 * `hybrid`: the pipeline's fusion (the encoder's retrieval profile); `hybrid:rrf`: the design's
 * equal-weight RRF; `hybrid:bm25=<w>`: RRF with BM25 weighted w; `hybrid:linear=<w>`: score-level
 * fusion with the cosine weighted w, `hybrid:linear=<w>,flat=<f>` with the flat BM25 list weighted f
 * (measured variants).
 */
export type RetrievalChoice = 'hybrid' | 'dense' | 'bm25' | 'hybrid:rrf' | `hybrid:bm25=${number}` | `hybrid:linear=${number}` | `hybrid:linear=${number},flat=${number}`;

/** The retriever a choice means; `fusion` undefined = the encoder's profile. */
export function parseRetrieval(value: string): { dense: boolean; bm25: boolean; fusion?: FusionSetting } | undefined {
  if (value === 'hybrid') return { dense: true, bm25: true };
  if (value === 'hybrid:rrf') return { dense: true, bm25: true, fusion: RRF_EQUAL };
  if (value === 'dense') return { dense: true, bm25: false, fusion: RRF_EQUAL };
  if (value === 'bm25') return { dense: false, bm25: true, fusion: RRF_EQUAL };
  const rrf = /^hybrid:bm25=(\d*\.?\d+)$/.exec(value);
  if (rrf) return { dense: true, bm25: true, fusion: { kind: 'rrf', rrfK: 60, bm25Weight: Number(rrf[1]) } };
  const linear = /^hybrid:linear=(\d*\.?\d+)(?:,flat=(\d*\.?\d+))?$/.exec(value);
  if (linear && (linear[2] === undefined || Number(linear[2]) <= 1)) {
    return { dense: true, bm25: true, fusion: { kind: 'linear', dense: Number(linear[1]), depth: 100, ...(linear[2] !== undefined ? { flat: Number(linear[2]) } : {}) } };
  }
  return undefined;
}

export interface EvalOptions {
  file: string;
  mode: EvalMode;
  topK: number;
  rounds: number;
  branching: number;
  /** One configuration, or several side by side (`--compressor` repeated). */
  compressor: string | string[];
  critic: CriticChoice;
  /** The rule critic's look-ahead (canopy.critic.lookAhead) in pool mode (default on). */
  lookAhead?: boolean;
  /** The critic model's learned stop over the rule critic (canopy.critic.model; default on). */
  criticModel?: boolean;
  retrieval: RetrievalChoice;
  encoder: EncoderConfig;
  builtinModelDir: string;
  /** A node-encoder adapter checkpoint (`canopy train`): node scores go through it; it must match the encoder. */
  adapter?: string;
  /** Node score weights (dense cosine, lexical evidence) for every configuration; dense alone when absent. */
  nodeScore?: NodeScoreWeights;
  limit?: number;
  /** A seeded sample of this many questions (seed `seed`), in file order, instead of the first ones. */
  sample?: number;
  /** Write each question's reader input, gold and critic verdicts (the first configuration) for the judgment models (judgeDump.ts). */
  dumpJudge?: string;
  seed: number;
  resamples: number;
  sweep: boolean;
  sweepOptions?: Partial<SweepOptions>;
  cacheDir: string;
  /** Annotation files: their workspace folder. */
  root?: string;
  peerChunkSize: number;
  peerBm25?: boolean;
  /** Pool mode: the topic compass variant (docs/topics.md); with `topicsAblation`, all four. Both evaluate held-back questions only. */
  topics?: TopicVariant | TopicVariant[];
  topicsAblation?: boolean;
  /** Share of the questions held back for the topic evaluation (the rest trains the scorers); default 0.5. */
  topicsHoldout?: number;
  /** Pool mode: the pool's documents grouped into coarse items (datasets/coarse.ts): by title, runs of N of one title, or runs of N. */
  poolChunks?: CoarseSpec;
  /**
   * FinanceBench, given mode: compare page top-k, CANOPY over page top-k and the MAGE controller
   * inside each question's PDF (financebench.ts) instead of compressing all of its items.
   */
  documentComparison?: boolean;
  /** The controller's options beyond its defaults in the document comparison (budgets; validated). */
  controllerOptions?: Partial<ControllerOptions>;
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
    /** The rule critic's look-ahead (pool mode). */
    lookAhead?: boolean;
    /** The critic model's learned stop over the rule (pool mode): its model id, or "off". */
    criticModel?: string;
    retrieval: RetrievalChoice;
    /** Pool mode: how the pool was grouped into coarse items. */
    poolChunks?: string;
    encoder: string;
    adapter?: string;
    nodeScore?: NodeScoreWeights;
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
  /** FinanceBench's document comparison: the controller against page top-k, and its trace statistics. */
  document?: DocumentComparison;
  timing: { seconds: number; encodedTexts: number; indexSeconds?: number };
}

function hashOf(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

export function chooseConfigs(options: Pick<EvalOptions, 'mode' | 'sweep' | 'compressor' | 'branching' | 'rounds' | 'critic' | 'topK' | 'sweepOptions'>): RunConfig[] {
  const defaults = { branching: options.branching, rounds: options.mode === 'given' ? 1 : options.rounds, critic: options.critic, topK: options.topK };
  if (options.sweep) return sweepConfigs(options.mode, defaults, { ...defaultSweep, ...options.sweepOptions });
  const out: RunConfig[] = [];
  const add = (c: RunConfig) => {
    if (!out.some((o) => o.id === c.id)) out.push(c);
  };
  for (const name of typeof options.compressor === 'string' ? [options.compressor] : options.compressor) {
    const c = singleConfig(name, defaults);
    if (c.compressor.name !== 'peer') {
      add(c);
      continue;
    }
    // The peer needs a budget: CANOPY's tokens on the same questions.
    const ref = singleConfig('canopy', defaults);
    add(ref);
    c.compressor = { name: 'peer', budgetFrom: ref.id };
    c.rounds = 1;
    c.id = describeConfig(c);
    add(c);
  }
  // A measured node-vector variant is compared with the same configuration's product vectors.
  for (const c of [...out]) {
    const base = variantBase(c);
    if (base && !out.some((o) => o.id === base)) {
      const b: RunConfig = { ...c, groupVectors: 'mean' };
      delete b.nodeVectors;
      b.id = describeConfig(b);
      out.splice(out.indexOf(c), 0, b);
    }
  }
  return out;
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const started = Date.now();
  const log = options.logger ?? silentLogger;
  const progress = options.onProgress ?? (() => undefined);
  if (options.critic === 'llm' && !options.llm) throw new CanopyError(ErrorCodes.badInput, '--critic llm needs an LLM: set CANOPY_LLM_BASE_URL and CANOPY_LLM_MODEL (and CANOPY_LLM_API_KEY when the endpoint needs one)');
  const dataset: Dataset = loadDataset(options.file, options.root ? { root: options.root } : {});
  const all = dataset.questions;
  let questions: EvalQuestion[] = options.sample !== undefined && options.sample < all.length ? seededSample(all, options.sample, options.seed) : all;
  if (options.limit) questions = questions.slice(0, options.limit);
  const dump = options.dumpJudge ? { writer: new JudgeDumpWriter(options.dumpJudge), dataset: dataset.schema } : undefined;
  if (questions.length === 0) throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: no questions to evaluate`);
  let configs = chooseConfigs(options);
  const documentMode = dataset.schema === 'financebench' && options.mode === 'given' && options.documentComparison === true;
  if (documentMode) configs = documentConfigs(options.branching, options.topK);
  let documentRun: Awaited<ReturnType<typeof runDocumentComparison>> | undefined;
  const variants: TopicVariant[] = options.topicsAblation ? [...topicVariants] : options.topics ? [...new Set([options.topics].flat())] : [];
  if (variants.length > 0 && options.mode !== 'pool') throw new CanopyError(ErrorCodes.badInput, '--topics and --topics-ablation are measured in the open-pool mode (--mode pool)');
  if (options.mode === 'pool') {
    if (!dataset.pool) throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: no open pool for ${dataset.schema} (${dataset.noPoolReason ?? 'none found'}); use --mode given`);
    const bad = configs.find((c) => c.groupVectors === 'encoded' || c.nodeVectors || c.margin);
    if (bad) throw new CanopyError(ErrorCodes.badInput, `${bad.id}: groups=encoded, nodes= and margin are measured in the given-items mode only (the pipeline scores nodes itself in the open pool)`);
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
  let adapter: LoadedAdapter | undefined;
  try {
    // An unusable checkpoint fails the run (naming the file): figures must never silently be the untrained encoder's.
    if (options.adapter) adapter = await loadAdapter(options.adapter, embeddings.id);
    if (documentMode) {
      documentRun = await runDocumentComparison(questions, configs, {
        embeddings,
        tokens,
        cacheDir: datasetDir,
        branching: options.branching,
        ...(options.controllerOptions ? { controller: resolveControllerOptions(options.controllerOptions) } : {}),
        ...(options.llm ? { llm: options.llm } : {}),
        ...(reader ? { read: async (question, input) => (await reader.answer(question, input)).text } : {}),
        onQuestion,
        log: progress,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(dump ? { dump } : {}),
      });
      outcomes = documentRun.outcomes;
      specs = documentMetrics;
      diagnostics = { unresolvedGold: documentRun.unresolvedGold };
    } else if (options.mode === 'given') {
      const r = await runGiven(questions, configs, {
        embeddings,
        tokens,
        scratchDir: datasetDir,
        peerChunkSize: options.peerChunkSize,
        ...(reader ? { read: async (question, regions) => (await reader.answer(question, { text: '', tokens: 0, truncated: false, regions: regions.map((x) => ({ itemId: x.item.id, itemTitle: x.item.title, file: x.item.file, node: x.node, score: x.score })) })).text } : {}),
        onQuestion,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(adapter ? { adapter: adapter.adapter } : {}),
        ...(options.nodeScore ? { nodeScore: options.nodeScore } : {}),
        ...(dump ? { dump } : {}),
      });
      outcomes = r.outcomes;
      const s = [...r.diagnostics.leafScores].sort((a, b) => a - b);
      const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
      diagnostics = { unresolvedGold: r.diagnostics.unresolvedGold, peerBm25Skipped: r.diagnostics.peerBm25Skipped, leafScoreQuantiles: { p10: q(0.1), p25: q(0.25), p50: q(0.5), p75: q(0.75), p90: q(0.9) } };
    } else {
      const pool = dataset.pool!;
      const pages = pool.kind === 'folder' && options.poolChunks?.by === 'page';
      if (pool.kind !== 'docs' && !pages) throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: the open-pool mode for ${dataset.schema} (a folder of files) needs --pool-chunks page (each PDF page one item); else use --mode given`);
      if (pool.kind === 'docs' && options.poolChunks?.by === 'page') throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: --pool-chunks page needs a folder of PDFs (FinanceBench); this pool is documents`);
      let docs: PoolDoc[];
      if (pool.kind === 'folder') {
        // The pages of the questions' PDFs, each one item, as Canopy's parser reads them (parsed documents cached).
        const built = await pdfPagePool(questions, new ParsedDocumentCache(join(datasetDir, 'parsed'), embeddings, options.branching, progress), options.signal);
        docs = built.docs;
        questions = built.questions;
        progress(`coarse chunks (${describeCoarse(options.poolChunks!)}): ${docs.length} pages`);
      } else {
        progress(`reading the pool (${pool.files.length} file(s))`);
        docs = pool.read();
      }
      if (options.poolChunks && pool.kind === 'docs') {
        // Coarse chunks (docs/topics.md): the pool's documents grouped into larger items, the questions' gold with them.
        const coarse = coarsenPool(docs, options.poolChunks);
        progress(`coarse chunks (${describeCoarse(options.poolChunks)}): ${docs.length} pool documents → ${coarse.docs.length} items`);
        docs = coarse.docs;
        questions = questions.map((q) => coarsenQuestion(q, coarse));
      }
      const t0 = Date.now();
      const index = await openPoolIndex(docs, { cacheDir: options.cacheDir, branchingFactor: options.branching, embeddings, logger: { log: (level, m) => (level === 'info' ? progress(m) : log.log(level, m)) }, ...(options.signal ? { signal: options.signal } : {}) });
      if (index.built) indexSeconds = (Date.now() - t0) / 1000;
      const own = new Map<string, Retriever>();
      let topicSetup: Awaited<ReturnType<typeof prepareTopicVariants>> | undefined;
      const retrieval = (() => {
        const r = parseRetrieval(options.retrieval)!;
        return { ...r, fusion: r.fusion ?? profileFor(embeddings.id, undefined).fusion };
      })();
      if (variants.length > 0) {
        topicSetup = await prepareTopicVariants(questions, variants, index, embeddings, { seed: options.seed, fusion: retrieval.fusion, ...(options.topicsHoldout !== undefined ? { holdout: options.topicsHoldout } : {}), onProgress: progress, ...(options.signal ? { signal: options.signal } : {}) });
        questions = topicSetup.questions;
        configs = configs.flatMap((c) =>
          variants.map((v) => {
            const id = `${c.id} topics=${v}`;
            const r = topicSetup!.retrievers.get(v);
            if (r) own.set(id, r);
            return { ...c, id };
          }),
        );
      }
      const critic = (c: RunConfig): Critic | undefined => {
        if (c.critic === 'llm' && options.llm) return new LlmCritic(options.llm, { logger: log });
        if (c.critic === 'none') return undefined;
        const rule = new RuleCritic({ lookAhead: options.lookAhead !== false });
        return options.criticModel === false ? rule : new LearnedCritic(rule);
      };
      const r = await runPool(questions, configs, {
        embeddings,
        tokens,
        pool: index,
        retrieval,
        critic,
        ...(reader ? { reader } : {}),
        peer: { chunkSize: options.peerChunkSize, bm25: options.peerBm25 ?? false },
        onQuestion,
        logger: progress,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(own.size > 0 ? { retrieverFor: (c: RunConfig) => own.get(c.id) } : {}),
        ...(adapter ? { adapter: { id: adapter.id, adapter: adapter.adapter } } : {}),
        ...(options.nodeScore ? { nodeScore: options.nodeScore } : {}),
        ...(dump ? { dump } : {}),
      });
      outcomes = r.outcomes;
      const askMs = Object.fromEntries(Object.entries(r.diagnostics.askMs).map(([k, v]) => [k, median(v)]));
      diagnostics = { unresolvedGold: r.diagnostics.unresolvedGold, peerChunks: r.diagnostics.peerChunks, peerBm25Skipped: r.diagnostics.peerBm25Skipped, medianAskMs: askMs, poolDocuments: docs.length, poolIndex: index.dir };
      if (topicSetup) diagnostics.topics = { ...topicSetup.diagnostics, askMs: askMsQuantiles(r.diagnostics.askMs) };
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
  let document: DocumentComparison | undefined;
  if (documentRun) {
    results.comparisons = []; // no flat top-m or uncompressed baseline here: `document.versus` holds the paired comparisons
    document = documentComparison(documentRun, documentVersus(questions, configs, outcomes, plan), reader !== undefined);
  }
  if (variants.includes('off') && variants.length > 1) {
    const keys = ['IE@1', 'IE@3', 'IE@5', 'P@1', 'P@3', 'P@5', 'R@1', 'R@3', 'R@5', 'ndcg@10'];
    const base = configs.find((c) => c.id.endsWith(' topics=off'))!.id;
    // Each topic variant minus the hybrid, paired (same questions, same resamples).
    (diagnostics.topics as Record<string, unknown>).minusHybrid = topicDifferences(questions, configs.filter((c) => c.id === base || !c.id.endsWith(' topics=off')), outcomes.filter((_, i) => configs[i]!.id === base || !configs[i]!.id.endsWith(' topics=off')), specs, plan, base, keys);
    // And minus the control (the same scorer without topic features): what the topic signal itself adds.
    const control = configs.find((c) => c.id.endsWith(' topics=control'));
    if (control) (diagnostics.topics as Record<string, unknown>).minusControl = topicDifferences(questions, configs.filter((c) => !c.id.endsWith(' topics=off')), outcomes.filter((_, i) => !configs[i]!.id.endsWith(' topics=off')), specs, plan, control.id, keys);
  }
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
      ...(options.mode === 'pool' && options.critic === 'rule' ? { lookAhead: options.lookAhead !== false, criticModel: options.criticModel === false ? 'off' : builtinCriticModel().id } : {}),
      retrieval: options.retrieval,
      ...(options.poolChunks ? { poolChunks: describeCoarse(options.poolChunks) } : {}),
      encoder: embeddings.id,
      ...(adapter ? { adapter: `${adapter.id} (${adapter.file})` } : {}),
      ...(options.nodeScore ? { nodeScore: options.nodeScore } : {}),
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
    ...(document ? { document } : {}),
    timing: { seconds: (Date.now() - started) / 1000, encodedTexts: embeddings.encoded, ...(indexSeconds !== undefined ? { indexSeconds } : {}) },
  };
}

function askMsQuantiles(ms: Record<string, number[]>): Record<string, { p50: number; p95: number; n: number }> {
  const q = (s: number[], p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
  return Object.fromEntries(Object.entries(ms).map(([k, v]) => {
    const s = [...v].sort((a, b) => a - b);
    return [k, { p50: q(s, 0.5), p95: q(s, 0.95), n: s.length }];
  }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** `n` questions drawn without replacement by a seeded shuffle, kept in file order. */
export function seededSample<T>(all: readonly T[], n: number, seed: number): T[] {
  const random = seededRandom(seed);
  const idx = all.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => all[i]!);
}
