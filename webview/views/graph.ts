/**
 * The graph tab: the MAGE controller's runs (design §7) — the query-time subgraph of pages and
 * elements with typed edges, laid out by dagre and drawn as SVG in a view that fits the drawing
 * to its box and zooms (wheel, buttons, + − 0 keys) and pans (drag, arrow keys); the action
 * timeline with each action's utility, who decided it and whether it was valid; a scrubber that
 * shows the node states after any step; and budget meters. A node clicked shows its details here
 * (the tab stays); "Controller steps for this region" (from the evidence tree) highlights the
 * region's elements and lists only their steps. Everything comes from the trace; until the
 * controller writes runs into traces the tab says so.
 */
import { Graph, layout } from '@dagrejs/dagre';
import type { ControllerNodeState, TraceController, TraceControllerNode, TraceControllerStep } from '../../src/contracts/trace';
import type { InspectorContext } from '../context';
import { button, ce, clip, el, emptyState, fmtInt, fmtScore, svg, unit } from '../dom';
import { readableId } from '../model';
import { plainLabel } from '../text';

const NODE_W = 210;
const NODE_H = 56;
/** Characters per label line at 12 px in NODE_W. */
const LINE_CHARS = 30;
const states: ControllerNodeState[] = ['inactive', 'active', 'opened', 'pruned'];
/** Below this scale a fitted drawing's labels are too small to read: the view opens at READABLE instead. */
const READABLE = 0.7;
const MIN_SCALE = 0.1;
const MAX_SCALE = 4;
/** Fitting or centring never enlarges the drawing past this (a small graph stays at its size). */
const FIT_MAX = 1.25;

const safeClass = (s: string) => s.toLowerCase().replace(/[^a-z0-9-]/g, '-');

/** States of every subgraph node after the first `steps` steps (valid ones change state). */
export function statesAfter(run: TraceController, steps: number): Map<string, ControllerNodeState> {
  const out = new Map<string, ControllerNodeState>(run.subgraph.nodes.map((n) => [n.id, 'inactive']));
  for (const s of run.steps.slice(0, steps)) {
    if (!s.valid) continue;
    for (const c of s.changes) out.set(c.id, c.to);
  }
  return out;
}

function targetOf(s: TraceControllerStep): string | undefined {
  const a = s.action;
  return a.nodeId ?? a.pageId ?? a.to;
}

/** Whether a step acts on, or changes, one of `ids`. */
function touches(s: TraceControllerStep, ids: ReadonlySet<string>): boolean {
  const a = s.action;
  return [a.nodeId, a.pageId, a.from, a.to].some((x) => x !== undefined && ids.has(x)) || s.changes.some((c) => ids.has(c.id));
}

/** A label in at most `lines` lines of at most `width` characters; the last one ends with … when the label goes on. */
export function wrapLabel(text: string, width: number, lines: number): string[] {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter((w) => w.length > 0);
  const out: string[] = [''];
  let rest = false;
  for (const w of words) {
    const cur = out[out.length - 1]!;
    const next = cur ? `${cur} ${w}` : w;
    if (next.length <= width) {
      out[out.length - 1] = next;
      continue;
    }
    if (cur && out.length < lines && w.length <= width) {
      out.push(w);
      continue;
    }
    // A word longer than a line, or no line left: cut here.
    if (cur && out.length < lines) out.push(w.slice(0, width));
    else if (!cur) out[out.length - 1] = w.slice(0, width);
    rest = true;
    break;
  }
  if (rest) {
    const last = out[out.length - 1]!;
    out[out.length - 1] = `${last.length >= width ? last.slice(0, width - 1) : last}…`;
  }
  return out.filter((l) => l.length > 0);
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export class GraphView {
  readonly element = el('div', { class: 'canopy-graph-view' });
  private current: RunView | undefined;
  private picker: (HTMLElement & { value: string }) | undefined;

  constructor(private readonly ctx: InspectorContext) {
    const runs = ctx.model.controllers;
    if (runs.length === 0) {
      this.element.append(
        emptyState(
          'No controller run in this trace.',
          'The MAGE controller builds an evidence subgraph for long PDFs under a budget. When it runs for a question, its pages, elements, typed edges, every action and the budget left appear here.',
        ),
      );
      return;
    }
    if (runs.length > 1) {
      const picker = ce('vscode-single-select', { 'aria-label': 'Controller run', label: 'Controller run', class: 'canopy-run-picker' }) as HTMLElement & { value: string };
      runs.forEach((r, i) => picker.append(ce('vscode-option', { value: String(i) }, `${r.controller.file} (round ${r.round})`)));
      picker.addEventListener('change', () => this.show(Number(picker.value) || 0));
      this.picker = picker;
    }
    this.show(0);
  }

  private show(i: number): RunView {
    const run = this.ctx.model.controllers[i]!;
    this.current = new RunView(this.ctx, run.controller);
    this.element.replaceChildren(...(this.picker ? [this.picker] : []), this.current.element);
    if (this.picker && this.picker.value !== String(i)) this.picker.value = String(i);
    return this.current;
  }

  /** Fits the drawing once the tab is visible (a hidden box has no size to fit into). */
  shown(): void {
    this.current?.fitIfPending();
  }

  /** Highlights the elements of a region and lists only their steps. */
  focusRegion(nodeId: string): boolean {
    const hit = this.ctx.model.controllerNodesFor(nodeId);
    if (!hit) return false;
    const view = this.picker && this.picker.value !== String(hit.run) ? this.show(hit.run) : (this.current ?? this.show(hit.run));
    const ref = this.ctx.model.ref(nodeId);
    view.filterTo(new Set(hit.nodes), ref ? `${ref.node.kind} “${clip(plainLabel(ref.node.text ?? ref.node.preview ?? ''), 60)}”` : readableId(nodeId), nodeId);
    return true;
  }
}

class RunView {
  readonly element: HTMLElement;
  private readonly canvas: SVGSVGElement;
  private readonly viewport: HTMLElement;
  private readonly nodeEls = new Map<string, SVGGElement>();
  private readonly stepEls: HTMLElement[] = [];
  private readonly full: Box;
  private view: Box;
  private pendingFit = true;
  private readonly filterBar = el('div', { class: 'canopy-graph-filter', role: 'status' });
  private readonly detail = el('section', { class: 'canopy-gnode-detail', 'aria-label': 'Graph node details', 'aria-live': 'polite' });
  private readonly byId: Map<string, TraceControllerNode>;
  private readonly scrub: HTMLInputElement;
  private readonly scrubLabel: HTMLLabelElement;
  private readonly timeline: HTMLOListElement;

  constructor(
    private readonly ctx: InspectorContext,
    private readonly run: TraceController,
  ) {
    this.byId = new Map(run.subgraph.nodes.map((n) => [n.id, n]));
    const edges = run.subgraph.edges.filter((e) => this.byId.has(e.from) && this.byId.has(e.to) && e.from !== e.to);
    const g = this.layout(edges);
    const size = g.graph();
    const width = Math.max(200, Math.ceil(size.width ?? 200));
    const height = Math.max(100, Math.ceil(size.height ?? 100));
    this.full = { x: 0, y: 0, w: width, h: height };
    this.view = { ...this.full };

    const markerId = `arrow-${Math.random().toString(36).slice(2, 8)}`;
    this.canvas = svg('svg', { class: 'canopy-graph', viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'xMidYMid meet', role: 'group', 'aria-label': `Evidence subgraph of ${run.file}` });
    this.canvas.append(
      svg(
        'defs',
        {},
        svg('marker', { id: markerId, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'canopy-arrow' })),
      ),
    );
    edges.forEach((e, i) => {
      const points: Array<{ x: number; y: number }> = g.edge(e.from, e.to, `e${i}`)?.points ?? [];
      if (points.length < 2) return;
      const d = points.map((p, j) => `${j === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
      this.canvas.append(
        svg('path', { d, class: `canopy-edge type-${safeClass(e.type)}${e.followed ? ' followed' : ''}`, 'marker-end': `url(#${markerId})` }, svg('title', {}, `${e.type}${e.followed ? ' (followed)' : ''}: ${readableId(e.from)} → ${readableId(e.to)}`)),
      );
    });
    for (const n of run.subgraph.nodes) {
      const pos = g.node(n.id);
      if (!pos) continue;
      const x = pos.x - NODE_W / 2;
      const y = pos.y - NODE_H / 2;
      const kind = `${n.type} · p.${n.page + 1}`;
      const label = plainLabel(n.label);
      const lines = wrapLabel(label, LINE_CHARS, 2);
      const group = svg(
        'g',
        {
          class: `canopy-gnode state-${n.state} type-${safeClass(n.type)}`,
          transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
          tabindex: 0,
          role: 'button',
          'data-node': n.id,
          // The visible text first (its accessible name must hold it), then the state and the whole label.
          'aria-label': `${kind} ${lines.join(' ')} — ${n.state}${lines.join(' ') !== label ? `: ${clip(label, 120)}` : ''}`,
        },
        svg('rect', { width: NODE_W, height: NODE_H, rx: 4 }),
        // Each line ends with a space, so the node's text reads as words (its accessible name holds it).
        svg('text', { x: 8, y: 16, class: 'canopy-gnode-kind' }, `${kind} `),
        ...lines.map((l, i) => svg('text', { x: 8, y: 33 + 15 * i, class: 'canopy-gnode-label' }, `${l} `)),
        svg('title', {}, `${kind} — ${n.state}${n.relevance !== undefined ? `, relevance ${fmtScore(n.relevance, 2)}` : ''}\n${clip(label, 300)}`),
      );
      const activate = () => this.select(n.id);
      group.addEventListener('click', activate);
      group.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          activate();
        }
      });
      this.nodeEls.set(n.id, group);
      this.canvas.append(group);
    }

    this.viewport = el('div', { class: 'canopy-graph-viewport', tabindex: '0', 'aria-label': 'Evidence subgraph: drag or arrow keys to pan, wheel or + and − to zoom, 0 to fit' });
    this.viewport.append(this.canvas);
    this.wirePanZoom();

    // Scrubber: node states after step N.
    const total = run.steps.length;
    this.scrubLabel = el('label', { class: 'canopy-scrub-label', for: `${markerId}-scrub` });
    this.scrub = el('input', { type: 'range', min: '0', max: String(total), value: String(total), id: `${markerId}-scrub`, class: 'canopy-scrub' });
    this.timeline = el('ol', { class: 'canopy-actions-list', 'aria-label': 'Controller actions' });
    this.scrub.addEventListener('input', () => this.paint(Number(this.scrub.value)));
    for (const s of run.steps) {
      const target = targetOf(s);
      const t = target ? this.byId.get(target) : undefined;
      const item = el(
        'li',
        { class: `canopy-step${s.valid ? '' : ' invalid'}`, 'data-step': String(s.step) },
        el(
          'button',
          { type: 'button', class: 'canopy-step-button', 'data-step': String(s.step) },
          el('span', { class: 'canopy-step-n' }, `${s.step + 1}.`),
          el('span', { class: 'canopy-step-iter' }, `it ${s.iteration}`),
          el('span', { class: `canopy-step-action action-${safeClass(s.action.type)}` }, s.action.type),
          el('span', { class: 'canopy-step-target' }, t ? clip(`${t.type} p.${t.page + 1}: ${plainLabel(t.label)}`, 80) : (s.action.query ?? s.action.reason ?? (target ? readableId(target) : ''))),
          el('span', { class: 'canopy-step-utility' }, s.utility === undefined ? '' : `u=${fmtScore(s.utility, 2)}`),
          el('span', { class: 'canopy-step-by canopy-muted' }, s.decidedBy),
        ),
      );
      if (s.why) item.append(el('div', { class: 'canopy-muted canopy-step-why' }, s.why));
      if (!s.valid) item.append(el('div', { class: 'canopy-step-error', role: 'note' }, `invalid: ${s.error ?? 'rejected'}`));
      item.querySelector('button')!.addEventListener('click', () => {
        this.scrub.value = String(s.step + 1);
        this.paint(s.step + 1, target);
        if (target) this.centerOn([target]);
      });
      this.stepEls.push(item);
      this.timeline.append(item);
    }
    this.paint(total);

    const legend = el('ul', { class: 'canopy-legend', 'aria-label': 'Legend' });
    for (const s of states) legend.append(el('li', { class: `state-${s}` }, el('span', { class: 'canopy-swatch', 'aria-hidden': 'true' }), s));
    for (const t of [...new Set(edges.map((e) => e.type))]) legend.append(el('li', { class: `edge type-${safeClass(t)}` }, el('span', { class: 'canopy-edge-swatch', 'aria-hidden': 'true' }), t));

    const zoomBar = el(
      'div',
      { class: 'canopy-graph-tools', role: 'toolbar', 'aria-label': 'Graph view' },
      button('Fit', () => this.fit(), { class: 'canopy-link canopy-graph-fit', title: 'Fit the whole graph into view (0)' }),
      button('+', () => this.zoom(1.25), { class: 'canopy-graph-zoom', 'aria-label': 'Zoom in', title: 'Zoom in (+)' }),
      button('−', () => this.zoom(0.8), { class: 'canopy-graph-zoom', 'aria-label': 'Zoom out', title: 'Zoom out (−)' }),
      el('span', { class: 'canopy-muted canopy-graph-hint' }, 'drag to pan · wheel to zoom'),
    );
    this.filterBar.hidden = true;
    this.detail.hidden = true;

    this.element = el(
      'div',
      { class: 'canopy-run' },
      el('h3', {}, `${run.file} — ${run.evaluator.kind === 'llm' ? `LLM evaluator${run.evaluator.model ? ` (${run.evaluator.model})` : ''}` : 'rule evaluator'}`),
      el('p', { class: 'canopy-stop' }, el('strong', {}, `Stopped: ${run.stop.reason} (iteration ${run.stop.iteration}). `), run.stop.note),
      this.meters(),
      legend,
      this.filterBar,
      zoomBar,
      this.viewport,
      this.detail,
      el('div', { class: 'canopy-scrub-row' }, this.scrubLabel, this.scrub),
      el('h4', {}, `Actions (${total})`),
      this.timeline,
    );
  }

  /** dagre, top to bottom; a drawing much wider than tall is laid out left to right instead. */
  private layout(edges: TraceController['subgraph']['edges']): Graph {
    const build = (rankdir: 'TB' | 'LR') => {
      const g = new Graph({ multigraph: true });
      g.setGraph({ rankdir, nodesep: 20, ranksep: 44, marginx: 12, marginy: 12 });
      g.setDefaultEdgeLabel(() => ({}));
      for (const n of this.run.subgraph.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
      edges.forEach((e, i) => g.setEdge(e.from, e.to, {}, `e${i}`));
      layout(g);
      return g;
    };
    const tb = build('TB');
    const { width = 1, height = 1 } = tb.graph();
    if (width / height <= 3.5) return tb;
    const lr = build('LR');
    const s = lr.graph();
    // The layout whose fitted scale in a 16:9 box is larger.
    const fitScale = (w: number, h: number) => Math.min(16 / w, 9 / h);
    return fitScale(s.width ?? 1, s.height ?? 1) > fitScale(width, height) ? lr : tb;
  }

  private meters(): HTMLElement {
    const last = this.run.steps.at(-1)?.budgetLeft;
    const b = this.run.budgets;
    const meters = el('div', { class: 'canopy-meters', 'aria-label': 'Budget used' });
    const meter = (name: string, used: number, max: number) => {
      const bar = el('div', { class: 'canopy-meter-fill' });
      bar.style.width = `${(100 * unit(max > 0 ? used / max : 0)).toFixed(1)}%`;
      meters.append(
        el(
          'div',
          { class: 'canopy-meter', role: 'meter', 'aria-label': name, 'aria-valuemin': '0', 'aria-valuemax': String(max), 'aria-valuenow': String(used) },
          el('span', { class: 'canopy-meter-name' }, name),
          el('span', { class: 'canopy-meter-value' }, `${fmtInt(used)} / ${fmtInt(max)}`),
          el('div', { class: 'canopy-meter-track' }, bar),
        ),
      );
    };
    meter('Iterations', last ? b.maxIterations - last.iterations : 0, b.maxIterations);
    meter('Opened nodes', last ? b.maxOpenedNodes - last.openedNodes : 0, b.maxOpenedNodes);
    meter('Searches', last ? b.maxSearches - last.searches : 0, b.maxSearches);
    meter('Activations (this iteration)', last ? b.maxActivationsPerIteration - last.activationsThisIteration : 0, b.maxActivationsPerIteration);
    return meters;
  }

  private paint(upTo: number, highlight?: string): void {
    const st = statesAfter(this.run, upTo);
    for (const [id, group] of this.nodeEls) {
      const s = st.get(id) ?? 'inactive';
      for (const name of states) group.classList.toggle(`state-${name}`, name === s);
      group.classList.toggle('highlight', id === highlight);
    }
    this.scrubLabel.textContent = `State after step ${upTo} of ${this.run.steps.length}`;
    this.stepEls.forEach((li, i) => li.classList.toggle('future', i >= upTo));
  }

  // ---- view box: fit, zoom, pan ----

  private apply(): void {
    const v = this.view;
    this.canvas.setAttribute('viewBox', `${v.x.toFixed(1)} ${v.y.toFixed(1)} ${v.w.toFixed(1)} ${v.h.toFixed(1)}`);
    this.viewport.dataset.scale = this.scale().toFixed(3);
  }

  /** Screen pixels per drawing unit. */
  private scale(): number {
    const r = this.viewport.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return 1;
    return Math.min(r.width / this.view.w, r.height / this.view.h);
  }

  /** The view box that shows `box` in the viewport at `scale`, centred on it. */
  private boxAt(cx: number, cy: number, scale: number): Box {
    const r = this.viewport.getBoundingClientRect();
    const w = r.width / scale;
    const h = r.height / scale;
    return { x: cx - w / 2, y: cy - h / 2, w, h };
  }

  /** The whole drawing in view; when that makes labels unreadably small, the opened elements at a readable size instead. */
  fitIfPending(): void {
    if (!this.pendingFit) return;
    const r = this.viewport.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return;
    this.pendingFit = false;
    this.fit();
    if (this.scale() < READABLE) {
      const opened = this.run.subgraph.nodes.filter((n) => n.state === 'opened').map((n) => n.id);
      this.centerOn(opened.length > 0 ? opened : [this.run.subgraph.nodes[0]!.id], READABLE);
    }
  }

  fit(): void {
    const r = this.viewport.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) {
      this.view = { ...this.full };
    } else {
      const s = Math.min(FIT_MAX, r.width / this.full.w, r.height / this.full.h);
      this.view = this.boxAt(this.full.x + this.full.w / 2, this.full.y + this.full.h / 2, s);
    }
    this.apply();
  }

  zoom(factor: number, at?: { x: number; y: number }): void {
    const r = this.viewport.getBoundingClientRect();
    if (r.width === 0) return;
    const s = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.scale() * factor));
    // The drawing point under `at` (screen) stays under it.
    const px = at ? (at.x - r.left) / r.width : 0.5;
    const py = at ? (at.y - r.top) / r.height : 0.5;
    const cx = this.view.x + px * this.view.w;
    const cy = this.view.y + py * this.view.h;
    const w = r.width / s;
    const h = r.height / s;
    this.view = { x: cx - px * w, y: cy - py * h, w, h };
    this.apply();
  }

  private pan(dx: number, dy: number): void {
    const s = this.scale();
    this.view = { ...this.view, x: this.view.x - dx / s, y: this.view.y - dy / s };
    this.apply();
  }

  /** Centres the view on some nodes, at `scale` (default: the current one, at least readable). */
  centerOn(ids: readonly string[], scale?: number): void {
    const boxes = ids.map((id) => this.nodeEls.get(id)).filter((g): g is SVGGElement => g !== undefined).map((g) => this.nodeBox(g));
    if (boxes.length === 0) return;
    const x0 = Math.min(...boxes.map((b) => b.x));
    const y0 = Math.min(...boxes.map((b) => b.y));
    const x1 = Math.max(...boxes.map((b) => b.x + b.w));
    const y1 = Math.max(...boxes.map((b) => b.y + b.h));
    const r = this.viewport.getBoundingClientRect();
    if (r.width === 0) return;
    const fits = Math.min(r.width / (x1 - x0 + 40), r.height / (y1 - y0 + 40));
    const s = scale ?? Math.min(FIT_MAX, Math.max(Math.min(this.scale(), fits), Math.min(READABLE, fits)));
    this.view = this.boxAt((x0 + x1) / 2, (y0 + y1) / 2, s);
    this.apply();
  }

  private nodeBox(g: SVGGElement): Box {
    const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(g.getAttribute('transform') ?? '');
    return { x: Number(m?.[1] ?? 0), y: Number(m?.[2] ?? 0), w: NODE_W, h: NODE_H };
  }

  private wirePanZoom(): void {
    const vp = this.viewport;
    let drag: { x: number; y: number; id: number; moved: boolean } | undefined;
    vp.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      this.zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, { x: ev.clientX, y: ev.clientY });
    });
    vp.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0) return;
      drag = { x: ev.clientX, y: ev.clientY, id: ev.pointerId, moved: false };
    });
    vp.addEventListener('pointermove', (ev) => {
      if (!drag || drag.id !== ev.pointerId) return;
      const dx = ev.clientX - drag.x;
      const dy = ev.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) vp.setPointerCapture(ev.pointerId);
      drag.moved = true;
      drag.x = ev.clientX;
      drag.y = ev.clientY;
      vp.classList.add('dragging');
      this.pan(dx, dy);
    });
    const end = (ev: PointerEvent) => {
      if (!drag || drag.id !== ev.pointerId) return;
      const moved = drag.moved;
      drag = undefined;
      vp.classList.remove('dragging');
      if (moved) {
        // A drag is not a click on the node it ended on.
        const stop = (e: Event) => {
          e.stopPropagation();
          vp.removeEventListener('click', stop, true);
        };
        vp.addEventListener('click', stop, true);
        setTimeout(() => vp.removeEventListener('click', stop, true), 0);
      }
    };
    vp.addEventListener('pointerup', end);
    vp.addEventListener('pointercancel', end);
    vp.addEventListener('keydown', (ev) => {
      if (ev.target !== vp) return;
      const step = 40;
      const keys: Record<string, () => void> = {
        '+': () => this.zoom(1.25),
        '=': () => this.zoom(1.25),
        '-': () => this.zoom(0.8),
        '0': () => this.fit(),
        ArrowLeft: () => this.pan(step, 0),
        ArrowRight: () => this.pan(-step, 0),
        ArrowUp: () => this.pan(0, step),
        ArrowDown: () => this.pan(0, -step),
      };
      const act = keys[ev.key];
      if (!act) return;
      ev.preventDefault();
      act();
    });
  }

  // ---- selection and the region filter ----

  /** Shows a node's details under the graph (the tab stays). */
  select(id: string): void {
    const n = this.byId.get(id);
    if (!n) return;
    for (const [gid, g] of this.nodeEls) g.classList.toggle('selected', gid === id);
    const steps = this.run.steps.filter((s) => touches(s, new Set([id])));
    const actions = el('div', { class: 'canopy-actions' });
    if (n.regionId && this.ctx.model.ref(n.regionId)) actions.append(button('Show its region in the evidence tree', () => this.ctx.selectNode(n.regionId!), { class: 'canopy-link canopy-gnode-region' }));
    if (n.anchor.page !== undefined && n.anchor.file.toLowerCase().endsWith('.pdf')) actions.append(button(`Show page ${n.page + 1}`, () => this.ctx.showPdf(n.anchor.file, n.anchor.page!, n.regionId), { class: 'canopy-link' }));
    if (steps.length > 0) actions.append(button(`Only its ${steps.length} step(s)`, () => this.filterTo(new Set([id]), `${n.type} on page ${n.page + 1}`), { class: 'canopy-link canopy-gnode-steps' }));
    this.detail.hidden = false;
    this.detail.dataset.node = id;
    this.detail.replaceChildren(
      el('h4', {}, `${n.type} · page ${n.page + 1} · ${n.state}${n.relevance !== undefined ? ` · relevance ${fmtScore(n.relevance, 2)}` : ''}`),
      el('p', { class: 'canopy-gnode-label-full' }, plainLabel(n.label) || readableId(n.id)),
      el('p', { class: 'canopy-muted' }, steps.length === 0 ? 'No step acted on it.' : `Steps: ${steps.map((s) => `${s.step + 1}. ${s.action.type}${s.why ? ` (${clip(s.why, 80)})` : ''}`).join(' · ')}`),
      actions,
    );
  }

  /** Highlights `ids` and lists only the steps that act on them. */
  filterTo(ids: ReadonlySet<string>, what: string, regionId?: string): void {
    for (const [id, g] of this.nodeEls) g.classList.toggle('focus', ids.has(id));
    let shown = 0;
    this.run.steps.forEach((s, i) => {
      const keep = touches(s, ids);
      this.stepEls[i]!.hidden = !keep;
      if (keep) shown++;
    });
    this.filterBar.hidden = false;
    this.filterBar.dataset.region = regionId ?? '';
    this.filterBar.replaceChildren(
      el('span', {}, `Controller steps for ${what}: ${shown} of ${this.run.steps.length} step(s), ${ids.size} element(s) highlighted. `),
      button('Show all steps', () => this.clearFilter(), { class: 'canopy-link canopy-graph-unfilter' }),
    );
    const first = [...ids][0];
    if (first) this.select(first);
    this.pendingFit = false;
    requestAnimationFrame(() => this.centerOn([...ids]));
  }

  private clearFilter(): void {
    for (const g of this.nodeEls.values()) g.classList.remove('focus');
    for (const li of this.stepEls) li.hidden = false;
    this.filterBar.hidden = true;
    this.filterBar.replaceChildren();
  }
}
