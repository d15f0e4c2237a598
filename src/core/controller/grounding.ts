/**
 * Retrieval inside one document, the two ways the controller uses it:
 *   groundPages     page-level grounding: every page ranked by the document's own words — BM25
 *                   of the question over the page *heads* (the title lines a filing prints at the
 *                   top of a page: "Consolidated Statements of Cash Flows", "Note 5 – Acquisitions")
 *                   plus half the best BM25 of one of the page's elements, each min-max normalised
 *                   over the pages, with the page vector's cosine as a small tie-breaker — whose
 *                   top pages are the entry points.
 *   searchElements  SEARCH_EVIDENCE: dense + BM25 (RRF) over the document's elements for a
 *                   targeted query, skipping elements the controller already holds or pruned.
 * Why this page score (docs/controller.md, "Page-level grounding"; figures in docs/evaluation.md,
 * measured with tools/eval-page-grounding.ts on the 33 FinanceBench development questions): a
 * page's vector is the mean of everything on it, and a whole page's BM25 rewards pages that
 * mention many question words anywhere; their RRF put a question's first evidence page at a median
 * rank of 17 (3 with this rule). Where a question names what it needs ("the cash flow statement", "acquisitions"),
 * the page that holds it says so in its head, and one element (a table, a paragraph) holds the
 * rest: recall@5 rose from 17.9% (equal-weight RRF of page cosine and page BM25) to 51.3%.
 * Canopy's grounding is text-only: the paper's visual page retriever (ColPali) has no
 * counterpart here, so image-only pages rank last.
 */
import { Bm25Index } from '../index/bm25';
import { reciprocalRankFusion, type Ranked } from '../retrieve/fusion';
import { throwIfCancelled } from '../errors';
import type { DocumentView } from './documentView';
import type { RelevanceDeps, RelevanceModel } from './relevance';
import type { GroundedPage } from './trace';
import { PART_OF_COMPANY, statementByItems, statementsAsked, statementsNamed, type StatementKind } from '../profiles/filings/rows';
import { asksCompanyActivity } from '../profiles/filings/cues';

/** Per-page rankings (best first) of the signals page grounding fuses; pages without a score are absent. */
export interface PageSignals {
  /** Cosine of the page's vector (the normalised sum of its children's) with the question. */
  dense: Ranked[];
  /** BM25 of the question over the page heads (`pageHead`). */
  head: Ranked[];
  /** The best BM25 score of one of the page's elements (BM25 over all the document's elements). */
  element: Ranked[];
}

/** How the signals are weighed: head + element × best-element BM25 + dense × cosine, each min-max normalised. */
export interface GroundingWeights {
  element: number;
  dense: number;
}

/**
 * The best element's BM25 counts half as much as the head's: a head names what the page is about,
 * an element may match question words in passing. The cosine only breaks ties and orders the pages
 * no question word reaches (it ranked evidence pages worst of all the signals on its own).
 */
export const GROUNDING_WEIGHTS: GroundingWeights = Object.freeze({ element: 0.5, dense: 0.05 });

/** A leading block longer than this many words ends the page head (it is body text, not a title line). */
const HEAD_BLOCK_WORDS = 25;
/** At most this many leading blocks form the head. */
const HEAD_BLOCKS = 6;

/** A title line does not end like a sentence. */
const SENTENCE_END = /[.!?;:]["'”’)]?$/u;

/**
 * The page's own title lines: its leading short blocks that do not end like a sentence, up to the
 * first table, list, figure or block of body text — where a filing prints a statement's or
 * section's name ("Consolidated Balance Sheets", "(In millions)", "Note 5 - Acquisitions")
 * whether or not the parser recognised it as a heading — and every heading element further down.
 */
export function pageHead(view: DocumentView, pageId: string): string {
  const parts: string[] = [];
  let leading = true;
  for (const e of view.elementsOn(pageId)) {
    const text = e.text.trim();
    if (!text) continue;
    const titleLine = e.type === 'heading' || (e.type === 'paragraph' && !SENTENCE_END.test(text) && text.split(/\s+/).length <= HEAD_BLOCK_WORDS);
    if (leading && parts.length < HEAD_BLOCKS && titleLine) {
      parts.push(text);
      continue;
    }
    leading = false;
    if (e.type === 'heading') parts.push(text);
  }
  return parts.join('\n');
}

export function sortPages(view: DocumentView, list: Ranked[]): Ranked[] {
  return list.sort((a, b) => b.score - a.score || view.node(a.id)!.page - view.node(b.id)!.page);
}

/** The best score of an element on each page, as a page ranking. */
export function bestPerPage(view: DocumentView, hits: Iterable<Ranked>): Ranked[] {
  const best = new Map<string, number>();
  for (const h of hits) {
    const page = view.pageOf(h.id);
    if (!page) continue;
    const have = best.get(page.id);
    if (have === undefined || h.score > have) best.set(page.id, h.score);
  }
  return sortPages(view, [...best].map(([id, score]) => ({ id, score })));
}

export function pageSignals(view: DocumentView, relevance: RelevanceModel): PageSignals {
  const dense: Ranked[] = [];
  for (const p of view.pages) {
    const d = relevance.dense(p.id);
    if (d !== undefined) dense.push({ id: p.id, score: d });
  }
  // Both BM25 indexes are question-independent: built once per document view.
  return {
    dense: sortPages(view, dense),
    head: headIndex(view).query(relevance.lexicalQuery, view.pages.length),
    element: bestPerPage(view, view.elementBm25().query(relevance.lexicalQuery, view.elements.length)),
  };
}

const headIndexes = new WeakMap<DocumentView, Bm25Index>();

/** BM25 over the page heads of a view, built on first use. */
function headIndex(view: DocumentView): Bm25Index {
  let index = headIndexes.get(view);
  if (!index) {
    const heads = [];
    for (const p of view.pages) {
      const head = pageHead(view, p.id);
      if (head) heads.push({ id: p.id, title: '', text: head, modality: 'text' });
    }
    index = Bm25Index.build(heads);
    headIndexes.set(view, index);
  }
  return index;
}

/**
 * Min-max normalised scores of one list (a single score, or all equal, normalise to 1 — so on a
 * small document the only head holding a question word, however common, scores as a strong one:
 * a known weakness; weighting heads by their share of the question's terms fixed it on the test
 * fixture but cost recall@1 on FinanceBench, docs/evaluation.md).
 */
function normalised(list: Ranked[]): Map<string, number> {
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of list) {
    lo = Math.min(lo, r.score);
    hi = Math.max(hi, r.score);
  }
  return new Map(list.map((r) => [r.id, hi > lo ? (r.score - lo) / (hi - lo) : 1]));
}

/** Every page some signal scores, best first: Σ weight × normalised score (absent = 0); ties in page order. */
export function fusePageSignals(view: DocumentView, s: PageSignals, w: GroundingWeights = GROUNDING_WEIGHTS): Ranked[] {
  const head = normalised(s.head);
  const element = normalised(s.element);
  const dense = normalised(s.dense);
  const ids = new Set([...s.head, ...s.element, ...s.dense].map((r) => r.id));
  return sortPages(
    view,
    [...ids].map((id) => ({ id, score: (head.get(id) ?? 0) + w.element * (element.get(id) ?? 0) + w.dense * (dense.get(id) ?? 0) })),
  );
}

/**
 * Every page, best first (the entry points are the first `initialPages` with a positive score):
 * pages with text by `fusePageSignals`, then pages without text in page order with fused 0.
 */
export function groundPages(view: DocumentView, relevance: RelevanceModel, weights: GroundingWeights = GROUNDING_WEIGHTS): GroundedPage[] {
  const s = pageSignals(view, relevance);
  const rankOf = (list: Ranked[]) => new Map(list.map((r, rank) => [r.id, { rank, score: r.score }]));
  const dense = rankOf(s.dense);
  const head = rankOf(s.head);
  const element = rankOf(s.element);
  const out: GroundedPage[] = fusePageSignals(view, s, weights).map((f, rank) => {
    const g: GroundedPage = { pageId: f.id, page: view.node(f.id)!.page, rank, fused: f.score };
    const d = dense.get(f.id);
    const h = head.get(f.id);
    const e = element.get(f.id);
    if (d) Object.assign(g, { dense: d.score, denseRank: d.rank });
    if (h) Object.assign(g, { head: h.score, headRank: h.rank });
    if (e) Object.assign(g, { element: e.score, elementRank: e.rank });
    return g;
  });
  const ranked = new Set(out.map((g) => g.pageId));
  for (const p of view.pages) if (!ranked.has(p.id)) out.push({ pageId: p.id, page: p.page, rank: out.length, fused: 0 });
  return out;
}

/** A page that holds a financial statement the question asks about, and that statement's tables on it. */
export interface StatementPage {
  pageId: string;
  /** 0-based page. */
  page: number;
  statement: StatementKind;
  /** The question names no statement; its metric lives in this one ("quick ratio" → balance sheet; profiles/filings/rows.ts statementsAsked). */
  implied: boolean;
  /** The page's tables whose own line items make them that statement, in reading order. */
  tableIds: string[];
}

/** Pages per named statement (a balance sheet often spans two: assets, then liabilities and equity). */
const STATEMENT_PAGES = 2;

/**
 * The pages of the statements the question names ("… shown in the cash flow statement", "the
 * balance sheet and the statement of income") or, when it names none, of those its metric lives in
 * ("quick ratio" → the balance sheet, "gross margin" → the income statement), at most
 * STATEMENT_PAGES per statement, best-grounded first: pages whose head names the statement (a
 * PDF-split title such as "Balance Shee t" included) and which carry a table whose own line items
 * make it that statement (profiles/filings/rows.ts), or tables that do together with the page's lines (a
 * statement split where its subtotals were read as text) — so neither the index of financial statements nor a note that cites
 * the statement by name is taken, nor (unless the question asks about one) the statement of part of the company (profiles/filings/rows.ts
 * PART_OF_COMPANY). A question that names or implies no statement gets none.
 */
export function statementPages(view: DocumentView, question: string, grounding: readonly GroundedPage[]): StatementPage[] {
  const named = statementsAsked(question);
  if (named.length === 0) return [];
  const implied = statementsNamed(question).length === 0;
  // A statement of part of the company (a guarantor group, a deed of cross guarantee's closed group)
  // carries the same line items with other figures: a question about the company means the consolidated one.
  const partAsked = PART_OF_COMPANY.test(question);
  const rank = new Map(grounding.map((g) => [g.pageId, g.rank]));
  // What each page's head names, read once for all the named statements.
  const heads = new Map(view.pages.map((p) => [p.id, statementsNamed(pageHead(view, p.id))]));
  const out: StatementPage[] = [];
  for (const statement of named) {
    const found: StatementPage[] = [];
    for (const p of view.pages) {
      if (!heads.get(p.id)!.includes(statement)) continue;
      if (!partAsked && PART_OF_COMPANY.test(pageHead(view, p.id))) continue;
      const tables = view.elementsOn(p.id).filter((e) => e.type === 'table');
      let tableIds = tables.filter((e) => statementByItems(e.text) === statement).map((e) => e.id);
      // A statement the PDF's layout split into several tables (its subtotals read as lines of text between them): the page's rows and lines together make it.
      if (tableIds.length === 0 && tables.length > 1 && statementByItems(view.elementsOn(p.id).map((e) => e.text).join('\n')) === statement) tableIds = tables.map((e) => e.id);
      if (tableIds.length > 0) found.push({ pageId: p.id, page: p.page, statement, implied, tableIds });
    }
    found.sort((a, b) => (rank.get(a.pageId) ?? Infinity) - (rank.get(b.pageId) ?? Infinity) || a.page - b.page);
    for (const f of found.slice(0, STATEMENT_PAGES)) if (!out.some((o) => o.pageId === f.pageId)) out.push(f);
  }
  return out;
}

/** The opening paragraphs of a filing's description of the company, for a question about what it does. */
export interface OverviewParagraphs {
  /** The heading the overview sits under ("Item 1. Business", "Overview", "About Acme"). */
  headingId: string;
  /** Its first body paragraphs, in reading order (at most OVERVIEW_PARAGRAPHS). */
  paragraphIds: string[];
}

/** Paragraphs of the overview opened for a question about what the company does. */
const OVERVIEW_PARAGRAPHS = 2;
/** Elements after the heading searched for them (subheadings such as "The Company" or "General" come between). */
const OVERVIEW_REACH = 10;
/** A body paragraph has at least this many words. */
const OVERVIEW_WORDS = 12;
/** A 10-K's business section, by its item title; then the headings other filings open their description with. */
const BUSINESS_ITEM = /^\s*item\s*1\s*[.:\-–—\s]*business\b/i;
const OVERVIEW_HEADING = /^\s*(?:(?:business|company|corporate)\s+overview|overview(?:\s+of\s+(?:the\s+|our\s+)?(?:business|company))?|(?:our|the)\s+(?:business|company)|general|about\s+\p{Lu}[\p{L}\p{N}&.'’ -]{0,40})\s*[.:]?\s*$/iu;
/** A table of contents lists the items: a page with several "Item n" lines is one, and so is a line that ends in a page number. */
const ITEM_LINE = /^\s*item\s*\d+[a-c]?\b/i;

/**
 * For a question about what the company does ("What industry does ACME primarily operate in?",
 * profiles/filings/cues.ts `asksCompanyActivity`): the first body paragraphs under the filing's business
 * section — the heading "Item 1. Business" of a 10-K, else the first overview heading ("Overview",
 * "Business Overview", "About …") — where a filing says what the company is ("Acme is a global
 * leader in …"). The table of contents, which names "Item 1. Business" too, is skipped: a heading
 * on a page with three or more item lines, or one that ends in a page number. Undefined for other
 * questions and when no such heading with body text after it is found.
 */
export function overviewParagraphs(view: DocumentView, question: string): OverviewParagraphs | undefined {
  if (!asksCompanyActivity(question)) return undefined;
  const itemLines = new Map<string, number>();
  for (const p of view.pages) itemLines.set(p.id, view.elementsOn(p.id).filter((e) => ITEM_LINE.test(e.text)).length);
  const isHeadingLike = (text: string, type: string) => type === 'heading' || (type === 'paragraph' && text.split(/\s+/).length <= 8 && !SENTENCE_END.test(text));
  const under = (heading: (typeof view.elements)[number]): OverviewParagraphs | undefined => {
    const at = view.readingOrder(heading.id);
    const paragraphIds: string[] = [];
    for (const e of view.elements.slice(at + 1, at + 1 + OVERVIEW_REACH)) {
      const text = e.text.trim();
      if (e.type !== 'paragraph' || text.split(/\s+/).length < OVERVIEW_WORDS || !/[.;:]["'”’)]?$/u.test(text)) continue;
      paragraphIds.push(e.id);
      if (paragraphIds.length >= OVERVIEW_PARAGRAPHS) break;
    }
    return paragraphIds.length > 0 ? { headingId: heading.id, paragraphIds } : undefined;
  };
  const candidates = (re: RegExp) =>
    view.elements.filter((e) => {
      const text = e.text.trim();
      if (!re.test(text) || !isHeadingLike(text, e.type) || /\d\s*$/.test(text)) return false;
      const page = view.pageOf(e.id);
      return !page || (itemLines.get(page.id) ?? 0) < 3;
    });
  for (const re of [BUSINESS_ITEM, OVERVIEW_HEADING]) {
    for (const h of candidates(re)) {
      const found = under(h);
      if (found) return found;
    }
  }
  return undefined;
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
