/**
 * The evidence tab: every compressed item's scored hierarchy as a <vscode-tree> — each node's
 * score, its parent's score, its decision and the rule that fired, kept/dropped styling and
 * tokens — with filters (kept / dropped / other, modality), search and expand-to-kept, and a
 * details pane for the selected node.
 *
 * Big traces stay fast because the tree is built lazily: a branch's children become tree items
 * only when it is opened (or when a filter, a search or expand-to-kept needs them), so the first
 * paint creates a few dozen elements whatever the trace's size.
 */
import type { TraceNode } from '../../src/contracts/trace';
import { type InspectorContext, type TreeFilters } from '../context';
import { type Decision, decisionOf, siblingNote } from '../decision';
import { button, ce, clip, el, fmtDelta, fmtInt, fmtScore } from '../dom';
import { type ItemEntry, type NodeRef, type NodeStatus, keptTokens, nodeText, placeLabel, statusGroup, wholeText } from '../model';
import { plainLabel } from '../text';
import { renderJudgment } from './judgment';

/** Most matching nodes a filter or search shows at once. */
export const MAX_FILTER_MATCHES = 200;
/** Below this many nodes, every item opens to its kept regions on the first paint. */
const EXPAND_ALL_BELOW = 600;
/** Items shown at first; the rest come with "Show all items" (or when a node in them is revealed). */
export const FIRST_ITEMS = 30;

export const statusLabels: Record<NodeStatus, string> = {
  kept: 'kept',
  'inside-kept': 'inside kept',
  dropped: 'dropped',
  'inside-dropped': 'inside dropped',
  descended: 'refined',
  'not-visited': 'not visited',
};

/** The pill of a decision code: its text, and a class for its look (glimpses, gates and controller decisions differ from keeps). */
export function decisionPill(d: Decision, extra = ''): HTMLElement {
  const mark = d.code === 'controller' || d.code === 'gate' ? (d.outcome === 'kept' ? ' ✓' : d.outcome === 'dropped' ? ' ✗' : '') : '';
  return el('span', { class: `canopy-code code-${d.code.replace(' ', '-')} outcome-${d.outcome}${extra}`, title: `${d.status} (${d.stage})` }, `${d.code}${mark}`);
}

type Row = HTMLElement & { open: boolean; selected: boolean; active: boolean; branch: boolean };

export class EvidenceTreeView {
  readonly element: HTMLElement;
  private readonly tree: HTMLElement;
  private readonly detail: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly more: HTMLButtonElement;
  private rootsShown = 0;
  private readonly rows = new Map<string, Row>();
  private readonly populated = new WeakSet<HTMLElement>();
  private filtered = false;
  private selectedId: string | undefined;
  private lastInput: 'pointer' | 'keyboard' = 'pointer';
  private searchTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly observer: MutationObserver;

  constructor(
    private readonly ctx: InspectorContext,
    readonly filters: TreeFilters,
  ) {
    this.tree = ce('vscode-tree', { 'aria-label': 'Evidence hierarchy', 'indent-guides': 'onHover', class: 'canopy-tree' });
    this.detail = el('section', { class: 'canopy-detail', 'aria-label': 'Region details', 'aria-live': 'polite' });
    this.summary = el('p', { class: 'canopy-tree-summary', role: 'status' });
    this.more = button('', () => this.showAllRoots(), { class: 'canopy-link canopy-more-items' });
    this.more.hidden = true;
    this.element = el(
      'div',
      { class: 'canopy-evidence' },
      this.toolbar(),
      this.summary,
      el(
        'div',
        { class: 'canopy-evidence-body' },
        el(
          'div',
          { class: 'canopy-tree-pane' },
          el(
            'div',
            { class: 'canopy-tree-head', 'aria-hidden': 'true' },
            el('span', {}, 'Region'),
            el('span', { class: 'canopy-cols' }, el('span', { class: 'canopy-col-score' }, 'Score'), el('span', { class: 'canopy-col-delta' }, 'Δ parent'), el('span', { class: 'canopy-col-code' }, 'Decision')),
          ),
          this.tree,
          this.more,
        ),
        this.detail,
      ),
    );
    this.observer = new MutationObserver((mutations) => {
      if (this.filtered) return;
      for (const m of mutations) {
        const row = m.target as Row;
        if (row.open && !this.populated.has(row)) this.populate(row);
      }
    });
    this.observer.observe(this.tree, { subtree: true, attributes: true, attributeFilter: ['open'] });
    this.tree.addEventListener('pointerdown', () => (this.lastInput = 'pointer'));
    this.tree.addEventListener('keydown', () => (this.lastInput = 'keyboard'));
    this.tree.addEventListener('vsc-tree-select', (ev) => {
      // 2.5.1 dispatches the selected items as the detail itself (its typings say {selectedItems}).
      const detail = (ev as unknown as CustomEvent<unknown>).detail;
      const selected = (Array.isArray(detail) ? detail : ((detail as { selectedItems?: HTMLElement[] } | null)?.selectedItems ?? [])) as HTMLElement[];
      const id = selected[0]?.dataset.nodeId;
      if (!id) return;
      this.selectedId = id;
      this.showDetail(id);
      this.keepRowVisible(id);
      this.ctx.saveUi();
      const ref = this.ctx.model.ref(id);
      if (ref && ref.node.anchor.page === undefined && ref.node.anchor.startLine !== undefined) {
        this.ctx.openAnchor(ref.node.anchor, { preserveFocus: this.lastInput === 'keyboard' });
      }
    });
    this.renderTree();
    this.showDetail(undefined);
  }

  get selected(): string | undefined {
    return this.selectedId;
  }

  dispose(): void {
    this.observer.disconnect();
    clearTimeout(this.searchTimer);
  }

  // ---- toolbar ----

  private toolbar(): HTMLElement {
    const search = ce('vscode-textfield', { placeholder: 'Search regions (text, kind, file)', 'aria-label': 'Search regions', class: 'canopy-search' }) as HTMLElement & { value: string };
    search.setAttribute('value', this.filters.search);
    search.addEventListener('input', () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => {
        this.filters.search = search.value;
        this.applyFilters();
      }, 150);
    });
    const box = (key: 'kept' | 'dropped' | 'other', label: string) => {
      const c = ce('vscode-checkbox', { label, checked: this.filters[key], class: `canopy-filter-${key}`, 'data-filter': key }) as HTMLElement & { checked: boolean };
      c.addEventListener('change', () => {
        this.filters[key] = c.checked;
        this.applyFilters();
      });
      return c;
    };
    const modality = ce('vscode-single-select', { 'aria-label': 'Modality', label: 'Modality', class: 'canopy-modality' }) as HTMLElement & { value: string };
    modality.append(ce('vscode-option', { value: '' }, 'All modalities'));
    for (const m of [...this.ctx.model.modalities].sort()) modality.append(ce('vscode-option', { value: m, selected: this.filters.modality === m }, m));
    modality.addEventListener('change', () => {
      this.filters.modality = modality.value;
      this.applyFilters();
    });
    const expand = ce('vscode-button', { secondary: true, class: 'canopy-expand-kept' }, 'Expand to kept');
    expand.addEventListener('click', () => this.expandToKept(true));
    const collapse = ce('vscode-button', { secondary: true, class: 'canopy-collapse' }, 'Collapse all');
    collapse.addEventListener('click', () => this.collapseAll());
    return el(
      'div',
      { class: 'canopy-toolbar', role: 'toolbar', 'aria-label': 'Evidence filters' },
      search,
      box('kept', 'Kept'),
      box('dropped', 'Dropped'),
      box('other', 'Other'),
      modality,
      expand,
      collapse,
    );
  }

  private isFiltering(): boolean {
    const f = this.filters;
    return !f.kept || !f.dropped || !f.other || f.modality !== '' || f.search.trim() !== '';
  }

  private matches(ref: NodeRef): boolean {
    const f = this.filters;
    const group = statusGroup(ref.status);
    if ((group === 'kept' && !f.kept) || (group === 'dropped' && !f.dropped) || (group === 'other' && !f.other)) return false;
    if (f.modality && ref.node.modality !== f.modality) return false;
    const q = f.search.trim().toLowerCase();
    if (q) {
      const n = ref.node;
      const hay = `${n.kind} ${nodeText(n)} ${n.header ?? ''} ${ref.entry.item.file} ${ref.entry.item.title}`.toLowerCase();
      if (!hay.includes(q)) return false;
    }
    return true;
  }

  applyFilters(): void {
    this.renderTree();
    this.ctx.saveUi();
  }

  // ---- tree ----

  private renderTree(): void {
    this.rows.clear();
    this.tree.replaceChildren();
    const model = this.ctx.model;
    if (model.items.length === 0) {
      this.summary.textContent = 'No item was compressed in this trace, so there is no hierarchy to show.';
      this.filtered = false;
      return;
    }
    this.filtered = this.isFiltering();
    this.more.hidden = true;
    this.rootsShown = 0;
    if (!this.filtered) {
      this.appendRoots(FIRST_ITEMS);
      this.summary.textContent = `${fmtInt(model.nodeCount)} regions in ${model.items.length} item(s) · ${this.count('kept')} kept · ${this.count('dropped')} dropped`;
      this.expandToKept(model.nodeCount <= EXPAND_ALL_BELOW);
      if (this.selectedId && model.ref(this.selectedId)) this.reveal(this.selectedId, false);
      return;
    }
    // Filtered: the matching nodes (capped) and their ancestors, opened.
    const visible = new Set<string>();
    const matched: string[] = [];
    let total = 0;
    for (const ref of model.nodes.values()) {
      if (!this.matches(ref)) continue;
      total++;
      if (matched.length >= MAX_FILTER_MATCHES) continue;
      matched.push(ref.node.id);
      visible.add(ref.node.id);
      for (const a of model.ancestors(ref.node.id)) visible.add(a.id);
    }
    const matchSet = new Set(matched);
    for (const entry of model.items) {
      if (!visible.has(entry.tree.id)) continue;
      this.tree.append(this.filteredRow(entry.tree, entry, visible, matchSet));
    }
    this.summary.textContent =
      total === 0
        ? 'No region matches these filters.'
        : total > matched.length
          ? `Showing the first ${matched.length} of ${fmtInt(total)} matching regions — narrow the search to see the rest.`
          : `${fmtInt(total)} matching region(s).`;
    if (this.selectedId && visible.has(this.selectedId)) this.markSelected(this.selectedId, false);
  }

  /** Appends the next item roots (up to `n` in all). */
  private appendRoots(n: number): void {
    const items = this.ctx.model.items;
    const frag = document.createDocumentFragment();
    for (; this.rootsShown < Math.min(n, items.length); this.rootsShown++) {
      const entry = items[this.rootsShown]!;
      frag.append(this.row(entry.tree, entry));
    }
    this.tree.append(frag);
    const left = items.length - this.rootsShown;
    this.more.hidden = left === 0;
    this.more.textContent = `Show all ${items.length} items (${left} more)`;
  }

  private showAllRoots(): void {
    if (this.filtered) return;
    this.appendRoots(Number.MAX_SAFE_INTEGER);
  }

  private count(group: 'kept' | 'dropped'): number {
    let n = 0;
    for (const e of this.ctx.model.items) n += group === 'kept' ? e.keptCount : e.droppedCount;
    return n;
  }

  private filteredRow(node: TraceNode, entry: ItemEntry, visible: Set<string>, matched: Set<string>): Row {
    const row = this.row(node, entry);
    this.populated.add(row);
    if (matched.has(node.id)) row.classList.add('canopy-match');
    const kids = node.children.filter((c) => visible.has(c.id));
    for (const c of kids) row.append(this.filteredRow(c, entry, visible, matched));
    row.branch = kids.length > 0;
    if (kids.length > 0) row.open = true;
    return row;
  }

  /**
   * One tree item for a node (children are added when it opens): the label (which truncates
   * first), its tokens (which go next), and the fixed columns that never shrink — score, the
   * difference from its parent, the decision code.
   */
  private row(node: TraceNode, entry: ItemEntry): Row {
    const model = this.ctx.model;
    const ref = model.ref(node.id)!;
    const d = decisionOf(model, ref);
    const isRoot = node === entry.tree;
    const row = ce('vscode-tree-item', { 'data-node-id': node.id, class: `canopy-node status-${ref.status} outcome-${d.outcome}` }) as Row;
    const label = el('span', { class: 'canopy-node-label' }, el('span', { class: `canopy-dot outcome-${d.outcome}`, 'aria-hidden': 'true' }));
    if (isRoot) {
      label.append(el('span', { class: 'canopy-round-tag' }, `R${entry.round}`), el('span', { class: 'canopy-item-title' }, plainLabel(model.displayTitle(entry))));
    } else {
      label.append(el('span', { class: 'canopy-kind' }, node.kind), el('span', { class: 'canopy-node-text' }, clip(plainLabel(model.labelText(ref)), 120)));
    }
    let desc = `${fmtInt(node.tokens)} tok`;
    if (isRoot) {
      const k = keptTokens(entry.item);
      desc = `${entry.item.file} · kept ${k.whole === undefined ? `${fmtInt(k.kept)} tok from the whole PDF` : `${fmtInt(k.kept)}/${fmtInt(k.whole)} tok`}`;
    }
    const delta = node.score !== undefined && node.parentScore !== undefined ? fmtDelta(node.score - node.parentScore) : '—';
    row.append(
      label,
      el('span', { slot: 'description', class: 'canopy-node-desc' }, desc),
      el(
        'span',
        { slot: 'decoration', class: 'canopy-cols' },
        el('span', { class: 'canopy-col-score', title: 'Score against the round’s query' }, fmtScore(node.score)),
        el('span', { class: 'canopy-col-delta', title: node.parentScore !== undefined ? `Score − parent score (${fmtScore(node.parentScore)})` : 'No parent score' }, delta),
        decisionPill(d, ' canopy-col-code'),
      ),
    );
    row.title = `${d.status} — ${d.stage}: ${d.why}${d.overridden ? `. Also: ${d.overridden}` : ''}`;
    if (node.children.length > 0) row.branch = true;
    this.rows.set(node.id, row);
    return row;
  }

  private populate(row: Row): void {
    if (this.populated.has(row)) return;
    this.populated.add(row);
    const ref = this.ctx.model.ref(row.dataset.nodeId ?? '');
    if (!ref) return;
    const frag = document.createDocumentFragment();
    for (const c of ref.node.children) frag.append(this.row(c, ref.entry));
    row.append(frag);
  }

  /** Opens every ancestor of every kept node (all items, or the first when the trace is big). */
  expandToKept(allItems: boolean): void {
    if (this.filtered) {
      this.filters.kept = true;
      this.filters.dropped = true;
      this.filters.other = true;
      this.filters.modality = '';
      this.filters.search = '';
      this.syncToolbar();
      this.renderTree();
    }
    if (allItems) this.showAllRoots();
    const items = allItems ? this.ctx.model.items : this.ctx.model.items.slice(0, 1);
    for (const entry of items) {
      for (const id of entry.item.keptNodeIds) this.openPath(id);
      if (entry.item.keptNodeIds.length === 0) this.rows.get(entry.tree.id)!.open = true;
    }
  }

  collapseAll(): void {
    for (const row of this.rows.values()) row.open = false;
  }

  private syncToolbar(): void {
    for (const key of ['kept', 'dropped', 'other'] as const) {
      const box = this.element.querySelector(`vscode-checkbox[data-filter="${key}"]`) as (HTMLElement & { checked: boolean }) | null;
      if (box) box.checked = this.filters[key];
    }
    const search = this.element.querySelector('vscode-textfield.canopy-search') as (HTMLElement & { value: string }) | null;
    if (search) search.value = this.filters.search;
    const modality = this.element.querySelector('vscode-single-select.canopy-modality') as (HTMLElement & { value: string }) | null;
    if (modality) modality.value = this.filters.modality;
  }

  /** Makes a node's row exist by opening its ancestors (populating them on the way). */
  private openPath(nodeId: string): Row | undefined {
    const path = [...this.ctx.model.ancestors(nodeId).map((a) => a.id), nodeId];
    if (!this.filtered && !this.rows.has(path[0]!)) this.showAllRoots();
    let row: Row | undefined;
    for (let i = 0; i < path.length; i++) {
      row = this.rows.get(path[i]!);
      if (!row) return undefined;
      if (i < path.length - 1) {
        this.populate(row);
        row.open = true;
      }
    }
    return row;
  }

  /** Shows and selects a node (clearing filters that hide it) and its details. */
  reveal(nodeId: string, focus = true): void {
    if (!this.ctx.model.ref(nodeId)) return;
    if (this.filtered && !this.rows.has(nodeId)) {
      Object.assign(this.filters, { kept: true, dropped: true, other: true, modality: '', search: '' });
      this.syncToolbar();
      this.renderTree();
    }
    if (!this.filtered) this.openPath(nodeId);
    this.markSelected(nodeId, focus);
    this.selectedId = nodeId;
    this.showDetail(nodeId);
    this.keepRowVisible(nodeId);
    this.ctx.saveUi();
  }

  /**
   * On a narrow view the details open as a sheet over the bottom of the view: the clicked row is
   * scrolled to stay above it. On a wide one the pane stays pinned beside the tree.
   */
  private keepRowVisible(nodeId: string): void {
    requestAnimationFrame(() => {
      const row = this.rows.get(nodeId);
      if (!row || getComputedStyle(this.detail).position !== 'fixed') return;
      const wrapper = row.shadowRoot?.querySelector('.wrapper') ?? row;
      const r = wrapper.getBoundingClientRect();
      const sheetTop = this.detail.getBoundingClientRect().top;
      const pane = this.tree.parentElement!;
      if (r.bottom > sheetTop - 4) pane.scrollTop += r.bottom - sheetTop + 8;
      const again = wrapper.getBoundingClientRect();
      if (again.bottom > sheetTop - 4) window.scrollBy(0, again.bottom - sheetTop + 8);
      else if (again.top < 0) window.scrollBy(0, again.top - 8);
    });
  }

  private markSelected(nodeId: string, focus: boolean): void {
    const row = this.rows.get(nodeId);
    if (!row) return;
    for (const r of this.tree.querySelectorAll('vscode-tree-item[selected]')) if (r !== row) (r as Row).selected = false;
    row.selected = true;
    row.active = true;
    requestAnimationFrame(() => {
      row.scrollIntoView({ block: 'nearest' });
      if (focus) row.focus();
    });
  }

  // ---- details ----

  private showDetail(nodeId: string | undefined): void {
    const ref = nodeId ? this.ctx.model.ref(nodeId) : undefined;
    this.element.classList.toggle('canopy-has-detail', ref !== undefined);
    if (!ref) {
      this.detail.replaceChildren(el('p', { class: 'canopy-muted' }, 'Select a region to see its score, its parent’s score, the decision, the stage that took it and why.'));
      return;
    }
    const model = this.ctx.model;
    const n = ref.node;
    const d = decisionOf(model, ref);
    const rows: Array<[string, string]> = [
      ['Decided by', `${d.stage} — ${n.decision}`],
      ['Rule', `${n.rule} — ${d.why}`],
      ...(d.overridden ? ([['Earlier stage', d.overridden]] as Array<[string, string]>) : []),
      ['Score', n.components ? `dense ${fmtScore(n.components.dense, 2)} · lexical ${fmtScore(n.components.lexical, 2)} · fused ${fmtScore(n.score, 2)}` : fmtScore(n.score, 4)],
      ['Parent score', fmtScore(n.parentScore, 4)],
      ['Score − parent', n.score !== undefined && n.parentScore !== undefined ? fmtDelta(n.score - n.parentScore, 4) : '—'],
      ['Tokens', fmtInt(n.tokens)],
      ['Kind', `${n.kind} (${n.modality})`],
      ['Where', placeLabel(n.anchor)],
      ['Item', `${plainLabel(model.displayTitle(ref.entry))} — round ${ref.entry.round}, rank ${ref.entry.item.rank + 1}`],
      ['Node id', n.id],
    ];
    const dl = el('dl', { class: 'canopy-props' });
    for (const [k, v] of rows) dl.append(el('dt', {}, k), el('dd', {}, v));
    const status = el('p', { class: 'canopy-status-line' }, decisionPill(d), ' ', `${d.status[0]!.toUpperCase()}${d.status.slice(1)}.`);
    const note = siblingNote(model, ref);
    const actions = el('div', { class: 'canopy-actions' });
    if (n.anchor.page !== undefined) actions.append(button('Show on the PDF page', () => this.ctx.showPdf(n.anchor.file, n.anchor.page!, n.id), { class: 'canopy-link' }));
    if (n.anchor.startLine !== undefined && n.anchor.page === undefined) actions.append(button('Open in editor', () => this.ctx.openAnchor(n.anchor), { class: 'canopy-link canopy-open-source' }));
    if (model.controllerNodesFor(n.id)) {
      actions.append(button('Controller steps for this region', () => this.ctx.showControllerSteps(n.id), { class: 'canopy-link canopy-controller-steps' }));
    }
    // Design §10: this node is gold evidence for the trace's question (stored in .canopy/annotations.jsonl).
    const mark = button(
      'Mark as gold evidence',
      () => {
        mark.setAttribute('disabled', '');
        this.ctx
          .request('gold/mark', { traceId: model.trace.id, nodeId: n.id })
          .then((r) => {
            mark.textContent = r.added ? 'Marked as gold evidence ✓' : 'Already gold evidence';
          })
          .catch((err: Error) => {
            mark.removeAttribute('disabled');
            this.ctx.error(`Could not mark the region as gold evidence: ${err.message}`);
          });
      },
      { class: 'canopy-link canopy-mark-gold', title: `Gold evidence for “${model.trace.question}”` },
    );
    actions.append(mark);
    // Where the answer quotes this region: the quote's context and, from the learned reader, why.
    const quotes = model.trace.answer.citations.filter((c) => c.nodeId === n.id);
    const quoted = quotes.map((c) =>
      el(
        'div',
        { class: 'canopy-quoted' },
        el('p', {}, el('strong', {}, `Quoted as [${c.marker}]`), c.stale ? el('span', { class: 'canopy-stale', title: 'The file changed and no longer parses: its last good version is served' }, ' stale') : null),
        c.context ? el('p', { class: 'canopy-quote-context' }, el('span', { class: 'canopy-label' }, 'Context: '), c.context) : null,
        c.judgment ? renderJudgment(c.judgment, 'Why this quote', 'the learned reader’s probability that this region answers the question') : null,
      ),
    );
    const whole = wholeText(n);
    const body = el('div', { class: 'canopy-region-text', tabindex: '0', role: 'region', 'aria-label': 'Region text' });
    body.append(el('div', {}, whole.text || '(no text)'));
    if (whole.cut > 0) body.append(el('p', { class: 'canopy-muted' }, `… ${fmtInt(whole.cut)} more characters (open the source to read on)`));
    const close = button('×', () => this.element.classList.remove('canopy-has-detail'), { class: 'canopy-detail-close', 'aria-label': 'Close the region details', title: 'Close' });
    this.detail.replaceChildren(
      el('div', { class: 'canopy-detail-head' }, el('h3', {}, `${n.kind}: ${clip(plainLabel(ref.depth === 0 ? model.displayTitle(ref.entry) : model.labelText(ref)), 80) || n.id}`), close),
      status,
      note ? el('p', { class: 'canopy-sibling-note', role: 'note' }, note) : '',
      dl,
      ...quoted,
      actions,
      body,
    );
  }
}
