/**
 * The compare tab: two traces side by side — settings that differ, token totals, the kept-set
 * diff (regions kept only by A, only by B, by both; matched by source anchor so that traces with
 * another B still line up) with each region's score in both, and per-item rank and score deltas.
 * B is picked from the saved traces, or set by a replay or the Questions view.
 */
import type { AskTrace, TraceNode } from '../../src/contracts/trace';
import type { TraceSummary } from '../../src/contracts/savedTrace';
import type { InspectorContext } from '../context';
import { button, ce, clip, el, emptyState, fmtDelta, fmtInt, fmtScore } from '../dom';
import { TraceModel, nodeText, placeLabel, regionKey } from '../model';

export interface KeptRegion {
  key: string;
  node: TraceNode;
  itemId: string;
  /** The node at the same place in the other trace, kept or not. */
  other?: TraceNode;
}

export interface TraceDiff {
  onlyA: KeptRegion[];
  onlyB: KeptRegion[];
  both: KeptRegion[];
  tokens: { a: number; b: number };
  uncompressed: { a: number; b: number };
  items: Array<{ itemId: string; title: string; a?: { rank: number; fused: number; kept: number }; b?: { rank: number; fused: number; kept: number } }>;
  settings: Array<{ name: string; a: string; b: string }>;
}

/** The kept regions of a trace by region key, and every node by key (to find a region's score in the other trace). */
function keyed(model: TraceModel): { kept: Map<string, KeptRegion>; all: Map<string, TraceNode> } {
  const kept = new Map<string, KeptRegion>();
  const all = new Map<string, TraceNode>();
  for (const ref of model.nodes.values()) {
    const key = regionKey(ref.node);
    if (!all.has(key) || ref.status === 'kept') all.set(key, ref.node);
    if (ref.status === 'kept') kept.set(key, { key, node: ref.node, itemId: ref.entry.item.itemId });
  }
  return { kept, all };
}

export function diffTraces(a: AskTrace, b: AskTrace): TraceDiff {
  const ma = keyed(new TraceModel(a));
  const mb = keyed(new TraceModel(b));
  const onlyA: KeptRegion[] = [];
  const both: KeptRegion[] = [];
  for (const [key, r] of ma.kept) {
    if (mb.kept.has(key)) both.push({ ...r, other: mb.kept.get(key)!.node });
    else onlyA.push({ ...r, ...(mb.all.has(key) ? { other: mb.all.get(key)! } : {}) });
  }
  const onlyB: KeptRegion[] = [];
  for (const [key, r] of mb.kept) if (!ma.kept.has(key)) onlyB.push({ ...r, ...(ma.all.has(key) ? { other: ma.all.get(key)! } : {}) });

  const itemInfo = (t: AskTrace) => {
    const m = new Map<string, { title: string; rank: number; fused: number; kept: number }>();
    for (const r of t.rounds) for (const i of r.retrieved) if (!m.has(i.itemId)) m.set(i.itemId, { title: i.title, rank: i.rank, fused: i.scores.fused, kept: i.tokens.kept });
    return m;
  };
  const ia = itemInfo(a);
  const ib = itemInfo(b);
  const items = [...new Set([...ia.keys(), ...ib.keys()])].map((itemId) => {
    const x = ia.get(itemId);
    const y = ib.get(itemId);
    return {
      itemId,
      title: (x ?? y)!.title,
      ...(x ? { a: { rank: x.rank, fused: x.fused, kept: x.kept } } : {}),
      ...(y ? { b: { rank: y.rank, fused: y.fused, kept: y.kept } } : {}),
    };
  });
  const s = (t: AskTrace) => ({
    k: String(t.settings.topK),
    rounds: String(t.settings.maxRounds),
    B: String(t.settings.branchingFactor),
    compressor: JSON.stringify(t.settings.compressor),
    critic: t.settings.critic,
    reader: t.settings.reader,
    encoder: t.settings.encoderId,
  });
  const sa = s(a);
  const sb = s(b);
  const settings = Object.keys(sa)
    .filter((k) => sa[k as keyof typeof sa] !== sb[k as keyof typeof sb])
    .map((name) => ({ name, a: sa[name as keyof typeof sa], b: sb[name as keyof typeof sb] }));
  return {
    onlyA,
    onlyB,
    both,
    tokens: { a: a.totals.evidenceTokens, b: b.totals.evidenceTokens },
    uncompressed: { a: a.totals.uncompressedTokens, b: b.totals.uncompressedTokens },
    items,
    settings,
  };
}

export class CompareView {
  readonly element = el('div', { class: 'canopy-compare-view' });
  private readonly picker = el('div', { class: 'canopy-toolbar', role: 'toolbar', 'aria-label': 'Compare with' });
  private readonly result = el('div', { class: 'canopy-compare-result', 'aria-live': 'polite' });
  private other: AskTrace | undefined;

  constructor(private readonly ctx: InspectorContext) {
    this.element.append(this.picker, this.result);
    this.result.append(emptyState('Nothing to compare yet.', 'Pick another answer to this or another question, or replay this one with other settings: the kept-set diff, token and score deltas appear here.'));
  }

  /** Fills the picker from the saved traces (on first open). */
  async start(): Promise<void> {
    let traces: TraceSummary[];
    try {
      traces = (await this.ctx.request('traces/list', {})).traces;
    } catch (err) {
      this.picker.replaceChildren(el('p', { class: 'canopy-muted' }, `Saved traces are not available: ${(err as Error).message}`));
      return;
    }
    const current = this.ctx.model.trace.id;
    const others = traces.filter((t) => t.id !== current);
    if (others.length === 0) {
      this.picker.replaceChildren(el('p', { class: 'canopy-muted' }, 'No other saved answer to compare with.'));
      return;
    }
    const pick = ce('vscode-single-select', { 'aria-label': 'Trace to compare with', class: 'canopy-compare-picker' }) as HTMLElement & { value: string };
    pick.append(ce('vscode-option', { value: '' }, 'Compare with…'));
    for (const t of others) {
      const label = `${t.createdAt.replace('T', ' ').slice(0, 19)} — ${clip(t.question, 60)}${t.replayOf ? ' (replay)' : ''} · ${t.evidenceTokens} tok`;
      pick.append(ce('vscode-option', { value: t.name, selected: this.other?.id === t.id }, label));
    }
    pick.addEventListener('change', async () => {
      if (!pick.value) return;
      try {
        const { trace } = await this.ctx.request('traces/get', { name: pick.value });
        this.compareWith(trace);
      } catch (err) {
        this.ctx.error(`Could not load that trace: ${(err as Error).message}`);
      }
    });
    this.picker.replaceChildren(pick);
  }

  compareWith(other: AskTrace): void {
    this.other = other;
    const a = this.ctx.model.trace;
    const d = diffTraces(a, other);
    const heading = (t: AskTrace, name: string) =>
      el('div', { class: 'canopy-compare-side' }, el('strong', {}, name), ` ${t.createdAt.replace('T', ' ').slice(0, 19)}${t.replay ? ' (replay)' : ''}: `, clip(t.question, 80));
    const totals = el('table', { class: 'canopy-table canopy-compare-totals' });
    totals.append(el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', { class: 'canopy-num' }, 'A (shown)'), el('th', { class: 'canopy-num' }, 'B'), el('th', { class: 'canopy-num' }, 'B − A'))));
    const tb = el('tbody');
    const line = (name: string, x: number, y: number) =>
      tb.append(el('tr', {}, el('th', { scope: 'row' }, name), el('td', { class: 'canopy-num' }, fmtInt(x)), el('td', { class: 'canopy-num' }, fmtInt(y)), el('td', { class: 'canopy-num' }, fmtDelta(y - x, 0))));
    line('Evidence tokens', d.tokens.a, d.tokens.b);
    line('Uncompressed tokens', d.uncompressed.a, d.uncompressed.b);
    line('Kept regions', d.onlyA.length + d.both.length, d.onlyB.length + d.both.length);
    line('Rounds', a.rounds.length, other.rounds.length);
    totals.append(tb);

    const settings =
      d.settings.length === 0
        ? el('p', { class: 'canopy-muted' }, 'Same settings.')
        : el(
            'table',
            { class: 'canopy-table canopy-compare-settings' },
            el('thead', {}, el('tr', {}, el('th', {}, 'Setting'), el('th', {}, 'A'), el('th', {}, 'B'))),
            el('tbody', {}, ...d.settings.map((s) => el('tr', {}, el('th', { scope: 'row' }, s.name), el('td', {}, s.a), el('td', {}, s.b)))),
          );

    const regionList = (title: string, cls: string, regions: Array<{ node: TraceNode; other?: TraceNode }>, selectable: boolean) => {
      const section = el('section', { class: `canopy-diff ${cls}`, 'aria-label': title }, el('h4', {}, `${title} (${regions.length})`));
      if (regions.length === 0) {
        section.append(el('p', { class: 'canopy-muted' }, 'None.'));
        return section;
      }
      const ul = el('ul', { class: 'canopy-diff-list' });
      for (const r of regions.slice(0, 300)) {
        const sa = cls === 'only-b' ? r.other?.score : r.node.score;
        const sb = cls === 'only-b' ? r.node.score : r.other?.score;
        const text = `${r.node.kind} · ${placeLabel(r.node.anchor)} — ${clip(nodeText(r.node), 100)}`;
        const scores = el('span', { class: 'canopy-diff-scores' }, `A ${fmtScore(sa)} · B ${fmtScore(sb)}${sa !== undefined && sb !== undefined ? ` (${fmtDelta(sb - sa)})` : ''}`);
        const label = selectable && this.ctx.model.ref(r.node.id) ? button(text, () => this.ctx.selectNode(r.node.id), { class: 'canopy-link' }) : el('span', {}, text);
        ul.append(el('li', {}, label, ' ', scores));
      }
      if (regions.length > 300) ul.append(el('li', { class: 'canopy-muted' }, `… and ${regions.length - 300} more`));
      section.append(ul);
      return section;
    };

    const items = el('table', { class: 'canopy-table canopy-compare-items' });
    items.append(
      el(
        'thead',
        {},
        el('tr', {}, el('th', {}, 'Item'), el('th', { class: 'canopy-num' }, 'Rank A → B'), el('th', { class: 'canopy-num' }, 'Fused A → B'), el('th', { class: 'canopy-num' }, 'Kept tokens A → B')),
      ),
    );
    const ib = el('tbody');
    for (const it of d.items) {
      ib.append(
        el(
          'tr',
          {},
          el('td', {}, it.title),
          el('td', { class: 'canopy-num' }, `${it.a ? it.a.rank + 1 : '—'} → ${it.b ? it.b.rank + 1 : '—'}`),
          el('td', { class: 'canopy-num' }, `${fmtScore(it.a?.fused, 4)} → ${fmtScore(it.b?.fused, 4)}`),
          el('td', { class: 'canopy-num' }, `${it.a ? fmtInt(it.a.kept) : '—'} → ${it.b ? fmtInt(it.b.kept) : '—'}${it.a && it.b ? ` (${fmtDelta(it.b.kept - it.a.kept, 0)})` : ''}`),
        ),
      );
    }
    items.append(ib);

    this.result.replaceChildren(
      heading(a, 'A'),
      heading(other, 'B'),
      other.replay ? el('p', { class: 'canopy-muted' }, `B replays ${other.replay.of}: ${other.replay.notes.join('; ') || 'from the recorded scores'}`) : '',
      el('h4', {}, 'Totals'),
      totals,
      el('h4', {}, 'Settings'),
      settings,
      regionList('Kept only in A', 'only-a', d.onlyA, true),
      regionList('Kept only in B', 'only-b', d.onlyB, false),
      regionList('Kept in both', 'both', d.both, true),
      el('h4', {}, 'Items'),
      items,
      el('h4', {}, 'Answers'),
      el('div', { class: 'canopy-compare-answers' }, el('p', {}, el('strong', {}, 'A: '), a.answer.text), el('p', {}, el('strong', {}, 'B: '), other.answer.text)),
    );
    this.result.dataset.compared = other.id;
  }
}
