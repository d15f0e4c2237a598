/**
 * Training data for the compass scorer: feature groups from labelled queries (dataset qrels) or,
 * when a corpus has no labels, synthetic queries from the documents' own structure (a chunk's
 * title or first sentence as the query, the chunk as its positive; the hybrid candidates it
 * did not come from are the hard negatives, BM25's among them). Plus the seeded split by query
 * that keeps a held-out set untouched. An LLM-teacher path (MCompassRAG §3.3) is not here yet.
 */
import type { ScoreComponents } from '../../contracts/trace';
import type { TopicBank } from './bank';
import { baseFeatureCount, candidateFeatures, featureNames, selectQueryTopics, type CompassOptions } from './compass';
import { trainScorer, type ScorerGroup, type TrainedScorer, type TrainScorerOptions } from './scorer';
import { seededRandom } from '../random';
import { shuffled } from './vectorMath';

/** Seeded split of query ids: `holdout` share held back (never trained or tuned on). */
export function splitByQuery(ids: readonly string[], holdout: number, seed = 1): { train: string[]; heldOut: string[] } {
  const order = shuffled([...ids].sort(), seededRandom(seed));
  const cut = Math.round(order.length * holdout);
  return { heldOut: order.slice(0, cut).sort(), train: order.slice(cut).sort() };
}

export interface SyntheticQuery {
  queryId: string;
  text: string;
  positives: string[];
}

/**
 * Up to `count` synthetic queries (seeded sample of the chunks): the chunk's first sentence when
 * it has at least `minWords` words and the chunk has more after it, else its title. The query
 * text is left in the chunk — this is a weak, structure-only signal, and docs/topics.md says so.
 */
export function syntheticQueries(chunks: ReadonlyArray<{ id: string; title?: string; text: string }>, options: { count: number; seed?: number; minWords?: number }): SyntheticQuery[] {
  const minWords = options.minWords ?? 6;
  const out: SyntheticQuery[] = [];
  for (const c of shuffled(chunks, seededRandom(options.seed ?? 1))) {
    if (out.length >= options.count) break;
    const m = /^(.+?[.!?])(\s+|$)/s.exec(c.text.trim());
    const first = m?.[1]?.trim();
    const rest = m ? c.text.trim().slice(m[0].length) : '';
    let text: string | undefined;
    if (first && first.split(/\s+/).length >= minWords && rest.length > 0) text = first;
    else if (c.title && c.title.trim().split(/\s+/).length >= 2) text = c.title.trim();
    if (text) out.push({ queryId: `synthetic:${c.id}`, text, positives: [c.id] });
  }
  return out;
}

/** One query as the scorer's training sees it: its vector, the hybrid candidates, the gold ids. */
export interface LabelledCandidates {
  eq: Float32Array;
  candidates: ReadonlyArray<{ itemId: string; scores: ScoreComponents }>;
  positives: ReadonlySet<string>;
}

/** Feature groups (one per query) under the given compass settings. */
export function scorerGroups(bank: TopicBank, queries: readonly LabelledCandidates[], compass: CompassOptions, withTopics = true): ScorerGroup[] {
  return queries.map((q) => {
    const qt = withTopics ? selectQueryTopics(bank, q.eq, compass) : undefined;
    const rows = candidateFeatures(
      bank,
      q.eq,
      qt,
      q.candidates.map((c, position) => ({ itemId: c.itemId, position, ...definedScores(c.scores) })),
    );
    return { rows, labels: q.candidates.map((c) => (q.positives.has(c.itemId) ? 1 : 0)) };
  });
}

/** Trains the compass scorer (all features) or, with `topics: false`, the topic-free control. */
export function trainTopicScorer(groups: readonly ScorerGroup[], options: Omit<TrainScorerOptions, 'features' | 'topicFeatures' | 'use'> & { topics?: boolean } = {}): TrainedScorer {
  const { topics = true, ...rest } = options;
  const topicFeatures = featureNames.map((_, j) => j).filter((j) => j >= baseFeatureCount);
  return trainScorer(groups, {
    ...rest,
    features: featureNames,
    topicFeatures,
    ...(topics ? {} : { use: featureNames.map((_, j) => j).filter((j) => j < baseFeatureCount) }),
  });
}

function definedScores(s: ScoreComponents): { dense?: number; denseRank?: number; bm25?: number; bm25Rank?: number } {
  const out: { dense?: number; denseRank?: number; bm25?: number; bm25Rank?: number } = {};
  if (s.dense !== undefined) out.dense = s.dense;
  if (s.denseRank !== undefined) out.denseRank = s.denseRank;
  if (s.bm25 !== undefined) out.bm25 = s.bm25;
  if (s.bm25Rank !== undefined) out.bm25Rank = s.bm25Rank;
  return out;
}
