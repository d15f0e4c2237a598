/**
 * BM25 over items with MiniSearch (incremental add/discard, JSON persistence), using the same
 * term processing as the critic and the reader (text/terms.ts) so "the evidence mentions this
 * term" means one thing everywhere.
 *
 * The scoring parameters are search-time options (an index need not be rebuilt to change them):
 * classic BM25 (k1 = 1.2, b = 0.75, MiniSearch's BM25+ term `d` = 0) with titles weighted like
 * text. Chosen on the development pools over k1 ∈ {0.9, 1.2, 1.5}, b ∈ {0.4, 0.75},
 * d ∈ {0, 0.5}, title boost ∈ {1, 2}: nDCG@10 SciFact 0.651 → 0.674, HotpotQA 0.766 → 0.769
 * against the former k1 = 1.2, b = 0.75, d = 0.5, title × 2 (docs/evaluation.md, "Retrieval fusion: the
 * encoder's profile").
 */
import MiniSearch, { type SearchResult } from 'minisearch';
import { indexTerm, words } from '../text/terms';

export interface LexicalDoc {
  id: string;
  title: string;
  text: string;
  modality: string;
}

export interface LexicalHit {
  id: string;
  score: number;
}

const options = {
  fields: ['title', 'text'],
  storeFields: ['modality'],
  tokenize: (text: string) => words(text),
  processTerm: (term: string) => indexTerm(term) ?? null,
  searchOptions: { boost: { title: 1 }, bm25: { k: 1.2, b: 0.75, d: 0 } },
};

export class LexicalIndex {
  private constructor(private readonly search: MiniSearch<LexicalDoc>) {}

  static empty(): LexicalIndex {
    return new LexicalIndex(new MiniSearch<LexicalDoc>(options));
  }

  static fromJSON(json: string): LexicalIndex {
    return new LexicalIndex(MiniSearch.loadJSON<LexicalDoc>(json, options));
  }

  get size(): number {
    return this.search.documentCount;
  }

  has(id: string): boolean {
    return this.search.has(id);
  }

  add(docs: LexicalDoc[]): void {
    this.search.addAll(docs);
  }

  remove(ids: Iterable<string>): void {
    for (const id of ids) if (this.search.has(id)) this.search.discard(id);
  }

  query(text: string, k: number, modalities?: readonly string[]): LexicalHit[] {
    const allowed = modalities ? new Set(modalities) : undefined;
    const hits = this.search.search(text, {
      combineWith: 'OR',
      ...(allowed ? { filter: (r: SearchResult) => allowed.has(String(r.modality)) } : {}),
    });
    return hits.slice(0, k).map((h) => ({ id: String(h.id), score: h.score }));
  }

  toJSON(): string {
    return JSON.stringify(this.search);
  }
}
