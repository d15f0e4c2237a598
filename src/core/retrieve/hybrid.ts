/**
 * Hybrid retrieval (design §4): dense cosine over item vectors fused with BM25 by reciprocal
 * rank fusion. Both rankers look deeper than k (a pool of max(4k, 50)) so fusion can promote an
 * item one ranker misses; the fused ranking beyond k is returned as candidates for the trace.
 */
import type { CorpusIndex } from '../index/corpusIndex';
import type { ScoreComponents } from '../../contracts/trace';
import { reciprocalRankFusion } from './fusion';
import type { Retrieval, RetrieveOptions, Retriever } from './retriever';

export interface HybridOptions {
  dense: boolean;
  bm25: boolean;
  rrfK: number;
}

export class HybridRetriever implements Retriever {
  constructor(
    private readonly index: CorpusIndex,
    private readonly embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>,
    private readonly options: HybridOptions = { dense: true, bm25: true, rrfK: 60 },
  ) {}

  async retrieve(query: string, k: number, options: RetrieveOptions = {}): Promise<Retrieval> {
    const pool = Math.max(4 * k, options.candidates ?? 50);
    const filter = options.modalities ? { modalities: options.modalities } : undefined;
    const dense = this.options.dense ? await this.index.vectors.query(await this.embedQuery(query, options.signal), pool, filter) : [];
    const lexical = this.options.bm25 ? this.index.lexical.query(query, pool, options.modalities) : [];
    const fused = reciprocalRankFusion(
      [dense, lexical].filter((_, i) => (i === 0 ? this.options.dense : this.options.bm25)),
      this.options.rrfK,
    ).filter((f) => !options.excludeIds?.has(f.id));

    const components = (f: (typeof fused)[number]): ScoreComponents => {
      const parts = this.options.dense && this.options.bm25 ? f.parts : this.options.dense ? [f.parts[0], undefined] : [undefined, f.parts[0]];
      const s: ScoreComponents = { fused: f.fused };
      if (parts[0]) Object.assign(s, { dense: parts[0].score, denseRank: parts[0].rank });
      if (parts[1]) Object.assign(s, { bm25: parts[1].score, bm25Rank: parts[1].rank });
      return s;
    };
    const top = fused.slice(0, k);
    const items = await Promise.all(top.map(async (f, rank) => ({ item: await this.index.item(f.id), rank, scores: components(f) })));
    return {
      items,
      candidates: fused.slice(0, Math.max(k, options.candidates ?? 50)).map((f) => ({ itemId: f.id, scores: components(f) })),
    };
  }
}
