/**
 * The controller's read-only view of one parsed document: its graph nodes by id, the page of
 * every element, the elements of every page in reading order, the relations between elements,
 * and the regions (RegionNode) that the elements stand for, so that an opened element can be
 * projected and cited by its exact anchors.
 *
 * Controller nodes are pages and elements. Section nodes of the graph are not controller nodes:
 * they only give the `section` and `subsection` relations between headings and the elements of
 * their sections.
 */
import type { DocumentGraph, GraphNode } from '../../contracts/graph';
import { buildDocumentGraph } from '../ingest/graph';
import type { ParsedDocument } from '../ingest/parsedDocument';
import { CanopyError, ErrorCodes } from '../errors';
import type { Item, RegionNode } from '../../contracts/region';
import type { RelationType } from './trace';
import type { Bm25Index } from '../index/bm25';
import { attachedElementIndex, buildElementIndex } from '../index/elementIndex';

export interface Relation {
  type: RelationType;
  from: string;
  to: string;
  weight?: number;
}

/** Elements a heading's `section` relation reaches: the first ones of its section, in reading order. */
const sectionFanout = 12;

const followedEdgeTypes = new Set(['next', 'prev', 'near', 'semantic']);

/**
 * Views of the parsed documents the caller still holds: the index keeps recently read documents
 * in a small LRU, so every round and every later question over the same document reuses its
 * view and the question-independent structures built on it (term sets, BM25 indexes), instead of
 * tokenising a 150-page filing again for each question.
 */
const views = new WeakMap<object, DocumentView>();

/** Question-independent lexical structures of one view, built on first use. */
export interface ViewLexicon {
  /** Distinct content terms of every element with text. */
  termSets: Map<string, Set<string>>;
  /** Elements whose term set holds each term. */
  df: Map<string, number>;
  /** ln(1 + N / (1 + df)) over the N elements, per term. */
  idf: Map<string, number>;
}

export class DocumentView {
  readonly file: string;
  readonly title: string;
  readonly graph: DocumentGraph;
  /** Pages in page order. */
  readonly pages: GraphNode[];
  /** Elements in reading order. */
  readonly elements: GraphNode[];
  private readonly byId = new Map<string, GraphNode>();
  private readonly pageByIndex = new Map<number, GraphNode>();
  private readonly pageElements = new Map<string, GraphNode[]>();
  private readonly relations = new Map<string, Relation[]>();
  private readonly regions = new Map<string, RegionNode>();
  private readonly items = new Map<string, Item>();
  private readonly order = new Map<string, number>();
  private lexiconCache: ViewLexicon | undefined;
  private elementIndex: Bm25Index | undefined;

  private constructor(doc: { file: string; title: string; items: Item[]; graph: DocumentGraph; elementIndex?: Bm25Index }) {
    this.elementIndex = doc.elementIndex;
    this.file = doc.file;
    this.title = doc.title;
    this.graph = doc.graph;
    for (const item of doc.items) {
      this.items.set(item.id, item);
      const walk = (n: RegionNode): void => {
        this.regions.set(n.id, n);
        n.children.forEach(walk);
      };
      walk(item.root);
    }
    const pages: GraphNode[] = [];
    const elements: GraphNode[] = [];
    for (const n of doc.graph.nodes) {
      this.byId.set(n.id, n);
      if (n.type === 'page') pages.push(n);
      else if (n.type !== 'section') elements.push(n);
    }
    pages.sort((a, b) => a.page - b.page);
    for (const p of pages) {
      this.pageByIndex.set(p.page, p);
      this.pageElements.set(p.id, []);
    }
    this.pages = pages;
    this.elements = elements;
    elements.forEach((e, i) => {
      this.order.set(e.id, i);
      const page = this.pageByIndex.get(e.page);
      if (page) this.pageElements.get(page.id)!.push(e);
    });

    const add = (r: Relation) => {
      const list = this.relations.get(r.from) ?? [];
      list.push(r);
      this.relations.set(r.from, list);
    };
    const sectionHeading = new Map<string, string>();
    const sectionMembers = new Map<string, string[]>();
    for (const e of doc.graph.edges) {
      if (followedEdgeTypes.has(e.type)) {
        if (this.isElement(e.from) && this.isElement(e.to)) add({ type: e.type as RelationType, from: e.from, to: e.to, ...(e.weight === undefined ? {} : { weight: e.weight }) });
      } else if (e.type === 'contains' && this.byId.get(e.from)?.type === 'section') {
        // The graph adds a section's heading as its first contained element.
        if (!sectionHeading.has(e.from) && this.byId.get(e.to)?.type === 'heading') sectionHeading.set(e.from, e.to);
        else {
          const m = sectionMembers.get(e.from) ?? [];
          m.push(e.to);
          sectionMembers.set(e.from, m);
        }
      }
    }
    for (const [section, heading] of sectionHeading) {
      for (const member of (sectionMembers.get(section) ?? []).slice(0, sectionFanout)) {
        add({ type: 'section', from: heading, to: member });
        add({ type: 'section', from: member, to: heading });
      }
    }
    for (const e of doc.graph.edges) {
      if (e.type !== 'subsection') continue;
      const a = sectionHeading.get(e.from);
      const b = sectionHeading.get(e.to);
      if (a && b) {
        add({ type: 'subsection', from: a, to: b });
        add({ type: 'subsection', from: b, to: a });
      }
    }
  }

  /**
   * A view over a parsed document. Builds the document graph (without semantic edges) when the
   * document was parsed with `graph: false`.
   */
  static async of(doc: Pick<ParsedDocument, 'file' | 'title' | 'items' | 'pages' | 'graph'>): Promise<DocumentView> {
    const cached = views.get(doc);
    if (cached) return cached;
    const graph = doc.graph ?? (await buildDocumentGraph({ file: doc.file, title: doc.title, items: doc.items, ...(doc.pages ? { pages: doc.pages } : {}) }));
    if (!graph.nodes.some((n) => n.type === 'page')) {
      throw new CanopyError(ErrorCodes.badInput, `${doc.file}: the document graph has no page node`, { file: doc.file });
    }
    // The element index the indexer stored with the document (index/elementIndex.ts), when it was read with one.
    const stored = doc.graph ? attachedElementIndex(doc) : undefined;
    const view = new DocumentView({ file: doc.file, title: doc.title, items: doc.items, graph, ...(stored ? { elementIndex: stored } : {}) });
    views.set(doc, view);
    return view;
  }

  /**
   * The elements' term sets, document frequencies and idf (the same for every question), read
   * from the element BM25's postings: its text terms are exactly each element's distinct content
   * terms (text/terms.ts), so the document is tokenised once for both.
   */
  lexicon(): ViewLexicon {
    if (!this.lexiconCache) {
      const termSets = new Map<string, Set<string>>();
      for (const e of this.elements) termSets.set(e.id, new Set());
      const index = this.elementBm25();
      const ids = index.ids();
      const df = new Map<string, number>();
      index.forEachTextTerm((term, docs) => {
        df.set(term, docs.length);
        for (const d of docs) termSets.get(ids[d]!)!.add(term);
      });
      const n = Math.max(1, this.elements.length);
      const idf = new Map<string, number>();
      for (const [t, d] of df) idf.set(t, Math.log(1 + n / (1 + d)));
      this.lexiconCache = { termSets, df, idf };
    }
    return this.lexiconCache;
  }

  /** BM25 over the texts of the elements that have text: the one stored with the document, else built on first use. */
  elementBm25(): Bm25Index {
    this.elementIndex ??= buildElementIndex(this.graph);
    return this.elementIndex;
  }

  node(id: string): GraphNode | undefined {
    return this.byId.get(id);
  }

  isPage(id: string): boolean {
    return this.byId.get(id)?.type === 'page';
  }

  isElement(id: string): boolean {
    const t = this.byId.get(id)?.type;
    return t !== undefined && t !== 'page' && t !== 'section';
  }

  page(index: number): GraphNode | undefined {
    return this.pageByIndex.get(index);
  }

  /** The page node an element belongs to (its first page when it crosses pages). */
  pageOf(elementId: string): GraphNode | undefined {
    const n = this.byId.get(elementId);
    return n ? this.pageByIndex.get(n.page) : undefined;
  }

  /** The page's elements in reading order. */
  elementsOn(pageId: string): readonly GraphNode[] {
    return this.pageElements.get(pageId) ?? [];
  }

  /** Relations from an element to other elements, in graph order. */
  relationsFrom(id: string): readonly Relation[] {
    return this.relations.get(id) ?? [];
  }

  /** Position in reading order (elements), for stable sorting. */
  readingOrder(id: string): number {
    return this.order.get(id) ?? Number.MAX_SAFE_INTEGER;
  }

  /**
   * A table's lead-in: the paragraph just before it in reading order, on its page or the page
   * before ("The following table presents revenue by geographic region: …"). It says what the
   * table holds when the table's own cells (figures, short labels) do not. Undefined for other
   * elements and for a table that follows anything but a paragraph.
   */
  leadIn(tableId: string): GraphNode | undefined {
    const table = this.byId.get(tableId);
    if (table?.type !== 'table') return undefined;
    const prev = this.elements[this.readingOrder(tableId) - 1];
    if (!prev || prev.type !== 'paragraph' || prev.text.trim().length === 0) return undefined;
    return prev.page === table.page || prev.page === table.page - 1 ? prev : undefined;
  }

  /** The table a paragraph is the lead-in of (`leadIn`), if any. */
  tableAfter(paragraphId: string): GraphNode | undefined {
    const next = this.elements[this.readingOrder(paragraphId) + 1];
    return next && this.leadIn(next.id)?.id === paragraphId ? next : undefined;
  }

  region(id: string): RegionNode | undefined {
    return this.regions.get(id);
  }

  item(id: string): Item | undefined {
    return this.items.get(id);
  }

  /** The items' region trees, in document order (their nodes' vectors give every page's and element's). */
  itemRoots(): RegionNode[] {
    return [...this.items.values()].map((it) => it.root);
  }

  /** A short human label: "p. 48 table: Table: (Millions) 2018 …". */
  label(id: string, max = 90): string {
    const n = this.byId.get(id);
    if (!n) return id;
    const s = n.summary.length > max ? `${n.summary.slice(0, max - 1)}…` : n.summary;
    return n.type === 'page' ? `page ${n.page + 1}` : `p. ${n.page + 1} ${n.type}: ${s}`;
  }
}
