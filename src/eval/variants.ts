/**
 * Variants measured in the harness (never the product's defaults). Node vectors (never the product's default): group nodes
 * scored from their own encoded text instead of the normalised mean of their children's vectors
 * (`nodeScorer.ts`). Means of several sentence vectors have a higher cosine with a query than a
 * typical single sentence does, so a mean-vector group tends to beat its children and the rule
 * stops there; an encoded group is judged like any other region of that text.
 */
import type { EmbedTexts } from '../core/encode/nodeVectors';
import type { CorpusIndex } from '../core/index/corpusIndex';
import type { RegionNode } from '../contracts/region';
import type { Retrieval, RetrieveOptions, Retriever } from '../core/retrieve/retriever';
import type { ScoreComponents } from '../contracts/trace';

export async function nodeVectorsEncodedGroups(root: RegionNode, embed: EmbedTexts, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const nodes: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    nodes.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  const vectors = await embed(
    nodes.map((n) => (n.header ? `${n.header}\n${n.text}` : n.text)),
    signal,
  );
  return new Map(nodes.map((n, i) => [n.id, vectors[i]!]));
}

/**
 * Weighted reciprocal-rank fusion, measured as a retrieval variant (`--retrieval hybrid:bm25=<w>`):
 * the same dense and BM25 rankings as `HybridRetriever` (same pool of max(4k, 50) per ranker),
 * fused as Σ w_r / (rrfK + rank), with BM25 weighted w and dense 1. w = 1 is the pipeline's RRF.
 */
export class WeightedHybridRetriever implements Retriever {
  constructor(
    private readonly index: CorpusIndex,
    private readonly embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>,
    private readonly bm25Weight: number,
    private readonly rrfK = 60,
  ) {}

  async retrieve(query: string, k: number, options: RetrieveOptions = {}): Promise<Retrieval> {
    const pool = Math.max(4 * k, options.candidates ?? 50);
    const filter = options.modalities ? { modalities: options.modalities } : undefined;
    const dense = await this.index.vectors.query(await this.embedQuery(query, options.signal), pool, filter);
    const lexical = this.index.lexical.query(query, pool, options.modalities);
    const table = new Map<string, ScoreComponents & { best: number }>();
    const add = (hits: Array<{ id: string; score: number }>, weight: number, which: 'dense' | 'bm25') => {
      hits.forEach((h, rank) => {
        let e = table.get(h.id);
        if (!e) table.set(h.id, (e = { fused: 0, best: rank }));
        if (which === 'dense') Object.assign(e, { dense: h.score, denseRank: rank });
        else Object.assign(e, { bm25: h.score, bm25Rank: rank });
        e.fused += weight / (this.rrfK + rank + 1);
        e.best = Math.min(e.best, rank);
      });
    };
    add(dense, 1, 'dense');
    add(lexical, this.bm25Weight, 'bm25');
    const fused = [...table.entries()]
      .filter(([id]) => !options.excludeIds?.has(id))
      .sort((a, b) => b[1].fused - a[1].fused || a[1].best - b[1].best || (a[0] < b[0] ? -1 : 1));
    const strip = ({ best: _best, ...s }: ScoreComponents & { best: number }): ScoreComponents => s;
    const items = await Promise.all(fused.slice(0, k).map(async ([id, s], rank) => ({ item: await this.index.item(id), rank, scores: strip(s) })));
    return { items, candidates: fused.slice(0, Math.max(k, options.candidates ?? 50)).map(([id, s]) => ({ itemId: id, scores: strip(s) })) };
  }
}
