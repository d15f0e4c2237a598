/**
 * Query relevance of the document's pages and elements, shared by page grounding, the rule
 * evaluator and SEARCH_EVIDENCE:
 *   dense    cosine of the node's vector (after the optional adapter) with the frozen query vector
 *   lexical  the idf-weighted share of the question's content terms that occur in the node's text
 *            (same term processing as BM25: stemmed, stop words removed; idf over the elements)
 *   relevance = ½·max(0, dense) + ½·lexical, and `relative` divides it by the best element's, so
 *            rule thresholds mean the same for every document and encoder.
 * A table's lexical share counts its lead-in's words too (the paragraph just before it:
 * "… revenue by geographic region:"): its cells are figures and short labels. A question that
 * names a line item by its colloquial name ("top line", "bottom line", "spinning off") gets the
 * filing's name for it ("revenue", "net income", "separation") as query terms too, when the
 * document uses that name (LINE_ITEM_ALIASES).
 *
 * Every page and element gets its region's vector (src/core/encode/nodeVectors.ts: the leaves
 * through the caller's `embedTexts`, normally the embedding cache, so an indexed document costs no
 * encoder call; inner regions derived from them), once, up front. The rule looks at the whole graph; spending one pass over it
 * is what makes search and one-step lookahead cheap afterwards.
 */
import { l2NormalizeInPlace } from '../encode/encoder';
import type { NodeAdapter } from '../compress/nodeScorer';
import { nodeVectorsOf, type EmbedTexts } from '../encode/nodeVectors';
import type { GraphNode } from '../../contracts/graph';
import { throwIfCancelled } from '../errors';
import { contentTerms, words, indexTerm } from '../text/terms';
import type { DocumentView, ViewLexicon } from './documentView';

/**
 * Colloquial names of line items and events, and the words filings use for them. Only the words
 * the document itself uses are added to the question's terms (a filing that never says
 * "separation" is not searched for it), so an alias cannot pull in words foreign to the document.
 */
export const LINE_ITEM_ALIASES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\btop[- ]?line\b/i, 'revenue revenues sales'],
  [/\bbottom[- ]?line\b/i, 'net income earnings'],
  [/\bspin(?:ning)?[- ]?offs?\b|\bspun[- ]?off\b|\bspin(?:ning)?\s+(?:\p{L}+\s+){0,3}?off\b/iu, 'separation separate'],
];

/** The alias words of `LINE_ITEM_ALIASES` the question calls for, kept when `uses(term)` says the document has the word. */
export function lineItemAliases(question: string, uses: (term: string) => boolean): string[] {
  const out: string[] = [];
  const terms = new Set<string>();
  for (const [re, alias] of LINE_ITEM_ALIASES) {
    if (!re.test(question)) continue;
    for (const w of alias.split(' ')) {
      const t = indexTerm(w);
      if (!t || terms.has(t) || !uses(t)) continue;
      terms.add(t);
      out.push(w);
    }
  }
  return out;
}

export interface RelevanceDeps {
  /** The frozen query encoder. */
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  /** Node texts → unit vectors, in order (normally the embedding cache in front of the encoder). */
  embedTexts: EmbedTexts;
  adapter?: NodeAdapter;
}

/**
 * Region vectors of a document view per vector source (`embedTexts`): the same for every
 * question, so a later round or question over the same document reads them from here.
 */
const regionVectorCache = new WeakMap<DocumentView, WeakMap<EmbedTexts, Promise<Map<string, Float32Array>>>>();

function regionVectorsOf(view: DocumentView, embedTexts: EmbedTexts): Promise<Map<string, Float32Array>> {
  let bySource = regionVectorCache.get(view);
  if (!bySource) regionVectorCache.set(view, (bySource = new WeakMap()));
  let vectors = bySource.get(embedTexts);
  if (!vectors) {
    // Not tied to one question's signal: a newer question may be waiting on the same computation.
    vectors = nodeVectorsOf(view.itemRoots(), embedTexts);
    bySource.set(embedTexts, vectors);
    // A failed computation is not kept: the next question starts it again.
    vectors.catch(() => bySource.delete(embedTexts));
  }
  return vectors;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

export class RelevanceModel {
  private readonly vectors = new Map<string, Float32Array>();
  /** The view's element term sets and idf (built once per document, shared by every question). */
  private readonly lexicon: ViewLexicon;
  /** Term sets of nodes outside the lexicon (pages), built when asked for. */
  private readonly otherTerms = new Map<string, Set<string>>();
  /** Distinct content terms of the question, with the first word that produced each (line-item aliases the document uses included). */
  readonly questionTerms: Array<{ term: string; word: string; idf: number }>;
  /** The question with the line-item aliases the document uses appended: what grounding's BM25 and the first search look for. */
  readonly lexicalQuery: string;
  private readonly questionIdf: number;
  private bestElement = 0;

  private constructor(
    readonly view: DocumentView,
    readonly question: string,
    readonly queryVector: Float32Array,
  ) {
    this.lexicon = view.lexicon();
    const n = Math.max(1, view.elements.length);
    const seen = new Set<string>();
    const terms: Array<{ term: string; word: string; idf: number }> = [];
    const aliases = lineItemAliases(question, (t) => (this.lexicon.df.get(t) ?? 0) > 0);
    this.lexicalQuery = aliases.length > 0 ? `${question} ${aliases.join(' ')}` : question;
    for (const w of words(this.lexicalQuery)) {
      const t = indexTerm(w);
      if (!t || seen.has(t)) continue;
      seen.add(t);
      // A question term the document never uses still counts (it cannot be covered), at the highest idf.
      terms.push({ term: t, word: w, idf: this.lexicon.idf.get(t) ?? Math.log(1 + n) });
    }
    this.questionTerms = terms;
    this.questionIdf = terms.reduce((s, t) => s + t.idf, 0);
  }

  /** Embeds the question and every page and element of the view (one batch). */
  static async create(question: string, view: DocumentView, deps: RelevanceDeps, signal?: AbortSignal): Promise<RelevanceModel> {
    const query = await deps.embedQuery(question, signal);
    const model = new RelevanceModel(view, question, query);
    throwIfCancelled(signal);
    const regionVectors = await regionVectorsOf(view, deps.embedTexts);
    throwIfCancelled(signal);
    const vectorOf = (n: GraphNode): Float32Array | undefined => {
      if (n.text.trim().length === 0) return undefined;
      if (n.regionId) return regionVectors.get(n.regionId);
      // A virtual page (formats without pages) stands for all its elements: their normalised sum.
      const members = view.elementsOn(n.id).flatMap((e) => (e.regionId && regionVectors.has(e.regionId) ? [regionVectors.get(e.regionId)!] : []));
      if (members.length === 0) return undefined;
      const sum = new Float32Array(members[0]!.length);
      for (const v of members) for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + v[i]!;
      return l2NormalizeInPlace(sum);
    };
    for (const n of [...view.pages, ...view.elements]) {
      const v = vectorOf(n);
      if (v) model.vectors.set(n.id, deps.adapter ? l2NormalizeInPlace(Float32Array.from(deps.adapter(v))) : v);
    }
    for (const e of view.elements) model.bestElement = Math.max(model.bestElement, model.relevance(e.id));
    return model;
  }

  /** Cosine with the question; undefined for a node without text. */
  dense(id: string): number | undefined {
    const v = this.vectors.get(id);
    return v ? dot(v, this.queryVector) : undefined;
  }

  /** Cosine of a node's vector with another query's vector (SEARCH_EVIDENCE). */
  cosineWith(query: Float32Array, id: string): number | undefined {
    const v = this.vectors.get(id);
    return v ? dot(v, query) : undefined;
  }

  private terms(id: string): Set<string> {
    let set = this.lexicon.termSets.get(id) ?? this.otherTerms.get(id);
    if (!set) {
      set = new Set(contentTerms(this.view.node(id)?.text ?? ''));
      this.otherTerms.set(id, set);
    }
    return set;
  }

  /** Idf-weighted share of the question's content terms found in the node's text — a table's with its lead-in's (0–1). */
  lexical(id: string): number {
    if (this.questionIdf === 0) return 0;
    const set = this.terms(id);
    const lead = this.view.leadIn(id);
    const leadSet = lead ? this.terms(lead.id) : undefined;
    let hit = 0;
    for (const t of this.questionTerms) if (set.has(t.term) || leadSet?.has(t.term)) hit += t.idf;
    return hit / this.questionIdf;
  }

  /** ½·max(0, dense) + ½·lexical. */
  relevance(id: string): number {
    return 0.5 * Math.max(0, this.dense(id) ?? 0) + 0.5 * this.lexical(id);
  }

  /** Relevance relative to the best element of the document (0–1; 0 when nothing is relevant). */
  relative(id: string): number {
    return this.bestElement > 0 ? Math.min(1, this.relevance(id) / this.bestElement) : 0;
  }

  /** Cosine between two nodes (0 when either has no vector). */
  similarity(a: string, b: string): number {
    const va = this.vectors.get(a);
    const vb = this.vectors.get(b);
    return va && vb ? dot(va, vb) : 0;
  }

  /** 1 − the highest similarity to any of `others` (1 when there are none). */
  novelty(id: string, others: Iterable<string>): number {
    let best = 0;
    for (const o of others) if (o !== id) best = Math.max(best, this.similarity(id, o));
    return Math.max(0, 1 - best);
  }

  /** Question terms the given nodes' texts cover, idf-weighted, and the words of those they do not. */
  coverage(ids: Iterable<string>): { share: number; uncovered: string[] } {
    const covered = new Set<string>();
    for (const id of ids) for (const t of this.terms(id)) covered.add(t);
    let hit = 0;
    const uncovered: string[] = [];
    for (const t of this.questionTerms) {
      if (covered.has(t.term)) hit += t.idf;
      else uncovered.push(t.word);
    }
    return { share: this.questionIdf > 0 ? hit / this.questionIdf : 1, uncovered };
  }
}
