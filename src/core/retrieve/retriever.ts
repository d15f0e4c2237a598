/**
 * The Retriever port: a query in, the top-k items out, each with the score components that
 * produced its rank (dense, BM25, topic, fused) so the trace can show them.
 */
import type { Item, Modality } from '../../contracts/region';
import type { ScoreComponents, TraceTopics } from '../../contracts/trace';

export interface RetrievedItem {
  item: Item;
  /** 0-based rank in this retrieval. */
  rank: number;
  scores: ScoreComponents;
}

export interface RetrieveOptions {
  /** Items never returned (already in the evidence). */
  excludeIds?: ReadonlySet<string>;
  /** Only items of these modalities; all when absent. */
  modalities?: readonly Modality[];
  /** How many ranked candidates to report beyond k (for replay); default 50. */
  candidates?: number;
  /**
   * Files the question names ("ACME's quick ratio" → ACME_2023_10K.pdf): when fewer than
   * `reserve` of the top k come from the best-fitting such files, the best-ranked ones among the
   * candidates take the last places (their scores say `namedSource`).
   */
  named?: {
    /** 0: the question does not name the file; higher: a better fit (the period it names). */
    prefer(file: string): number;
    reserve: number;
  };
  /**
   * Named things the query looks for (a follow-up round's bridges): among the ranked candidates,
   * the items whose title names exactly one of them take the first places (scores `titleMatch`).
   */
  titled?: readonly string[];
  signal?: AbortSignal;
}

export interface Retrieval {
  items: RetrievedItem[];
  candidates: Array<{ itemId: string; scores: ScoreComponents }>;
  /** The topic compass's selection and per-chunk lift, when the retriever used topics (src/core/topics). */
  topics?: TraceTopics;
}

export interface Retriever {
  retrieve(query: string, k: number, options?: RetrieveOptions): Promise<Retrieval>;
  /** For each name, the ids of the items whose title names it (text/titles.ts `titleKey`); a name no item has is absent. */
  titled?(names: readonly string[], modalities?: readonly Modality[]): Promise<Map<string, string[]>>;
}
