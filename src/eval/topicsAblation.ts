/**
 * Topic-compass configurations for the open-pool mode of `canopy eval` (docs/topics.md,
 * docs/evaluation.md): `off` (the hybrid retriever alone), `noselect` (the compass with the whole
 * bank instead of the top-L entries), `noabstract` (the selected entries' raw mean distribution,
 * no weighting and no top-M cut) and `full`. Protocol: the questions are split by a seeded split
 * by question id; the scorers of every variant are trained on the training part (dataset gold
 * documents → pool items as positives, the default retrieval's 50 candidates as the list) and the
 * evaluation runs on the held-back part only, so every reported figure is on unseen questions.
 * The metadata bank is fitted once per pool index generation and cached beside it
 * (`topics-<N>.bin`, src/core/topics/indexTopics.ts).
 */
import type { Retriever } from '../core/retrieve/retriever';
import type { TopicBank } from '../core/topics/bank';
import { defaultCompassOptions, type CompassOptions } from '../core/topics/compass';
import { bankFor } from '../core/topics/compassIndex';
import { fitLeafTopics, type LeafChunk } from '../core/topics/fit';
import { leavesOf } from '../core/compress/baselines';
import { TopicCompassRetriever, rememberLastQuery } from '../core/topics/retriever';
import { labelQueries, meanIe, rankWith, trainOnLabelled, type TrainingQuery } from '../core/topics/trainIndex';
import { splitByQuery } from '../core/topics/training';
import { HybridRetriever } from '../core/retrieve/hybrid';
import { RRF_EQUAL, type FusionSetting } from '../core/retrieve/profile';
import { candidatesOf } from '../core/topics/decision';
import type { BootstrapPlan, Interval } from './bootstrap';
import type { EvalQuestion } from './datasets/types';
import type { Outcome } from './outcome';
import type { MetricSpec } from './report';
import type { EvalEmbeddings } from './embeddings';
import type { PoolIndex } from './poolIndex';

/** `control`: the same scorer trained on the base (non-topic) features only — what re-ranking alone gives. */
export const topicVariants = ['off', 'control', 'noselect', 'noabstract', 'full'] as const;
/** Asked for by name (`--topics leaves`): the full compass over a bank of leaf mixtures (fit.ts fitLeafTopics). */
export const extraTopicVariants = ['leaves'] as const;
export type TopicVariant = (typeof topicVariants)[number] | (typeof extraTopicVariants)[number];

/**
 * The leaf-mixture bank of a pool index: every item's leaves (their vectors from the embedding
 * cache, where the eager pool index put them) fitted by fitLeafTopics; the items' own vectors
 * are the corpus bank's.
 */
async function fitLeafBank(pool: PoolIndex, corpusBank: TopicBank, embeddings: EvalEmbeddings, options: TopicSetupOptions): Promise<TopicBank> {
  const t0 = Date.now();
  const chunks: LeafChunk[] = [];
  for (let i = 0; i < corpusBank.size; i++) {
    options.signal?.throwIfAborted();
    const id = corpusBank.ids[i]!;
    const item = await pool.corpus.item(id);
    const texts = leavesOf(item.root).map((l) => l.text).filter((t) => t.trim().length > 0);
    const vectors = texts.length > 0 ? await embeddings.embedTexts(texts, options.signal) : [];
    chunks.push({ id, vector: Float32Array.from(corpusBank.vector(i)), text: texts.join(' '), leaves: texts.map((text, j) => ({ text, vector: vectors[j]! })) });
  }
  const bank = fitLeafTopics(chunks, { encoderId: pool.corpus.manifest.encoderId });
  options.onProgress?.(`topics: leaf-mixture bank, K = ${bank.model.k} over ${chunks.reduce((s, c) => s + c.leaves.length, 0)} leaves of ${chunks.length} items (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  return bank;
}

export function compassOf(variant: Exclude<TopicVariant, 'off'>): CompassOptions {
  if (variant === 'control') return { ...defaultCompassOptions };
  if (variant === 'noselect') return { ...defaultCompassOptions, selection: 'all' };
  if (variant === 'noabstract') return { ...defaultCompassOptions, abstraction: 'raw' };
  return { ...defaultCompassOptions };
}

export interface TopicSetup {
  /** The held-back questions: the only ones evaluated. */
  questions: EvalQuestion[];
  retrievers: Map<TopicVariant, Retriever | undefined>;
  /** The hybrid retriever the compass variants wrap (the `off` variant). */
  hybrid: Retriever;
  diagnostics: {
    protocol: string;
    /** The retrieval whose candidates every scorer is trained on and re-ranks. */
    candidates: string;
    seed: number;
    holdout: number;
    trainQuestions: number;
    heldOutQuestions: number;
    trainWithGoldInCandidates: number;
    k: number;
    /** K of the leaf-mixture bank, when the `leaves` variant ran. */
    leafK?: number;
    bankEntries: number;
    fitSeconds?: number;
    trainSeconds: number;
    losses: Record<string, [number, number]>;
    /** Re-ranking of the held-out questions' hybrid candidates alone (no pipeline): a cross-check. */
    heldOutRerankIE: Record<string, Record<string, number>>;
  };
}

export interface TopicSetupOptions {
  seed: number;
  /** Share of questions held back for the evaluation; default 0.5. */
  holdout?: number;
  epochs?: number;
  /**
   * The fusion of the retrieval the compass re-ranks: the run's default retrieval (the encoder's
   * profile), so that the scorer is trained on, and re-ranks, the candidates a user's query gets
   * today. Absent: the design's equal-weight RRF (the compass's first measurements).
   */
  fusion?: FusionSetting;
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

/** Fits (or opens) the bank, splits the questions, trains one scorer per topic variant on the training part. */
export async function prepareTopicVariants(questions: EvalQuestion[], variants: readonly TopicVariant[], pool: PoolIndex, embeddings: EvalEmbeddings, options: TopicSetupOptions): Promise<TopicSetup> {
  const holdout = options.holdout ?? 0.5;
  const t0 = Date.now();
  const corpusBank: TopicBank | undefined = await bankFor(pool.corpus, pool.corpus.store, {
    fit: true,
    logger: { log: (_l, m) => options.onProgress?.(m) },
  });
  if (!corpusBank) throw new Error('the pool index holds no items to fit topics on');
  let leafBank: TopicBank | undefined;
  const fitSeconds = (Date.now() - t0) / 1000;
  const split = splitByQuery(
    questions.map((q) => q.id),
    holdout,
    options.seed,
  );
  const held = new Set(split.heldOut);
  const embedQuery = rememberLastQuery(embeddings.embedQuery.bind(embeddings));
  const hybrid = new HybridRetriever(pool.corpus, embedQuery, { dense: true, bm25: true, ...(options.fusion ? { fusion: options.fusion } : {}) });
  const toTraining = (q: EvalQuestion): TrainingQuery => ({
    id: q.id,
    text: q.question,
    positives: [...q.goldDocs].filter(([, g]) => g > 0).flatMap(([doc]) => (pool.itemOfDoc.has(doc) ? [pool.itemOfDoc.get(doc)!] : [])),
  });
  const train = questions.filter((q) => !held.has(q.id)).map(toTraining).filter((q) => q.positives.length > 0);
  const heldOut = questions.filter((q) => held.has(q.id));
  const t1 = Date.now();
  options.onProgress?.(`topics: labelling ${train.length} training questions with their hybrid candidates`);
  const labelled = await labelQueries(hybrid, embedQuery, train, { candidates: 50, ...(options.signal ? { signal: options.signal } : {}) });
  const heldLabelled = await labelQueries(hybrid, embedQuery, heldOut.map(toTraining), { candidates: 50, ...(options.signal ? { signal: options.signal } : {}) });
  const retrievers = new Map<TopicVariant, Retriever | undefined>();
  const losses: Record<string, [number, number]> = {};
  const heldOutRerankIE: Record<string, Record<string, number>> = {};
  const ie = (ranked: string[][]) => Object.fromEntries([1, 3, 5].map((k) => [`IE@${k}`, round(meanIe(ranked, heldLabelled, k))]));
  for (const v of variants) {
    if (v === 'off') {
      retrievers.set(v, undefined);
      heldOutRerankIE[v] = ie(rankWith(corpusBank, undefined, heldLabelled, defaultCompassOptions));
      continue;
    }
    const compass = compassOf(v);
    const bank = v === 'leaves' ? (leafBank ??= await fitLeafBank(pool, corpusBank, embeddings, options)) : corpusBank;
    options.onProgress?.(`topics: training the ${v} scorer`);
    const { scorer, checkpoint } = trainOnLabelled(bank, labelled, { source: 'qrels', encoderId: pool.corpus.manifest.encoderId, candidates: candidatesOf(options.fusion ?? RRF_EQUAL) }, { seed: options.seed, holdout: 0, compass, ...(options.epochs ? { epochs: options.epochs } : {}), ...(v === 'control' ? { topicFeatures: false } : {}) });
    const l = checkpoint.training.losses;
    losses[v] = [l[0]!, l[l.length - 1]!];
    heldOutRerankIE[v] = ie(rankWith(bank, scorer, heldLabelled, compass));
    retrievers.set(v, new TopicCompassRetriever(hybrid, pool.corpus, embedQuery, bank, scorer, compass));
  }
  return {
    questions: heldOut,
    retrievers,
    hybrid,
    diagnostics: {
      protocol: `seeded split by question id (seed ${options.seed}): scorers trained on ${train.length} questions, all figures on the ${heldOut.length} held-back questions`,
      candidates: candidatesOf(options.fusion ?? RRF_EQUAL),
      seed: options.seed,
      holdout,
      trainQuestions: train.length,
      heldOutQuestions: heldOut.length,
      trainWithGoldInCandidates: labelled.filter((q) => q.candidates.some((c) => q.positives.has(c.itemId))).length,
      k: corpusBank.model.k,
      ...(leafBank ? { leafK: leafBank.model.k } : {}),
      bankEntries: corpusBank.size,
      fitSeconds,
      trainSeconds: (Date.now() - t1) / 1000,
      losses,
      heldOutRerankIE,
    },
  };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Paired bootstrap differences of each topic variant against `off` (the hybrid) on the same
 * questions and resamples: per question, variant value − hybrid value, for each metric key.
 */
export function topicDifferences(
  questions: readonly EvalQuestion[],
  configs: ReadonlyArray<{ id: string }>,
  outcomes: ReadonlyArray<ReadonlyArray<Outcome | undefined>>,
  specs: readonly MetricSpec[],
  plan: BootstrapPlan,
  baseline: string,
  keys: readonly string[],
): Record<string, Record<string, Interval>> {
  const b = configs.findIndex((c) => c.id === baseline);
  if (b < 0) return {};
  const out: Record<string, Record<string, Interval>> = {};
  configs.forEach((cfg, c) => {
    if (c === b) return;
    const row: Record<string, Interval> = {};
    for (const key of keys) {
      const spec = specs.find((s) => s.key === key);
      if (!spec) continue;
      const diffs = questions.map((q, qi) => {
        const x = outcomes[c]![qi];
        const y = outcomes[b]![qi];
        const vx = x ? spec.value(x, q as EvalQuestion) : undefined;
        const vy = y ? spec.value(y, q as EvalQuestion) : undefined;
        return vx && vy && vx.den > 0 && vy.den > 0 ? { num: vx.num / vx.den - vy.num / vy.den, den: 1 } : undefined;
      });
      row[key] = plan.interval(diffs);
    }
    out[cfg.id] = row;
  });
  return out;
}
