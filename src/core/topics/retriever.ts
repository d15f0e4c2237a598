/**
 * TopicCompassRetriever: a Retriever that asks an inner retriever (the HybridRetriever) for its
 * candidate set, then re-ranks those candidates with the trained topic-compass scorer over query,
 * chunk and topic signals. Zero LLM calls; the scorer sees tens of candidates, never the corpus.
 * Each retrieval carries a TopicTrace: the selected topics (ids, labels, weights) and, per
 * candidate, its score with and without the topic signals and its rank before and after.
 */
import type { Item, Modality } from '../../contracts/region';
import type { Retrieval, RetrievedItem, RetrieveOptions, Retriever } from '../retrieve/retriever';
import type { ScoreComponents, TraceTopics } from '../../contracts/trace';
import type { TopicBank } from './bank';
import { candidateFeatures, defaultCompassOptions, selectQueryTopics, type CandidateSignals, type CompassOptions } from './compass';
import type { TopicScorer } from './scorer';

/** The compass's record of one query; it is the ask trace's `TraceTopics` (src/contracts/trace.ts) plus detail. */
export interface TopicTrace extends TraceTopics {
  /** The bank entries selected (chunk ids) and their cosine with the query. */
  entries: Array<{ itemId: string; score: number }>;
  /** M used; the selection and abstraction modes (ablations set them). */
  m: number;
  selection: CompassOptions['selection'];
  abstraction: CompassOptions['abstraction'];
  /** Candidates re-ranked (the hybrid candidate set). */
  candidates: number;
}

/** A Retrieval with the compass's trace attached (the pipeline copies it into TraceRound.topics). */
export interface TopicRetrieval extends Retrieval {
  topics: TopicTrace;
}

export interface TopicCompassOptions extends Partial<CompassOptions> {
  /** Hybrid candidates to re-rank; default 50. */
  candidates?: number;
}

export class TopicCompassRetriever implements Retriever {
  private readonly compass: CompassOptions;
  private readonly candidateCount: number;

  constructor(
    private readonly inner: Retriever,
    private readonly items: { item(id: string): Promise<Item> },
    private readonly embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>,
    private readonly bank: TopicBank,
    private readonly scorer: TopicScorer,
    options: TopicCompassOptions = {},
  ) {
    const { candidates, ...compass } = options;
    this.compass = { ...defaultCompassOptions, ...compass };
    this.candidateCount = candidates ?? 50;
  }

  titled(names: readonly string[], modalities?: readonly Modality[]): Promise<Map<string, string[]>> {
    return this.inner.titled ? this.inner.titled(names, modalities) : Promise.resolve(new Map());
  }

  async retrieve(query: string, k: number, options: RetrieveOptions = {}): Promise<TopicRetrieval> {
    const depth = Math.max(k, this.candidateCount, options.candidates ?? 0);
    const base = await this.inner.retrieve(query, k, { ...options, candidates: depth });
    const eq = await this.embedQuery(query, options.signal);
    const qt = selectQueryTopics(this.bank, eq, this.compass);
    const signals: CandidateSignals[] = base.candidates.map((c, position) => ({ itemId: c.itemId, position, ...pick(c.scores) }));
    const rows = candidateFeatures(this.bank, eq, qt, signals);
    const scored = base.candidates.map((c, i) => {
      const row = rows[i] as Float64Array;
      const withTopics = this.scorer.score(row, true);
      const without = this.scorer.score(row, false);
      return { itemId: c.itemId, hybrid: c.scores, withTopics, without, hybridRank: i };
    });
    const order = [...scored].sort((a, b) => b.withTopics - a.withTopics || a.hybridRank - b.hybridRank);
    const withoutOrder = [...scored].sort((a, b) => b.without - a.without || a.hybridRank - b.hybridRank);
    const rankWithout = new Map(withoutOrder.map((s, r) => [s.itemId, r]));
    // `fused` becomes the compass score so that anything re-sorting candidates by it (replay)
    // reproduces this ranking; `topic` is the lift the topic signals gave.
    const scores = (s: (typeof scored)[number]): ScoreComponents => ({ ...s.hybrid, fused: s.withTopics, topic: s.withTopics - s.without });
    const loaded = new Map(base.items.map((it) => [it.item.id, it.item]));
    const items: RetrievedItem[] = await Promise.all(
      order.slice(0, k).map(async (s, rank) => ({ item: loaded.get(s.itemId) ?? (await this.items.item(s.itemId)), rank, scores: scores(s) })),
    );
    const { model } = this.bank;
    const topics: TopicTrace = {
      k: model.k,
      selectedEntries: qt.entries.length,
      selected: qt.topics.map((t) => ({ topic: t.topic, label: model.labels[t.topic] ?? `topic ${t.topic}`, weight: t.weight, terms: model.terms[t.topic]?.terms ?? [] })),
      lift: order.map((s, rank) => ({ itemId: s.itemId, base: s.without, withTopics: s.withTopics, rankBefore: rankWithout.get(s.itemId) as number, rankAfter: rank })),
      source: 'topic-compass',
      entries: qt.entries.map((e, j) => ({ itemId: this.bank.ids[e] as string, score: qt.entryScores[j] as number })),
      m: this.compass.topics,
      selection: this.compass.selection,
      abstraction: this.compass.abstraction,
      candidates: base.candidates.length,
    };
    return { items, candidates: order.map((s) => ({ itemId: s.itemId, scores: scores(s) })), topics };
  }
}

function pick(s: ScoreComponents): Omit<CandidateSignals, 'itemId' | 'position'> {
  const out: Omit<CandidateSignals, 'itemId' | 'position'> = {};
  if (s.dense !== undefined) out.dense = s.dense;
  if (s.denseRank !== undefined) out.denseRank = s.denseRank;
  if (s.bm25 !== undefined) out.bm25 = s.bm25;
  if (s.bm25Rank !== undefined) out.bm25Rank = s.bm25Rank;
  return out;
}

/**
 * Wraps a query embedder so that the same query text is embedded once even when both the
 * hybrid retriever and the compass ask for it (the pipeline should share one wrapped function).
 */
export function rememberLastQuery(embed: (text: string, signal?: AbortSignal) => Promise<Float32Array>): (text: string, signal?: AbortSignal) => Promise<Float32Array> {
  let last: { text: string; vector: Promise<Float32Array> } | undefined;
  return (text, signal) => {
    if (last?.text !== text) {
      const vector = embed(text, signal);
      last = { text, vector };
      // A failed embedding must not be remembered.
      vector.catch(() => {
        if (last?.vector === vector) last = undefined;
      });
    }
    return last.vector;
  };
}
