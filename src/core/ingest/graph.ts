/**
 * The document graph (MAGE-RAG): page nodes and element nodes (heading, paragraph, table,
 * figure, list, code) built over the same regions as the item trees, plus section nodes, with
 * typed edges:
 *   contains    page → element, section → element (its own elements, not its subsections')
 *   subsection  section → child section (the section hierarchy)
 *   next / prev reading order between consecutive elements (across pages and items)
 *   near        elements on the same PDF page whose boxes are within `nearDistance` points
 *   semantic    each element → its top cosine neighbours in the document (needs `embed`), by the
 *               elements' region vectors (src/core/encode/nodeVectors.ts)
 * `near` and `semantic` are symmetric relations stored in both directions.
 *
 * Ids: an element's graph id is its region id (so the controller opens exactly that region);
 * pages are `${file}#p${index}`; sections `${file}#s${k}`. Formats without pages get one virtual
 * page (`virtual: true`) so that "an element's page is active" means the same thing everywhere.
 */

import type { Anchor, Item, RegionNode } from '../../contracts/region';
import type { DocumentGraph, GraphEdge, GraphNode, GraphNodeType } from '../../contracts/graph';
import type { EmbedFn, PageInfo, ParseStages } from './parsedDocument';
import { headingPath } from './sections';
import { spanAnchors } from './hierarchy';
import { nodeVectorsOf } from '../encode/nodeVectors';

export interface GraphInput {
  file: string;
  title: string;
  items: Item[];
  pages?: PageInfo[];
}

export interface GraphOptions {
  embed?: EmbedFn;
  /** Semantic neighbours per element (default 3). */
  semanticNeighbours?: number;
  /** Minimum cosine for a semantic edge (default 0.3). */
  semanticMinSimilarity?: number;
  /** Elements compared for semantic edges: beyond this many, each element only looks at this many around it (default 2000). */
  semanticWindow?: number;
  /** Max gap in PDF points between two boxes for a `near` edge (default 12). */
  nearDistance?: number;
  signal?: AbortSignal;
  /** Texts (leaves, tables) encoded of all, as the semantic edges' vectors are computed. */
  onProgress?: (done: number, total: number) => void;
  /** Where the time went: `graph` (structure), `semantic` (neighbours) and `encodeWait` are added here. */
  stages?: ParseStages;
}

const elementTypes: Partial<Record<RegionNode['kind'], GraphNodeType>> = {
  heading: 'heading',
  paragraph: 'paragraph',
  sentence: 'paragraph',
  listItem: 'paragraph',
  record: 'paragraph',
  row: 'paragraph',
  segment: 'paragraph',
  table: 'table',
  image: 'figure',
  list: 'list',
  code: 'code',
};

const summaryChars = 200;

function clip(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= summaryChars ? t : `${t.slice(0, summaryChars - 1)}…`;
}

function firstLeaf(node: RegionNode): RegionNode {
  let n = node;
  while (n.children.length > 0) n = n.children[0]!;
  return n;
}

function summaryOf(node: RegionNode, type: GraphNodeType): string {
  switch (type) {
    case 'heading':
      return clip(node.context ? headingPath([node.context, node.text]) : node.text);
    case 'table': {
      const head = node.header ?? firstLeaf(node).header;
      return clip(`Table: ${head ?? firstLeaf(node).text}`);
    }
    case 'figure':
      return clip(`Figure: ${node.text}`);
    case 'code':
      return clip(node.text.split(/\r?\n/, 1)[0] ?? '');
    default:
      return clip(firstLeaf(node).text);
  }
}

/** Elements in reading order: the outermost regions of an element kind (nothing inside an element is another element). */
function collectElements(node: RegionNode, item: Item, out: Array<{ region: RegionNode; item: Item; type: GraphNodeType }>): void {
  const type = elementTypes[node.kind];
  if (type !== undefined) {
    out.push({ region: node, item, type });
    return;
  }
  for (const c of node.children) collectElements(c, item, out);
}

function collectPages(node: RegionNode, out: Map<number, RegionNode>): void {
  if (node.kind === 'page' && node.anchor.page !== undefined) {
    out.set(node.anchor.page, node);
    return;
  }
  for (const c of node.children) collectPages(c, out);
}

function boxGap(a: [number, number, number, number], b: [number, number, number, number]): number {
  const dx = Math.max(0, Math.max(a[0], b[0]) - Math.min(a[2], b[2]));
  const dy = Math.max(0, Math.max(a[1], b[1]) - Math.min(a[3], b[3]));
  return Math.hypot(dx, dy);
}

/** Σ a[k]·b[k] in index order. */
function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

/**
 * The cosine of vectors i and j (dot / √(‖a‖²·‖b‖²), 0 for a zero vector) for the semantic
 * neighbours, without repeated work: each vector's squared norm is summed once instead of once
 * per pair (before, every pair summed both norms again), and when every element sees every
 * other (at most `window` of them) each pair's dot product is computed once for both directions
 * (a triangle of n·(n−1)/2 numbers, 16 MB at the window's 2,000). The sums run in the order the
 * per-pair loop summed in and the product of norms is commutative, so every value is identical
 * to the per-pair loop's (test/unit/ingest/graph.test.ts; the index digest test holds the whole
 * graph). On a 138-page 10-K (1,482 elements) the per-pair loop was 4.6 s, more than pdf.js.
 */
export function pairwiseCosine(vectors: readonly Float32Array[], window: number): (i: number, j: number) => number {
  const n = vectors.length;
  const norms = vectors.map((v) => dot(v, v));
  const of = (i: number, j: number, d: number) => {
    const na = norms[i]!;
    const nb = norms[j]!;
    return na === 0 || nb === 0 ? 0 : d / Math.sqrt(na * nb);
  };
  if (n > window) return (i, j) => of(i, j, dot(vectors[i]!, vectors[j]!));
  // Row i's pairs (i, j > i) start at rowStart(i) in the triangle.
  const rowStart = (i: number) => i * n - (i * (i + 1)) / 2;
  const triangle = new Float64Array((n * (n - 1)) / 2);
  for (let i = 0; i < n; i++) {
    const a = vectors[i]!;
    const at = rowStart(i) - i - 1;
    let j = i + 1;
    // Four pairs at a time: four independent sums (each still in index order, so each equals
    // dot(a, b)) keep the processor busy where one sum waits on its previous addition.
    for (; j + 3 < n; j += 4) {
      const b0 = vectors[j]!;
      const b1 = vectors[j + 1]!;
      const b2 = vectors[j + 2]!;
      const b3 = vectors[j + 3]!;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let k = 0; k < a.length; k++) {
        const x = a[k]!;
        s0 += x * b0[k]!;
        s1 += x * b1[k]!;
        s2 += x * b2[k]!;
        s3 += x * b3[k]!;
      }
      triangle[at + j] = of(i, j, s0);
      triangle[at + j + 1] = of(i, j + 1, s1);
      triangle[at + j + 2] = of(i, j + 2, s2);
      triangle[at + j + 3] = of(i, j + 3, s3);
    }
    for (; j < n; j++) triangle[at + j] = of(i, j, dot(a, vectors[j]!));
  }
  return (i, j) => (i < j ? triangle[rowStart(i) + j - i - 1]! : triangle[rowStart(j) + i - j - 1]!);
}

export async function buildDocumentGraph(input: GraphInput, options: GraphOptions = {}): Promise<DocumentGraph> {
  const stages = options.stages;
  let mark = performance.now();
  const lap = (stage: 'graph' | 'semantic' | 'encodeWait'): void => {
    const now = performance.now();
    if (stages) stages[stage] = (stages[stage] ?? 0) + now - mark;
    mark = now;
  };
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const file = input.file;

  const elements: Array<{ region: RegionNode; item: Item; type: GraphNodeType }> = [];
  const pageRegions = new Map<number, RegionNode>();
  for (const item of input.items) {
    collectElements(item.root, item, elements);
    collectPages(item.root, pageRegions);
  }

  // Pages.
  const pageIds = new Map<number, string>();
  const paged = input.pages !== undefined;
  if (paged) {
    for (const p of input.pages!) {
      const region = pageRegions.get(p.index);
      const id = `${file}#p${p.index}`;
      pageIds.set(p.index, id);
      const firstHeading = elements.find((e) => e.type === 'heading' && e.region.anchor.page === p.index);
      const node: GraphNode = {
        id,
        type: 'page',
        text: region?.text ?? '',
        summary: clip(`Page ${p.index + 1}${firstHeading ? `: ${firstHeading.region.text}` : region ? `: ${firstLeaf(region).text}` : ''}`),
        anchor: { file, page: p.index, bbox: p.box },
        bbox: p.box,
        page: p.index,
      };
      if (region) {
        node.regionId = region.id;
        node.itemId = itemIdOf(region.id);
      }
      nodes.push(node);
    }
  } else {
    const id = `${file}#p0`;
    pageIds.set(0, id);
    nodes.push({
      id,
      type: 'page',
      text: elements.map((e) => e.region.text).join('\n\n'),
      summary: clip(input.title),
      anchor: spanAnchors(file, elements.map((e) => e.region.anchor)),
      page: 0,
      virtual: true,
    });
  }

  // Elements, containment by page, reading order.
  const elementNodes: GraphNode[] = [];
  for (const e of elements) {
    const page = paged ? (e.region.anchor.page ?? 0) : 0;
    const node: GraphNode = {
      id: e.region.id,
      type: e.type,
      text: e.region.text,
      summary: summaryOf(e.region, e.type),
      anchor: e.region.anchor,
      page,
      regionId: e.region.id,
      itemId: e.item.id,
    };
    if (e.region.anchor.bbox) node.bbox = e.region.anchor.bbox;
    if (e.region.level !== undefined) node.level = e.region.level;
    nodes.push(node);
    elementNodes.push(node);
    const pageId = pageIds.get(page);
    if (pageId) edges.push({ type: 'contains', from: pageId, to: node.id });
    // An element crossing pages (a table cut by a page break is two elements; this is for safety) belongs to each.
    for (let p = page + 1; paged && p <= (e.region.anchor.pageEnd ?? page); p++) {
      const other = pageIds.get(p);
      if (other) edges.push({ type: 'contains', from: other, to: node.id });
    }
  }
  for (let i = 0; i + 1 < elementNodes.length; i++) {
    edges.push({ type: 'next', from: elementNodes[i]!.id, to: elementNodes[i + 1]!.id });
    edges.push({ type: 'prev', from: elementNodes[i + 1]!.id, to: elementNodes[i]!.id });
  }

  // Sections from the heading sequence (across pages and items).
  const stack: Array<{ node: GraphNode; level: number; members: Anchor[] }> = [];
  const sections: Array<{ node: GraphNode; members: Anchor[] }> = [];
  let sectionCount = 0;
  for (const el of elementNodes) {
    if (el.type === 'heading') {
      const level = el.level ?? 1;
      while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop();
      const parent = stack[stack.length - 1];
      const path = [...stack.map((s) => s.node.text), el.text];
      const section: GraphNode = {
        id: `${file}#s${sectionCount++}`,
        type: 'section',
        text: el.text,
        summary: clip(headingPath(path)),
        anchor: el.anchor,
        page: el.page,
        level,
      };
      nodes.push(section);
      const entry = { node: section, level, members: [el.anchor] };
      sections.push(entry);
      if (parent) {
        edges.push({ type: 'subsection', from: parent.node.id, to: section.id });
        // A subsection's extent is part of its parents' extents.
        for (const s of stack) s.members.push(el.anchor);
      }
      stack.push(entry);
      edges.push({ type: 'contains', from: section.id, to: el.id });
      continue;
    }
    const top = stack[stack.length - 1];
    if (top) {
      edges.push({ type: 'contains', from: top.node.id, to: el.id });
      for (const s of stack) s.members.push(el.anchor);
    }
  }
  for (const s of sections) {
    s.node.anchor = spanAnchors(file, s.members);
    if (s.node.anchor.bbox && s.node.anchor.pageEnd === undefined) s.node.bbox = s.node.anchor.bbox;
  }

  // Layout proximity on PDF pages.
  if (paged) {
    const near = options.nearDistance ?? 12;
    const byPage = new Map<number, GraphNode[]>();
    for (const el of elementNodes) {
      if (!el.bbox || el.anchor.pageEnd !== undefined) continue;
      const list = byPage.get(el.page) ?? [];
      list.push(el);
      byPage.set(el.page, list);
    }
    for (const list of byPage.values()) {
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length; j++) {
          const d = boxGap(list[i]!.bbox!, list[j]!.bbox!);
          if (d > near) continue;
          const weight = Math.round(d * 100) / 100;
          edges.push({ type: 'near', from: list[i]!.id, to: list[j]!.id, weight });
          edges.push({ type: 'near', from: list[j]!.id, to: list[i]!.id, weight });
        }
      }
    }
  }

  lap('graph');
  // Semantic neighbours.
  if (options.embed && elementNodes.length > 1) {
    // Each element's region vector (nodeVectors: leaves and tables encoded, the rest derived), the
    // same vector the indexer stores and the controller scores; the texts land in the embedding cache.
    const embed = options.embed;
    const regionVectors = await nodeVectorsOf(
      input.items.map((it) => it.root),
      async (texts) => {
        lap('semantic');
        const got = await embed(texts);
        lap('encodeWait');
        if (got.length !== texts.length) throw new Error(`embed returned ${got.length} vectors for ${texts.length} texts`);
        return got;
      },
      options.signal,
      options.onProgress,
    );
    if (options.signal?.aborted) return { file, nodes, edges };
    for (const e of semanticEdges(elementNodes, regionVectors, options)) edges.push(e);
    lap('semantic');
  }
  return { file, nodes, edges };
}

/** A graph's element nodes (headings, paragraphs, tables, lists, figures, code) in reading order, as `buildDocumentGraph` made them. */
export function graphElements(graph: DocumentGraph): GraphNode[] {
  return graph.nodes.filter((n) => n.type !== 'page' && n.type !== 'section');
}

/**
 * Each element's semantic edges to its top-k cosine neighbours (at least `semanticMinSimilarity`,
 * within `semanticWindow` elements), in both directions, from the elements' region vectors
 * (nodeVectors.ts). `buildDocumentGraph` appends them last when it has an encoder; the indexer
 * appends them itself when it encodes the texts for the parse (core/index/indexer.ts), so either
 * way the graph is the same.
 */
export function semanticEdges(elementNodes: readonly GraphNode[], regionVectors: ReadonlyMap<string, Float32Array>, options: Pick<GraphOptions, 'semanticNeighbours' | 'semanticMinSimilarity' | 'semanticWindow'> = {}): GraphEdge[] {
  const edges: GraphEdge[] = [];
  if (elementNodes.length < 2) return edges;
  const k = options.semanticNeighbours ?? 3;
  const minSim = options.semanticMinSimilarity ?? 0.3;
  const window = options.semanticWindow ?? 2000;
  const vectors = elementNodes.map((n) => regionVectors.get(n.regionId!)!);
  const similarity = pairwiseCosine(vectors, window);
  const seen = new Set<string>();
  for (let i = 0; i < elementNodes.length; i++) {
    const lo = elementNodes.length <= window ? 0 : Math.max(0, i - Math.floor(window / 2));
    const hi = elementNodes.length <= window ? elementNodes.length : Math.min(elementNodes.length, lo + window);
    const scored: Array<[number, number]> = [];
    for (let j = lo; j < hi; j++) {
      if (j === i) continue;
      const s = similarity(i, j);
      if (s >= minSim) scored.push([j, s]);
    }
    scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    for (const [j, s] of scored.slice(0, k)) {
      const weight = Math.round(s * 10000) / 10000;
      for (const [a, b] of [
        [i, j],
        [j, i],
      ] as const) {
        const key = `${a}>${b}`;
        if (seen.has(key)) continue;
        seen.add(key);
        edges.push({ type: 'semantic', from: elementNodes[a]!.id, to: elementNodes[b]!.id, weight });
      }
    }
  }
  return edges;
}

function itemIdOf(regionId: string): string {
  const slash = regionId.lastIndexOf('/');
  return slash < 0 ? regionId : regionId.slice(0, slash);
}
