/**
 * What the inspector derives from one trace before painting: every node of every scored tree
 * indexed by id with its item, round, parent and status (kept, inside a kept region, dropped,
 * inside a dropped subtree, descended into, never visited), plus the lookups the views share.
 * Pure data — no DOM — so the work is done once per trace, not per view.
 */
import type { Anchor, Modality } from '../src/contracts/region';
import type { AskTrace, TraceController, TraceNode, TraceRetrievedItem } from '../src/contracts/trace';

export type NodeStatus = 'kept' | 'inside-kept' | 'dropped' | 'inside-dropped' | 'descended' | 'not-visited';

/** Statuses the filter groups: what reached the reader, what did not, and the rest. */
export type StatusGroup = 'kept' | 'dropped' | 'other';

export function statusGroup(s: NodeStatus): StatusGroup {
  if (s === 'kept' || s === 'inside-kept') return 'kept';
  if (s === 'dropped' || s === 'inside-dropped') return 'dropped';
  return 'other';
}

export interface NodeRef {
  node: TraceNode;
  parent: TraceNode | undefined;
  entry: ItemEntry;
  depth: number;
  status: NodeStatus;
  /** Pre-order position within its item. */
  order: number;
}

/** An item whose tree the trace holds (the round that compressed it). */
export interface ItemEntry {
  item: TraceRetrievedItem;
  tree: TraceNode;
  round: number;
  /** A key unique within the trace: round and item id. */
  key: string;
  keptCount: number;
  droppedCount: number;
  nodeCount: number;
}

export interface ControllerEntry {
  item: TraceRetrievedItem;
  round: number;
  controller: TraceController;
}

export class TraceModel {
  readonly items: ItemEntry[] = [];
  readonly nodes = new Map<string, NodeRef>();
  readonly controllers: ControllerEntry[] = [];
  readonly modalities = new Set<Modality>();
  nodeCount = 0;

  constructor(readonly trace: AskTrace) {
    for (const round of trace.rounds) {
      for (const item of round.retrieved) {
        if (item.controller) this.controllers.push({ item, round: round.round, controller: item.controller });
        if (item.repeated || !item.tree) continue;
        const entry: ItemEntry = { item, tree: item.tree, round: round.round, key: `${round.round}:${item.itemId}`, keptCount: 0, droppedCount: 0, nodeCount: 0 };
        this.items.push(entry);
        this.index(entry);
      }
    }
  }

  private index(entry: ItemEntry): void {
    const kept = new Set(entry.item.keptNodeIds);
    // Iterative pre-order walk: trees can be deep and large.
    const stack: Array<{ node: TraceNode; parent: TraceNode | undefined; depth: number; inherited: NodeStatus | undefined }> = [
      { node: entry.tree, parent: undefined, depth: 0, inherited: undefined },
    ];
    let order = 0;
    while (stack.length > 0) {
      const { node, parent, depth, inherited } = stack.pop()!;
      let status: NodeStatus;
      if (kept.has(node.id)) status = 'kept';
      else if (inherited) status = inherited;
      else if (node.decision === 'dropped-sibling' || node.decision === 'dropped-by-baseline' || node.decision === 'dropped-by-controller') status = 'dropped';
      // The root of an item the rank gate dropped that keeps a glimpse: dropped, its glimpse kept apart.
      else if (depth === 0 && node.decision === 'descend' && node.rule === 'glimpse') status = 'dropped';
      // A region of an item the rank gate dropped (its glimpse kept apart): inside a dropped region.
      else if (node.decision === 'not-visited' && node.rule === 'ancestor-dropped') status = 'inside-dropped';
      else if (node.decision === 'descend') status = 'descended';
      else status = 'not-visited';
      if (status === 'kept') entry.keptCount++;
      if (status === 'dropped') entry.droppedCount++;
      entry.nodeCount++;
      this.modalities.add(node.modality);
      // Node ids are unique within an index; a later round cannot re-compress an item, but keep
      // the first entry if a trace ever repeats one.
      if (!this.nodes.has(node.id)) this.nodes.set(node.id, { node, parent, entry, depth, status, order: order++ });
      const childInherited: NodeStatus | undefined =
        status === 'kept' || status === 'inside-kept' ? 'inside-kept' : status === 'dropped' || status === 'inside-dropped' ? 'inside-dropped' : undefined;
      for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i]!, parent: node, depth: depth + 1, inherited: childInherited });
    }
    this.nodeCount += entry.nodeCount;
  }

  private headers: Map<string, Set<string>> | undefined;

  /**
   * Running headers and footers of each PDF file of the trace: the first or last line of a page
   * that recurs on at least three of the file's pages (or on every page of a two-page part), e.g.
   * "Table of Contents" or "FORM 10-K" on every page of a filing. Labels and titles skip them.
   */
  runningHeaders(file: string): ReadonlySet<string> {
    if (!this.headers) {
      const counts = new Map<string, Map<string, Set<number>>>();
      const pagesOf = new Map<string, Set<number>>();
      for (const e of this.items) {
        const stack: TraceNode[] = [e.tree];
        while (stack.length > 0) {
          const n = stack.pop()!;
          if (n.kind === 'page' && n.anchor.page !== undefined) {
            const page = n.anchor.page;
            const pages = pagesOf.get(e.item.file) ?? new Set<number>();
            pages.add(page);
            pagesOf.set(e.item.file, pages);
            for (const edge of [firstLeaf(n), lastLeaf(n)]) {
              const key = normalise(nodeText(edge));
              if (key.length === 0 || key.length > 120) continue;
              const byText = counts.get(e.item.file) ?? new Map<string, Set<number>>();
              byText.set(key, (byText.get(key) ?? new Set<number>()).add(page));
              counts.set(e.item.file, byText);
            }
            continue;
          }
          stack.push(...n.children);
        }
      }
      this.headers = new Map();
      for (const [f, byText] of counts) {
        const pages = pagesOf.get(f)!.size;
        const found = new Set<string>();
        for (const [text, on] of byText) if (on.size >= 3 || (pages === 2 && on.size === 2)) found.add(text);
        this.headers.set(f, found);
      }
    }
    return this.headers.get(file) ?? new Set();
  }

  /** A node's label text: its text, without a running header it starts with. */
  labelText(ref: NodeRef): string {
    const text = nodeText(ref.node);
    if (ref.node.anchor.page === undefined) return text;
    const headers = this.runningHeaders(ref.entry.item.file);
    if (headers.size === 0) return text;
    let out = text.trimStart();
    for (let again = true; again; ) {
      again = false;
      for (const h of headers) {
        if (normalise(out.slice(0, h.length + 8)).startsWith(h) && out.length > h.length) {
          out = out.replace(/\s+/g, ' ').trimStart().slice(h.length).trimStart();
          again = true;
        }
      }
    }
    return out || text;
  }

  /**
   * An item's title as a person tells items apart: a run of a long PDF's pages, titled by ingest
   * "<document title> (p. 40–42)" like every other run of the file, gets the first heading inside
   * it that is not a running header: "<document title> — <heading> (p. 40–42)".
   */
  displayTitle(entry: ItemEntry): string {
    const m = /^(.*) \((pp?\. [\d–-]+)\)$/.exec(entry.item.title);
    if (!m || entry.tree.anchor.page === undefined && !entry.tree.children.some((c) => c.kind === 'page')) return entry.item.title;
    const headers = this.runningHeaders(entry.item.file);
    const stack: TraceNode[] = [entry.tree];
    let heading: string | undefined;
    while (stack.length > 0 && heading === undefined) {
      const n = stack.shift()!;
      if (n.kind === 'heading') {
        const t = nodeText(n).replace(/\s+/g, ' ').trim();
        if (t && !headers.has(normalise(t)) && normalise(t) !== normalise(m[1]!)) heading = t;
        continue;
      }
      stack.unshift(...n.children);
    }
    return heading ? `${m[1]} — ${heading} (${m[2]})` : entry.item.title;
  }

  ref(nodeId: string): NodeRef | undefined {
    return this.nodes.get(nodeId);
  }

  /** Ancestors of a node, root first. */
  ancestors(nodeId: string): TraceNode[] {
    const out: TraceNode[] = [];
    let ref = this.nodes.get(nodeId);
    while (ref?.parent) {
      out.unshift(ref.parent);
      ref = this.nodes.get(ref.parent.id);
    }
    return out;
  }

  itemEntry(key: string): ItemEntry | undefined {
    return this.items.find((e) => e.key === key);
  }

  /** The entry that compressed an item (its first tree in the trace). */
  entryOfItem(itemId: string): ItemEntry | undefined {
    return this.items.find((e) => e.item.itemId === itemId);
  }

  /**
   * The elements of the MAGE controller's run over a region's file that stand for the region: the
   * graph nodes of the region and of the regions inside it, else of the nearest region holding it,
   * else its pages. `run` indexes `controllers`.
   */
  controllerNodesFor(nodeId: string): { run: number; nodes: string[] } | undefined {
    const ref = this.nodes.get(nodeId);
    if (!ref) return undefined;
    const run = this.controllers.findIndex((c) => c.controller.file === ref.entry.item.file);
    if (run < 0) return undefined;
    const graph = this.controllers[run]!.controller.subgraph.nodes;
    const byRegion = new Map<string, string[]>();
    for (const g of graph) if (g.regionId) byRegion.set(g.regionId, [...(byRegion.get(g.regionId) ?? []), g.id]);
    const found: string[] = [];
    const stack: TraceNode[] = [ref.node];
    while (stack.length > 0) {
      const x = stack.pop()!;
      found.push(...(byRegion.get(x.id) ?? []));
      stack.push(...x.children);
    }
    if (found.length === 0) {
      for (const a of this.ancestors(nodeId).reverse()) {
        const hit = byRegion.get(a.id);
        if (hit) {
          found.push(...hit);
          break;
        }
      }
    }
    if (found.length === 0) {
      const a = ref.node.anchor;
      if (a.page !== undefined) for (const g of graph) if (g.type === 'page' && g.page >= a.page && g.page <= (a.pageEnd ?? a.page)) found.push(g.id);
    }
    return found.length > 0 ? { run, nodes: [...new Set(found)] } : undefined;
  }

  /** Files whose regions carry PDF pages, in the order the trace found them. */
  pdfFiles(): string[] {
    const files: string[] = [];
    for (const e of this.items) if (e.tree.anchor.page !== undefined && !files.includes(e.item.file)) files.push(e.item.file);
    return files;
  }

  /**
   * The boxes to outline on one PDF page: the kept and dropped regions that lie on it. A region
   * spanning pages (or a whole page, whose box is the page itself) is shown by its parts on this
   * page — the topmost single-page blocks under it — each marked with the region's status.
   */
  pageRegions(file: string, page: number): Array<{ ref: NodeRef; shown: 'kept' | 'dropped' }> {
    const out: Array<{ ref: NodeRef; shown: 'kept' | 'dropped' }> = [];
    const visit = (node: TraceNode, shown: 'kept' | 'dropped' | undefined) => {
      const a = node.anchor;
      if (a.page === undefined || page < a.page || page > (a.pageEnd ?? a.page)) return;
      const ref = this.nodes.get(node.id);
      if (!ref) return;
      const mark = shown ?? (ref.status === 'kept' ? 'kept' : ref.status === 'dropped' ? 'dropped' : undefined);
      const single = a.pageEnd === undefined || a.pageEnd === a.page;
      if (mark && single && a.bbox && node.kind !== 'page' && node.kind !== 'document') {
        out.push({ ref, shown: mark });
        return;
      }
      for (const c of node.children) visit(c, mark);
    };
    for (const e of this.items) if (e.item.file === file) visit(e.tree, undefined);
    return out;
  }

  /** Every node of a PDF file with a box on `page` (0-based). */
  nodesOnPage(file: string, page: number): NodeRef[] {
    const out: NodeRef[] = [];
    for (const ref of this.nodes.values()) {
      const a = ref.node.anchor;
      if (ref.entry.item.file !== file || a.page === undefined || !a.bbox) continue;
      if (a.page === page && (a.pageEnd === undefined || a.pageEnd === page)) out.push(ref);
    }
    return out;
  }

  /** Pages (0-based) that hold kept regions of a file, ascending. */
  pagesWithKept(file: string): number[] {
    const pages = new Set<number>();
    for (const ref of this.nodes.values()) {
      const a = ref.node.anchor;
      if (ref.entry.item.file !== file || ref.status !== 'kept' || a.page === undefined) continue;
      for (let p = a.page; p <= (a.pageEnd ?? a.page); p++) pages.add(p);
    }
    return [...pages].sort((a, b) => a - b);
  }
}

function normalise(t: string): string {
  return t.replace(/\s+/g, ' ').trim().toLowerCase();
}

function firstLeaf(n: TraceNode): TraceNode {
  while (n.children.length > 0) n = n.children[0]!;
  return n;
}

function lastLeaf(n: TraceNode): TraceNode {
  while (n.children.length > 0) n = n.children[n.children.length - 1]!;
  return n;
}

/** The text a node shows: leaves their text, inner nodes their preview (table rows with their header). */
export function nodeText(n: TraceNode): string {
  return n.text ?? n.preview ?? '';
}

/** Most characters of a region's whole text the details pane shows (a whole PDF's root holds them all). */
export const WHOLE_TEXT_MAX = 50_000;

/**
 * A region's whole text: a leaf's own text, an inner region's leaves in document order (its
 * `preview` is only their first 160 characters), table rows with their header; cut at `max`.
 */
export function wholeText(n: TraceNode, max = WHOLE_TEXT_MAX): { text: string; cut: number } {
  if (n.children.length === 0) {
    const t = n.header ? `${n.header}\n${nodeText(n)}` : nodeText(n);
    return t.length > max ? { text: t.slice(0, max), cut: t.length - max } : { text: t, cut: 0 };
  }
  const parts: string[] = [];
  let length = 0;
  let cut = 0;
  const stack: TraceNode[] = [n];
  let lastHeader: string | undefined;
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (x.children.length > 0) {
      for (let i = x.children.length - 1; i >= 0; i--) stack.push(x.children[i]!);
      continue;
    }
    let t = nodeText(x);
    // A table's header once, before its first row.
    if (x.header && x.header !== lastHeader) t = `${x.header}\n${t}`;
    lastHeader = x.header;
    if (length >= max) {
      cut += t.length;
      continue;
    }
    const room = max - length;
    if (t.length > room) {
      cut += t.length - room;
      t = t.slice(0, room);
    }
    parts.push(t);
    length += t.length + 1;
  }
  return { text: parts.join('\n'), cut };
}

/** A key naming a region by where it lies, so regions of two traces can be matched even when ids differ (another B). */
export function regionKey(n: TraceNode): string {
  return anchorKey(n.anchor) ?? `id:${n.id}`;
}

export function anchorKey(a: Anchor): string | undefined {
  if (a.charStart !== undefined && a.charEnd !== undefined) return `${a.file}@${a.charStart}-${a.charEnd}`;
  if (a.page !== undefined && a.bbox) return `${a.file}#p${a.page}${a.pageEnd !== undefined ? `-${a.pageEnd}` : ''}[${a.bbox.map((v) => v.toFixed(1)).join(',')}]`;
  if (a.row !== undefined) return `${a.file}#row${a.row}`;
  if (a.timeStart !== undefined) return `${a.file}@${a.timeStart}-${a.timeEnd ?? ''}s`;
  return undefined;
}

/**
 * An item's kept tokens as a person reads them. The item that carries the MAGE controller's run
 * holds regions from the whole PDF, so it has no share of its own tokens (`whole` absent);
 * otherwise the kept regions are the item's own, and tokenised one by one they can count a few
 * more than the joined item text: never show more than the item has.
 */
export function keptTokens(it: { tokens: { kept: number; whole: number }; controller?: unknown }): { kept: number; whole?: number } {
  if (it.controller) return { kept: it.tokens.kept };
  return { kept: Math.min(it.tokens.kept, it.tokens.whole), whole: it.tokens.whole };
}

/** A controller node id for a person: a page id `<file>#p<index>` (0-based) reads as "page <index + 1>". */
export function readableId(id: string): string {
  const page = /#p(\d+)$/.exec(id);
  return page ? `page ${Number(page[1]) + 1}` : id;
}

/** A short place name: file:line, file p.N, file row N or file @Ns. */
export function placeLabel(a: Anchor): string {
  if (a.page !== undefined) return `${a.file} p.${a.page + 1}${a.pageEnd !== undefined && a.pageEnd !== a.page ? `–${a.pageEnd + 1}` : ''}`;
  if (a.timeStart !== undefined) return `${a.file} @${Math.round(a.timeStart)}s`;
  if (a.startLine !== undefined) return `${a.file}:${a.startLine}`;
  if (a.row !== undefined) return `${a.file} row ${a.row + 1}`;
  return a.file;
}
