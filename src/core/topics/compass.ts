/**
 * Query time of the topic compass (design §4, MCompassRAG §3.2), with no LLM: *select* the
 * top-L metadata-bank entries for the query (cosine of the query vector with the chunk
 * vectors), *abstract* their topic distributions into the query's top-M topics and a compact
 * query-topic vector g_q, and turn query, chunk and topic signals into a feature row per
 * hybrid candidate for the scorer.
 *
 * Abstraction here is selection-score-weighted pooling (softmax over the selected entries'
 * cosines), then a top-M cut — not the paper's 2-layer attention stack. Pooling has no
 * parameters, so it cannot overfit small label sets; the attention stack is a possible later
 * step (docs/topics.md).
 */
import type { TopicBank } from './bank';
import { cosine, dot, normalizeInPlace, softmax, topIndices } from './vectorMath';

/** `top-l`: the L best entries; `all`: every entry, softmax-weighted (the no-selection ablation). */
export type SelectionMode = 'top-l' | 'all';
/** `pooled`: weighted pooling + top-M cut; `raw`: plain mean of the selected distributions, no cut (ablation). */
export type AbstractionMode = 'pooled' | 'raw';

export interface CompassOptions {
  /** L; default 50. */
  selectEntries: number;
  /** M; default 10. */
  topics: number;
  selection: SelectionMode;
  abstraction: AbstractionMode;
  /** Softmax temperature over selection cosines; default 0.1. */
  selectionTemperature: number;
}

export const defaultCompassOptions: CompassOptions = {
  selectEntries: 50,
  topics: 10,
  selection: 'top-l',
  abstraction: 'pooled',
  selectionTemperature: 0.1,
};

export interface QueryTopics {
  /** Bank entry indices selected, best first, and their cosine with the query. */
  entries: number[];
  entryScores: number[];
  /** The query's topic distribution (length K; zero outside the kept topics). */
  distribution: Float64Array;
  /** Kept topics, heaviest first. */
  topics: Array<{ topic: number; weight: number }>;
  /** Σ weight × centroid over the kept topics, unit length. */
  gq: Float32Array;
}

export function selectQueryTopics(bank: TopicBank, eq: ArrayLike<number>, options: CompassOptions = defaultCompassOptions): QueryTopics {
  const n = bank.size;
  const k = bank.model.k;
  const sims = bank.similarities(eq);
  const entries = options.selection === 'all' ? Array.from({ length: n }, (_, i) => i) : topIndices(sims, options.selectEntries);
  const scores = entries.map((i) => sims[i] as number);
  const weights = options.abstraction === 'raw' ? entries.map(() => 1 / Math.max(1, entries.length)) : [...softmax(scores, options.selectionTemperature)];
  const distribution = new Float64Array(k);
  entries.forEach((e, j) => {
    for (const d of bank.distribution(e)) distribution[d.topic] = (distribution[d.topic] as number) + (weights[j] as number) * d.weight;
  });
  const keep = options.abstraction === 'raw' ? topIndices(distribution, k).filter((t) => (distribution[t] as number) > 0) : topIndices(distribution, options.topics);
  const keptMass = keep.reduce((s, t) => s + (distribution[t] as number), 0) || 1;
  const cut = new Float64Array(k);
  const topics = keep.map((t) => {
    const weight = (distribution[t] as number) / keptMass;
    cut[t] = weight;
    return { topic: t, weight };
  });
  // For the trace, the no-selection ablation still reports its L best entries.
  const reported = options.selection === 'all' ? topIndices(sims, options.selectEntries) : entries;
  return { entries: reported, entryScores: reported.map((i) => sims[i] as number), distribution: cut, topics, gq: topicVector(bank, topics) };
}

/** Σ weight × centroid, unit length: the topic-side vector g of a query or a chunk. */
export function topicVector(bank: TopicBank, topics: ReadonlyArray<{ topic: number; weight: number }>): Float32Array {
  const dim = bank.model.dim;
  const g = new Float32Array(dim);
  for (const { topic, weight } of topics) {
    const off = topic * dim;
    for (let j = 0; j < dim; j++) g[j] = (g[j] as number) + weight * (bank.model.centroids[off + j] as number);
  }
  return normalizeInPlace(g);
}

/** What the scorer sees about one hybrid candidate (from the Retriever's ScoreComponents). */
export interface CandidateSignals {
  itemId: string;
  /** 0-based position in the hybrid ranking. */
  position: number;
  dense?: number;
  denseRank?: number;
  bm25?: number;
  bm25Rank?: number;
}

/** Feature names, in row order. The first `baseFeatureCount` carry no topic signal. */
export const featureNames = [
  'cos(e_q,e_c)',
  'bm25/max',
  '1/(1+denseRank)',
  '1/(1+bm25Rank)',
  '1/(1+hybridRank)',
  'cos(g_q,g_c)',
  'cos(e_q,g_c)',
  'cos(g_q,e_c)',
  'overlap(p_q,p_c)',
] as const;
export const baseFeatureCount = 5;

/**
 * One feature row per candidate. Topic features are NaN for a chunk the bank does not hold yet
 * (added since the last fit): the scorer reads NaN as "no topic signal" (its neutral value).
 */
export function candidateFeatures(bank: TopicBank, eq: ArrayLike<number>, qt: QueryTopics | undefined, candidates: readonly CandidateSignals[]): Float64Array[] {
  let maxBm25 = 0;
  for (const c of candidates) if (c.bm25 !== undefined) maxBm25 = Math.max(maxBm25, c.bm25);
  return candidates.map((c) => {
    const row = new Float64Array(featureNames.length).fill(Number.NaN);
    const i = bank.indexOf(c.itemId);
    const ec = i === undefined ? undefined : bank.vector(i);
    row[0] = ec ? dot(eq, ec) : (c.dense ?? 0);
    row[1] = c.bm25 !== undefined && maxBm25 > 0 ? c.bm25 / maxBm25 : 0;
    row[2] = c.denseRank !== undefined ? 1 / (1 + c.denseRank) : 0;
    row[3] = c.bm25Rank !== undefined ? 1 / (1 + c.bm25Rank) : 0;
    row[4] = 1 / (1 + c.position);
    if (qt && i !== undefined && ec) {
      const dist = bank.distribution(i);
      const gc = topicVector(bank, dist);
      row[5] = dot(qt.gq, gc);
      row[6] = cosine(eq, gc);
      row[7] = cosine(qt.gq, ec);
      let overlap = 0;
      for (const d of dist) overlap += Math.min(d.weight, qt.distribution[d.topic] as number);
      row[8] = overlap;
    }
    return row;
  });
}
