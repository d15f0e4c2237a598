/**
 * The graph tab: the MAGE controller's runs (design §7) — the query-time subgraph of pages and
 * elements with typed edges, laid out by dagre and drawn as SVG; the action timeline with each
 * action's utility, who decided it and whether it was valid; a scrubber that shows the node
 * states after any step; and budget meters. Everything comes from the trace; until the
 * controller writes runs into traces the tab says so.
 */
import { Graph, layout } from '@dagrejs/dagre';
import type { ControllerNodeState, TraceController, TraceControllerStep } from '../../src/contracts/trace';
import type { InspectorContext } from '../context';
import { ce, clip, el, emptyState, fmtInt, fmtScore, svg, unit } from '../dom';
import { readableId } from '../model';

const NODE_W = 170;
const NODE_H = 44;
const states: ControllerNodeState[] = ['inactive', 'active', 'opened', 'pruned'];

const safeClass = (s: string) => s.toLowerCase().replace(/[^a-z0-9-]/g, '-');

export function renderGraph(ctx: InspectorContext): HTMLElement {
  const runs = ctx.model.controllers;
  if (runs.length === 0) {
    return emptyState(
      'No controller run in this trace.',
      'The MAGE controller builds an evidence subgraph for long PDFs under a budget. When it runs for a question, its pages, elements, typed edges, every action and the budget left appear here.',
    );
  }
  const host = el('div', { class: 'canopy-graph-view' });
  const show = (i: number) => host.replaceChildren(...(runs.length > 1 ? [picker] : []), renderRun(ctx, runs[i]!.controller));
  const picker = ce('vscode-single-select', { 'aria-label': 'Controller run', class: 'canopy-run-picker' }) as HTMLElement & { value: string };
  runs.forEach((r, i) => picker.append(ce('vscode-option', { value: String(i) }, `${r.controller.file} (round ${r.round})`)));
  picker.addEventListener('change', () => show(Number(picker.value) || 0));
  show(0);
  return host;
}

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

function renderRun(ctx: InspectorContext, run: TraceController): HTMLElement {
  const byId = new Map(run.subgraph.nodes.map((n) => [n.id, n]));
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 48, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of run.subgraph.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  const edges = run.subgraph.edges.filter((e) => byId.has(e.from) && byId.has(e.to) && e.from !== e.to);
  edges.forEach((e, i) => g.setEdge(e.from, e.to, {}, `e${i}`));
  layout(g);
  const size = g.graph();
  const width = Math.max(200, Math.ceil(size.width ?? 200));
  const height = Math.max(100, Math.ceil(size.height ?? 100));

  const markerId = `arrow-${Math.random().toString(36).slice(2, 8)}`;
  const canvas = svg('svg', { class: 'canopy-graph', viewBox: `0 0 ${width} ${height}`, width, height, role: 'group', 'aria-label': `Evidence subgraph of ${run.file}` });
  canvas.append(
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
    canvas.append(
      svg('path', { d, class: `canopy-edge type-${safeClass(e.type)}${e.followed ? ' followed' : ''}`, 'marker-end': `url(#${markerId})` }, svg('title', {}, `${e.type}${e.followed ? ' (followed)' : ''}: ${e.from} → ${e.to}`)),
    );
  });
  const nodeEls = new Map<string, SVGGElement>();
  for (const n of run.subgraph.nodes) {
    const pos = g.node(n.id);
    if (!pos) continue;
    const x = pos.x - NODE_W / 2;
    const y = pos.y - NODE_H / 2;
    const label = `${n.type} · p.${n.page + 1}`;
    const group = svg(
      'g',
      {
        class: `canopy-gnode state-${n.state} type-${safeClass(n.type)}`,
        transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
        tabindex: 0,
        role: 'button',
        'data-node': n.id,
        'aria-label': `${n.type} on page ${n.page + 1}, ${n.state}: ${clip(n.label, 80)}`,
      },
      svg('rect', { width: NODE_W, height: NODE_H, rx: 4 }),
      svg('text', { x: 8, y: 16, class: 'canopy-gnode-kind' }, label),
      svg('text', { x: 8, y: 33, class: 'canopy-gnode-label' }, clip(n.label, 26)),
      svg('title', {}, `${label} — ${n.state}${n.relevance !== undefined ? `, relevance ${fmtScore(n.relevance, 2)}` : ''}\n${clip(n.label, 200)}`),
    );
    const activate = () => {
      if (n.regionId && ctx.model.ref(n.regionId)) ctx.selectNode(n.regionId);
      else if (n.anchor.page !== undefined && n.anchor.file.toLowerCase().endsWith('.pdf')) ctx.showPdf(n.anchor.file, n.anchor.page);
      else ctx.openAnchor(n.anchor);
    };
    group.addEventListener('click', activate);
    group.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        activate();
      }
    });
    nodeEls.set(n.id, group);
    canvas.append(group);
  }

  // Scrubber: node states after step N.
  const total = run.steps.length;
  const scrubLabel = el('label', { class: 'canopy-scrub-label', for: `${markerId}-scrub` });
  const scrub = el('input', { type: 'range', min: '0', max: String(total), value: String(total), id: `${markerId}-scrub`, class: 'canopy-scrub' });
  const timeline = el('ol', { class: 'canopy-actions-list', 'aria-label': 'Controller actions' });
  const paint = (upTo: number, highlight?: string) => {
    const st = statesAfter(run, upTo);
    for (const [id, group] of nodeEls) {
      const s = st.get(id) ?? 'inactive';
      for (const name of states) group.classList.toggle(`state-${name}`, name === s);
      group.classList.toggle('highlight', id === highlight);
    }
    scrubLabel.textContent = `State after step ${upTo} of ${total}`;
    timeline.querySelectorAll('li').forEach((li, i) => li.classList.toggle('future', i >= upTo));
  };
  scrub.addEventListener('input', () => paint(Number(scrub.value)));

  for (const s of run.steps) {
    const target = targetOf(s);
    const t = target ? byId.get(target) : undefined;
    const item = el(
      'li',
      { class: `canopy-step${s.valid ? '' : ' invalid'}` },
      el(
        'button',
        { type: 'button', class: 'canopy-step-button', 'data-step': String(s.step) },
        el('span', { class: 'canopy-step-n' }, `${s.step + 1}.`),
        el('span', { class: 'canopy-step-iter' }, `it ${s.iteration}`),
        el('span', { class: `canopy-step-action action-${safeClass(s.action.type)}` }, s.action.type),
        el('span', { class: 'canopy-step-target' }, t ? clip(`${t.type} p.${t.page + 1}: ${t.label}`, 60) : (s.action.query ?? s.action.reason ?? (target ? readableId(target) : ''))),
        el('span', { class: 'canopy-step-utility' }, s.utility === undefined ? '' : `u=${fmtScore(s.utility, 2)}`),
        el('span', { class: 'canopy-step-by canopy-muted' }, s.decidedBy),
      ),
    );
    if (s.why) item.append(el('div', { class: 'canopy-muted canopy-step-why' }, s.why));
    if (!s.valid) item.append(el('div', { class: 'canopy-step-error', role: 'note' }, `invalid: ${s.error ?? 'rejected'}`));
    item.querySelector('button')!.addEventListener('click', () => {
      scrub.value = String(s.step + 1);
      paint(s.step + 1, target);
      if (target) nodeEls.get(target)?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    });
    timeline.append(item);
  }
  paint(total);

  const last = run.steps.at(-1)?.budgetLeft;
  const b = run.budgets;
  const meters = el('div', { class: 'canopy-meters', 'aria-label': 'Budget used' });
  const meter = (name: string, used: number, max: number) => {
    const bar = el('div', { class: 'canopy-meter-fill' });
    bar.style.width = `${(100 * unit(max > 0 ? used / max : 0)).toFixed(1)}%`;
    meters.append(
      el(
        'div',
        { class: 'canopy-meter', role: 'meter', 'aria-label': name, 'aria-valuemin': '0', 'aria-valuemax': String(max), 'aria-valuenow': String(used) },
        el('span', { class: 'canopy-meter-name' }, name),
        el('div', { class: 'canopy-meter-track' }, bar),
        el('span', { class: 'canopy-meter-value' }, `${fmtInt(used)} / ${fmtInt(max)}`),
      ),
    );
  };
  meter('Iterations', last ? b.maxIterations - last.iterations : 0, b.maxIterations);
  meter('Opened nodes', last ? b.maxOpenedNodes - last.openedNodes : 0, b.maxOpenedNodes);
  meter('Searches', last ? b.maxSearches - last.searches : 0, b.maxSearches);
  meter('Activations (this iteration)', last ? b.maxActivationsPerIteration - last.activationsThisIteration : 0, b.maxActivationsPerIteration);

  const legend = el('ul', { class: 'canopy-legend', 'aria-label': 'Legend' });
  for (const s of states) legend.append(el('li', { class: `state-${s}` }, el('span', { class: 'canopy-swatch', 'aria-hidden': 'true' }), s));
  for (const t of [...new Set(edges.map((e) => e.type))]) legend.append(el('li', { class: `edge type-${safeClass(t)}` }, el('span', { class: 'canopy-edge-swatch', 'aria-hidden': 'true' }), t));

  return el(
    'div',
    { class: 'canopy-run' },
    el('h3', {}, `${run.file} — ${run.evaluator.kind === 'llm' ? `LLM evaluator${run.evaluator.model ? ` (${run.evaluator.model})` : ''}` : 'rule evaluator'}`),
    el('p', { class: 'canopy-stop' }, el('strong', {}, `Stopped: ${run.stop.reason} (iteration ${run.stop.iteration}). `), run.stop.note),
    meters,
    legend,
    el('div', { class: 'canopy-graph-scroll' }, canvas),
    el('div', { class: 'canopy-scrub-row' }, scrubLabel, scrub),
    el('h4', {}, `Actions (${total})`),
    timeline,
  );
}
