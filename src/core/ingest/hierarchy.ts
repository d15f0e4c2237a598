/**
 * The hierarchy builder: turns a parser's draft tree into items whose region trees CANOPY walks.
 *
 * Rules (docs/ingestion.md explains them for users):
 * - Inner-node text is the children's texts joined — ' ' between sentences, '\n' between rows,
 *   list items, records and transcript segments, '\n\n' between blocks — so every inner node
 *   reads as exactly the leaves under it, in order, and nothing else (no markup, no timing
 *   lines). Its anchor spans its first to its last leaf (char range and lines; PDF: the union
 *   box, or page..pageEnd when it crosses pages; transcripts: first start to last end).
 * - Items: a file of at most `itemMaxWords` words is one item (words, or characters / 12 where
 *   that is more: sentences.ts `sizeUnits`, so records and rows without spaces count by their
 *   length). A longer file is cut: PDFs into
 *   runs of whole pages (page groups); other formats at their top level, where each table and
 *   each oversized section becomes its own item (sections recursively), consecutive small blocks
 *   are packed into one item up to the budget, and an oversized table / list / paragraph /
 *   transcript is cut into runs of its rows / items / sentences / segments (the header travels).
 * - Grouping: wherever a node has more than B children, a balanced B-ary tree of `group` nodes
 *   over contiguous runs of them is inserted, so every level offers a coarser and a finer cut.
 * - Ids: item `${file}#${k}` (k-th item of the file), node `${itemId}/${path}` where path is the
 *   child-index path from the root, root = "0" (e.g. `a.md#1/0.2.0`). Same bytes + same options
 *   give the same ids.
 */

import type { Anchor, Item, RegionKind, RegionNode } from '../../contracts/region';
import type { DraftDocument, DraftNode } from './parsedDocument';
import { headingPath } from './sections';
import { sizeUnits } from './sentences';
import { pushAll } from '../arrays';

export interface HierarchyOptions {
  branchingFactor: number;
  itemMaxWords: number;
}

const lineJoined: ReadonlySet<RegionKind> = new Set<RegionKind>(['row', 'listItem', 'record', 'segment']);

/** The kind that decides how a node's children are joined: a group joins like what it groups. */
function unitKind(node: DraftNode): RegionKind {
  let n = node;
  while (n.kind === 'group' && n.children.length > 0) n = n.children[0]!;
  return n.kind;
}

function separatorBetween(a: DraftNode, b: DraftNode): string {
  const ka = unitKind(a);
  const kb = unitKind(b);
  if (ka === 'sentence' && kb === 'sentence') return ' ';
  if (lineJoined.has(ka) && lineJoined.has(kb)) return '\n';
  return '\n\n';
}

/** The joined text of children, per the separator rule. */
export function joinChildrenText(children: DraftNode[]): string {
  let out = '';
  for (let i = 0; i < children.length; i++) {
    const c = children[i]!;
    if (c.text.length === 0) continue;
    if (out.length > 0) out += separatorBetween(children[i - 1]!, c);
    out += c.text;
  }
  return out;
}

type Box = [number, number, number, number];

function unionBox(a: Box | undefined, b: Box | undefined): Box | undefined {
  if (!a) return b;
  if (!b) return a;
  return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
}

/** The anchor spanning children's anchors (first to last for text; union for boxes and times). */
export function spanAnchors(file: string, anchors: Anchor[]): Anchor {
  const out: Anchor = { file };
  let firstPage: number | undefined;
  let lastPage: number | undefined;
  let box: Box | undefined;
  for (const a of anchors) {
    if (a.charStart !== undefined && (out.charStart === undefined || a.charStart < out.charStart)) {
      out.charStart = a.charStart;
      out.startLine = a.startLine;
      out.startColumn = a.startColumn;
    }
    if (a.charEnd !== undefined && (out.charEnd === undefined || a.charEnd > out.charEnd)) {
      out.charEnd = a.charEnd;
      out.endLine = a.endLine;
      out.endColumn = a.endColumn;
    }
    if (a.page !== undefined) {
      const end = a.pageEnd ?? a.page;
      if (firstPage === undefined || a.page < firstPage) firstPage = a.page;
      if (lastPage === undefined || end > lastPage) lastPage = end;
      box = unionBox(box, a.bbox);
    }
    if (a.timeStart !== undefined && (out.timeStart === undefined || a.timeStart < out.timeStart)) out.timeStart = a.timeStart;
    if (a.timeEnd !== undefined && (out.timeEnd === undefined || a.timeEnd > out.timeEnd)) out.timeEnd = a.timeEnd;
  }
  if (firstPage !== undefined) {
    out.page = firstPage;
    if (lastPage !== undefined && lastPage !== firstPage) out.pageEnd = lastPage;
    if (box) out.bbox = box;
  }
  return out;
}

/** Fills inner nodes' text and anchors bottom-up and hands context down. Mutates and returns `node`. */
export function finalizeDraft(node: DraftNode, inheritedContext?: string): DraftNode {
  if (node.context === undefined && inheritedContext !== undefined) node.context = inheritedContext;
  for (const c of node.children) finalizeDraft(c, node.context);
  if (node.children.length > 0) {
    node.text = joinChildrenText(node.children);
    // Fields the parser set on an inner node (a PDF block's box, a page's box) win over the span.
    node.anchor = { ...spanAnchors(node.anchor.file, node.children.map((c) => c.anchor)), ...definedFields(node.anchor) };
  }
  return node;
}

function definedFields(a: Anchor): Partial<Anchor> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v;
  return out as Partial<Anchor>;
}

/** Size (sentences.ts `sizeUnits`: words, or characters / 12 for text with few spaces) with memo (the splitter asks repeatedly). */
const wordMemo = new WeakMap<DraftNode, number>();
function words(node: DraftNode): number {
  let w = wordMemo.get(node);
  if (w === undefined) {
    w = sizeUnits(node.text);
    wordMemo.set(node, w);
  }
  return w;
}

interface ItemDraft {
  root: DraftNode;
  title: string;
}

/** A container of `parent`'s kind over a contiguous run of its children (one child: that child). */
function container(parent: DraftNode, run: DraftNode[]): DraftNode {
  if (run.length === 1) return run[0]!;
  const node: DraftNode = {
    kind: parent.kind,
    modality: parent.modality,
    text: '',
    anchor: { file: parent.anchor.file },
    children: run,
  };
  if (parent.context !== undefined) node.context = parent.context;
  if (parent.header !== undefined) node.header = parent.header;
  if (parent.caption !== undefined) node.caption = parent.caption;
  if (parent.units !== undefined) node.units = parent.units;
  if (parent.subheader !== undefined) node.subheader = parent.subheader;
  if (parent.level !== undefined) node.level = parent.level;
  if (parent.title !== undefined) node.title = parent.title;
  return finalizeDraft(node);
}

function describeRun(run: DraftNode[]): string {
  const first = run[0]!.anchor;
  const last = run[run.length - 1]!.anchor;
  if (first.row !== undefined && last.row !== undefined) return `rows ${first.row + 1}–${last.row + 1}`;
  if (first.timeStart !== undefined && last.timeEnd !== undefined) return `${formatTime(first.timeStart)}–${formatTime(last.timeEnd)}`;
  if (first.startLine !== undefined && last.endLine !== undefined) return `lines ${first.startLine}–${last.endLine}`;
  return `part`;
}

function formatTime(s: number): string {
  const m = Math.floor(s / 60);
  const sec = Math.floor(s % 60);
  return `${m}:${String(sec).padStart(2, '0')}`;
}

function titleFor(docTitle: string, path: string[], node: DraftNode | undefined, suffix?: string): string {
  // A document titled by its first heading does not repeat it.
  const parts = [docTitle, ...(path[0] === docTitle ? path.slice(1) : path)];
  if (node?.kind === 'table') parts.push(node.title ?? 'table');
  let t = headingPath(parts.filter((p) => p.length > 0));
  if (suffix) t += ` (${suffix})`;
  return t;
}

/**
 * Cuts an over-budget node into item roots (see the module comment for the rule). `lead` holds
 * headings of an enclosing section that would otherwise form an item on their own: they open the
 * first item cut from this node instead.
 */
function splitNode(node: DraftNode, max: number, docTitle: string, path: string[], lead: DraftNode[] = []): ItemDraft[] {
  const out: ItemDraft[] = [];
  const titleOf = (root: DraftNode, suffix?: string): string =>
    root.kind === 'section' ? titleFor(docTitle, [...path, root.title ?? ''], root, suffix) : titleFor(docTitle, path, root, suffix);
  let run: DraftNode[] = [...lead];
  let runWords = lead.reduce((n, c) => n + words(c), 0);
  const flush = (): void => {
    if (run.length === 0) return;
    const title = run.length === 1 ? titleOf(run[0]!) : titleFor(docTitle, path, node.kind === 'table' ? node : undefined, describeRun(run));
    out.push({ root: container(node, run), title });
    run = [];
    runWords = 0;
  };
  const onlyHeadings = (): boolean => run.length > 0 && run.every((c) => c.kind === 'heading');
  for (const child of node.children) {
    const w = words(child);
    if (child.kind === 'table' || w > max) {
      if (onlyHeadings() && w + runWords <= max) {
        // A heading and the table right under it stay together.
        run.push(child);
        runWords += w;
        flush();
        continue;
      }
      if (w > max && child.children.length > 0) {
        const carried = onlyHeadings() ? run : [];
        if (carried.length === 0) flush();
        run = [];
        runWords = 0;
        pushAll(out, splitNode(child, max, docTitle, child.kind === 'section' ? [...path, child.title ?? ''] : path, carried));
        continue;
      }
      if (onlyHeadings() && child.children.length === 0) {
        // An unsplittable oversized leaf still keeps its heading.
        run.push(child);
        runWords += w;
        flush();
        continue;
      }
      flush();
      out.push({ root: child, title: titleOf(child) });
      continue;
    }
    if (runWords + w > max) flush();
    run.push(child);
    runWords += w;
  }
  flush();
  return out;
}

/** Packs whole pages into runs of at most `max` words (at least one page per run). */
function splitPages(root: DraftNode, max: number, docTitle: string): ItemDraft[] {
  const out: ItemDraft[] = [];
  let run: DraftNode[] = [];
  let runWords = 0;
  const flush = (): void => {
    if (run.length === 0) return;
    const first = (run[0]!.anchor.page ?? 0) + 1;
    const last = (run[run.length - 1]!.anchor.page ?? 0) + 1;
    out.push({ root: container(root, run), title: `${docTitle} (p. ${first === last ? first : `${first}–${last}`})` });
    run = [];
    runWords = 0;
  };
  for (const page of root.children) {
    const w = words(page);
    if (run.length > 0 && runWords + w > max) flush();
    run.push(page);
    runWords += w;
  }
  flush();
  return out;
}

/** Inserts balanced B-ary `group` nodes wherever a node has more than B children (bottom-up). */
export function groupBalanced(node: DraftNode, b: number): DraftNode {
  for (const c of node.children) groupBalanced(c, b);
  if (node.children.length > b) node.children = buildGroups(node, node.children, b);
  return node;
}

function buildGroups(parent: DraftNode, children: DraftNode[], b: number): DraftNode[] {
  if (children.length <= b) return children;
  const n = children.length;
  const base = Math.floor(n / b);
  const extra = n % b;
  const out: DraftNode[] = [];
  let at = 0;
  for (let k = 0; k < b; k++) {
    const size = base + (k < extra ? 1 : 0);
    const run = children.slice(at, at + size);
    at += size;
    if (run.length === 1) {
      out.push(run[0]!);
      continue;
    }
    const group: DraftNode = {
      kind: 'group',
      modality: parent.modality,
      text: '',
      anchor: { file: parent.anchor.file },
      children: buildGroups(parent, run, b),
    };
    if (parent.context !== undefined) group.context = parent.context;
    if (parent.header !== undefined) group.header = parent.header;
    if (parent.caption !== undefined) group.caption = parent.caption;
    if (parent.units !== undefined) group.units = parent.units;
    if (parent.subheader !== undefined) group.subheader = parent.subheader;
    out.push(finalizeDraft(group));
  }
  return out;
}

/** Numbers a draft tree into RegionNodes with ids `${itemId}/${path}`. */
function toRegion(node: DraftNode, itemId: string, path: string): RegionNode {
  const region: RegionNode = {
    id: `${itemId}/${path}`,
    kind: node.kind,
    modality: node.modality,
    text: node.text,
    anchor: definedFields(node.anchor) as Anchor,
    children: node.children.map((c, i) => toRegion(c, itemId, `${path}.${i}`)),
  };
  if (node.context !== undefined) region.context = node.context;
  if (node.header !== undefined) region.header = node.header;
  if (node.cells !== undefined) region.cells = node.cells;
  if (node.caption !== undefined) region.caption = node.caption;
  if (node.groups !== undefined) region.groups = node.groups;
  if (node.units !== undefined) region.units = node.units;
  if (node.subheader !== undefined) region.subheader = node.subheader;
  if (node.level !== undefined) region.level = node.level;
  if (node.ref !== undefined) region.ref = node.ref;
  return region;
}

/**
 * Draft document → items: finalise texts and anchors, cut into items, insert B-ary groups,
 * number the nodes. A document with no text yields no items.
 */
export function buildItems(doc: DraftDocument, options: HierarchyOptions): Item[] {
  return buildItemsCapped(doc, options).items;
}

/** What a node cap left out: the first `keptItems` of `totalItems` items were kept, `keptNodes` regions. */
export interface NodeCapCut {
  cap: number;
  keptItems: number;
  totalItems: number;
  keptNodes: number;
}

function countDraft(n: DraftNode): number {
  let c = 1;
  for (const k of n.children) c += countDraft(k);
  return c;
}

/**
 * `buildItems` with a cap on the regions of the whole file: items are kept in document order
 * while their regions (groups included) fit within `maxNodes`; the first item that would cross
 * the cap and every item after it are left out (never grouped or numbered), and `cut` says so.
 */
export function buildItemsCapped(doc: DraftDocument, options: HierarchyOptions & { maxNodes?: number }): { items: Item[]; cut?: NodeCapCut } {
  const b = Math.max(2, Math.min(4, Math.round(options.branchingFactor)));
  const max = Math.max(1, options.itemMaxWords);
  const cap = options.maxNodes ?? Number.POSITIVE_INFINITY;
  const root = finalizeDraft(doc.root);
  if (root.children.length === 0 && root.text.length === 0) return { items: [] };
  let drafts: ItemDraft[];
  if (words(root) <= max) drafts = [{ root, title: doc.title }];
  else if (doc.format === 'pdf') drafts = splitPages(root, max, doc.title);
  else drafts = splitNode(root, max, doc.title, []);
  const items: Item[] = [];
  let nodes = 0;
  for (let k = 0; k < drafts.length; k++) {
    const d = drafts[k]!;
    groupBalanced(d.root, b);
    const count = countDraft(d.root);
    if (nodes + count > cap) return { items, cut: { cap, keptItems: k, totalItems: drafts.length, keptNodes: nodes } };
    nodes += count;
    const id = `${doc.file}#${k}`;
    items.push({ id, file: doc.file, title: d.title, modality: d.root.modality, root: toRegion(d.root, id, '0') });
  }
  return { items };
}
