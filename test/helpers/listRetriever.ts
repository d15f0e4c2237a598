/**
 * A retriever over an in-memory list of items, ranking with the real BM25 index
 * (LexicalIndex). For pipeline tests that need retrieval without an index on disk.
 */
import { LexicalIndex } from '../../src/core/index/lexicalIndex';
import type { Item } from '../../src/contracts/region';
import type { Retrieval, RetrieveOptions, Retriever } from '../../src/core/retrieve/retriever';

export class ListRetriever implements Retriever {
  private readonly lexical = LexicalIndex.empty();
  private readonly byId: Map<string, Item>;
  readonly queries: string[] = [];

  constructor(items: Item[]) {
    this.byId = new Map(items.map((i) => [i.id, i]));
    this.lexical.add(items.map((i) => ({ id: i.id, title: i.title, text: i.root.text, modality: i.modality })));
  }

  async retrieve(query: string, k: number, options: RetrieveOptions = {}): Promise<Retrieval> {
    this.queries.push(query);
    const hits = this.lexical.query(query, 1000, options.modalities).filter((h) => !options.excludeIds?.has(h.id));
    const scored = hits.map((h, rank) => ({ id: h.id, scores: { bm25: h.score, bm25Rank: rank, fused: h.score } }));
    return {
      items: scored.slice(0, k).map((s, rank) => ({ item: this.byId.get(s.id)!, rank, scores: s.scores })),
      candidates: scored.slice(0, 50).map((s) => ({ itemId: s.id, scores: s.scores })),
    };
  }
}
