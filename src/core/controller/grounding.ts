/**
 * Retrieval inside one document, the two ways the controller uses it:
 *   groundPages     page-level grounding: every page ranked by a hybrid score — the dense cosine
 *                   of the page text's vector with the question, fused with BM25 over the page
 *                   texts by reciprocal-rank fusion — whose top pages are the entry points.
 *   searchElements  SEARCH_EVIDENCE: the same hybrid over the document's elements for a
 *                   targeted query, skipping elements the controller already holds or pruned.
 * RRF is the design's fusion (design §4); the retriever's score-level profile (retrieve/profile.ts)
 * has not been measured on pages, so grounding keeps RRF.
 * Canopy's grounding is text-only: the paper's visual page retriever (ColPali) has no
 * counterpart here, so image-only pages rank last.
 */
import { reciprocalRankFusion, type Ranked } from '../retrieve/fusion';
import { throwIfCancelled } from '../errors';
import type { DocumentView } from './documentView';
import type { RelevanceDeps, RelevanceModel } from './relevance';
import type { GroundedPage } from './trace';

/** Every page with text, best first; pages without text follow in page order with fused 0. */
export function groundPages(view: DocumentView, relevance: RelevanceModel, rrfK: number): GroundedPage[] {
  const dense: Ranked[] = [];
  for (const p of view.pages) {
    const d = relevance.dense(p.id);
    if (d !== undefined) dense.push({ id: p.id, score: d });
  }
  dense.sort((a, b) => b.score - a.score || view.node(a.id)!.page - view.node(b.id)!.page);
  const bm25 = view.pageBm25().query(relevance.question, view.pages.length);
  const fused = reciprocalRankFusion([dense, bm25], rrfK);
  const out: GroundedPage[] = fused.map((f, rank) => {
    const node = view.node(f.id)!;
    const g: GroundedPage = { pageId: f.id, page: node.page, rank, fused: f.fused };
    if (f.parts[0]) Object.assign(g, { dense: f.parts[0].score, denseRank: f.parts[0].rank });
    if (f.parts[1]) Object.assign(g, { bm25: f.parts[1].score, bm25Rank: f.parts[1].rank });
    return g;
  });
  const ranked = new Set(out.map((g) => g.pageId));
  for (const p of view.pages) if (!ranked.has(p.id)) out.push({ pageId: p.id, page: p.page, rank: out.length, fused: 0 });
  return out;
}

export interface ElementHit {
  nodeId: string;
  page: number;
  /** RRF score of the dense and BM25 rankings. */
  score: number;
}

/**
 * The `k` best elements for `query` (dense + BM25, RRF) among those `eligible` allows. The
 * query is embedded with the frozen query encoder; element vectors come from `relevance`.
 */
export async function searchElements(
  query: string,
  view: DocumentView,
  relevance: RelevanceModel,
  deps: Pick<RelevanceDeps, 'embedQuery'>,
  options: { k: number; rrfK: number; eligible: (id: string) => boolean },
  signal?: AbortSignal,
): Promise<ElementHit[]> {
  const q = await deps.embedQuery(query, signal);
  throwIfCancelled(signal);
  const candidates = view.elements.filter((e) => options.eligible(e.id));
  if (candidates.length === 0) return [];
  const dense: Ranked[] = [];
  for (const e of candidates) {
    const s = relevance.cosineWith(q, e.id);
    if (s !== undefined) dense.push({ id: e.id, score: s });
  }
  dense.sort((a, b) => b.score - a.score || view.readingOrder(a.id) - view.readingOrder(b.id));
  // BM25 over all of the document's elements (built once per document view), then the eligible ones.
  const pool = Math.max(50, 4 * options.k);
  const lexical = view.elementBm25().query(query, view.elements.length).filter((h) => options.eligible(h.id)).slice(0, pool);
  const fused = reciprocalRankFusion([dense.slice(0, pool), lexical], options.rrfK);
  return fused.slice(0, options.k).map((f) => ({ nodeId: f.id, page: view.node(f.id)!.page, score: f.fused }));
}
