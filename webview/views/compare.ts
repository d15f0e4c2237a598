/**
 * The compare tab: two traces side by side — settings that differ, token totals, the kept-set
 * diff (regions kept only by A, only by B, by both; matched by source anchor so that traces with
 * another B still line up) with each region's score in both, and per-item rank and score deltas.
 * A is always the original or earlier answer and B the other one (a replay is B of the answer it
 * replays, whichever of the two is shown), so every delta reads "B − A". The other answer is
 * picked from the saved traces (listed with their whole question and time), or set by a replay
 * or the Questions view.
 */
import type { AskTrace, TraceNode } from '../../src/contracts/trace';
import type { TraceSummary } from '../../src/contracts/savedTrace';
import type { InspectorContext } from '../context';
import { button, clip, el, emptyState, fmtDelta, fmtInt, fmtScore } from '../dom';
import { TraceModel, nodeText, placeLabel, regionKey } from '../model';
import { plainLabel, plainText } from '../text';

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
    // What `canopy train` changes besides the gate: the adapter, the node score, the reader model.
    adapter: t.settings.adapterId ?? 'none',
    'node score': t.settings.nodeScore ? `${t.settings.nodeScore.dense} × dense + ${t.settings.nodeScore.lexical} × lexical${t.settings.nodeScore.model ? ` (${t.settings.nodeScore.model})` : ''}` : 'dense cosine',
    'reader model': t.settings.readerModel ?? '—',
    retrieval: `${t.settings.retrieval.fusion}${t.settings.retrieval.topics ? ' + topic compass' : ''}`,
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

/**
 * Which of two answers is A (the original or earlier one) and which is B: a replay is B of the
 * answer it replays; otherwise the earlier by `createdAt` is A.
 */
export function orderPair(x: AskTrace, y: AskTrace): { a: AskTrace; b: AskTrace } {
  if (y.replay?.of === x.id) return { a: x, b: y };
  if (x.replay?.of === y.id) return { a: y, b: x };
  return Date.parse(x.createdAt) <= Date.parse(y.createdAt) ? { a: x, b: y } : { a: y, b: x };
}

/** A whole number with separators and its sign: "+1,204", "-2,376", "0". */
export function fmtSignedInt(v: number): string {
  if (!Number.isFinite(v)) return '—';
  const n = Math.round(v);
  return n > 0 ? `+${fmtInt(n)}` : fmtInt(n);
}

/** "2026-12-06 23:35:02" from an ISO time. */
export function fmtTime(iso: string): string {
  return iso.replace('T', ' ').slice(0, 19);
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
    // Every saved answer with its time and whole question (wrapping, never cut), newest first.
    const pick = el('ul', { class: 'canopy-compare-picker', 'aria-label': 'Compare with a saved answer' });
    for (const t of others) {
      const b = button('', async () => {
        for (const x of pick.querySelectorAll('button[aria-pressed]')) x.setAttribute('aria-pressed', 'false');
        b.setAttribute('aria-pressed', 'true');
        try {
          const { trace } = await this.ctx.request('traces/get', { name: t.name });
          this.compareWith(trace);
        } catch (err) {
          this.ctx.error(`Could not load that trace: ${(err as Error).message}`);
        }
      }, { class: 'canopy-compare-pick', 'data-name': t.name, 'aria-pressed': String(this.other?.id === t.id) });
      b.append(
        el('span', { class: 'canopy-compare-pick-time' }, `${fmtTime(t.createdAt)}${t.replayOf ? ' · replay' : ''} · ${fmtInt(t.evidenceTokens)} tok`),
        el('span', { class: 'canopy-compare-pick-question' }, t.question),
      );
      pick.append(el('li', {}, b));
    }
    this.picker.replaceChildren(el('p', { class: 'canopy-label' }, 'Compare with a saved answer:'), pick);
  }

  compareWith(other: AskTrace): void {
    this.other = other;
    const shown = this.ctx.model.trace;
    const { a, b } = orderPair(shown, other);
    const d = diffTraces(a, b);
    const side = (t: AskTrace) => (t === shown ? ' (shown)' : '');
    const role = (t: AskTrace) =>
      t.replay ? (t.replay.of === a.id ? 'a replay of A' : `a replay of ${t.replay.of}`) : t === a ? (b.replay?.of === a.id ? 'the original' : 'the earlier answer') : 'the later answer';
    const heading = (t: AskTrace, name: string) =>
      el('div', { class: 'canopy-compare-side', 'data-side': name, 'data-trace': t.id }, el('strong', {}, `${name}${side(t)}`), ` ${role(t)}, ${fmtTime(t.createdAt)}: `, t.question);
    const totals = el('table', { class: 'canopy-table canopy-compare-totals' });
    totals.append(el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', { class: 'canopy-num' }, `A${side(a)}`), el('th', { class: 'canopy-num' }, `B${side(b)}`), el('th', { class: 'canopy-num' }, 'B − A'))));
    const tb = el('tbody');
    const line = (name: string, x: number, y: number) =>
      tb.append(el('tr', {}, el('th', { scope: 'row' }, name), el('td', { class: 'canopy-num' }, fmtInt(x)), el('td', { class: 'canopy-num' }, fmtInt(y)), el('td', { class: 'canopy-num' }, fmtSignedInt(y - x))));
    line('Evidence tokens', d.tokens.a, d.tokens.b);
    line('Uncompressed tokens', d.uncompressed.a, d.uncompressed.b);
    line('Kept regions', d.onlyA.length + d.both.length, d.onlyB.length + d.both.length);
    line('Rounds', a.rounds.length, b.rounds.length);
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

    // A region opens in the tree when it is a region of the shown answer.
    const regionList = (title: string, cls: string, regions: KeptRegion[], fromA: boolean) => {
      const section = el('section', { class: `canopy-diff ${cls}`, 'aria-label': title }, el('h4', {}, `${title} (${regions.length})`));
      if (regions.length === 0) {
        section.append(el('p', { class: 'canopy-muted' }, 'None.'));
        return section;
      }
      const ul = el('ul', { class: 'canopy-diff-list' });
      for (const r of regions.slice(0, 300)) {
        const sa = fromA ? r.node.score : r.other?.score;
        const sb = fromA ? r.other?.score : r.node.score;
        const inShown = (fromA ? a : b) === shown ? r.node : r.other;
        const text = `${r.node.kind} · ${placeLabel(r.node.anchor)} — ${clip(plainLabel(nodeText(r.node)), 100)}`;
        const scores = el('span', { class: 'canopy-diff-scores' }, `A ${fmtScore(sa)} · B ${fmtScore(sb)}${sa !== undefined && sb !== undefined ? ` (B − A ${fmtDelta(sb - sa)})` : ''}`);
        const label = inShown && this.ctx.model.ref(inShown.id) ? button(text, () => this.ctx.selectNode(inShown.id), { class: 'canopy-link' }) : el('span', {}, text);
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
          el('td', {}, plainLabel(it.title)),
          el('td', { class: 'canopy-num' }, `${it.a ? it.a.rank + 1 : '—'} → ${it.b ? it.b.rank + 1 : '—'}`),
          el('td', { class: 'canopy-num' }, `${fmtScore(it.a?.fused, 4)} → ${fmtScore(it.b?.fused, 4)}`),
          el('td', { class: 'canopy-num' }, `${it.a ? fmtInt(it.a.kept) : '—'} → ${it.b ? fmtInt(it.b.kept) : '—'}${it.a && it.b ? ` (${fmtSignedInt(it.b.kept - it.a.kept)})` : ''}`),
        ),
      );
    }
    items.append(ib);

    const replayNote = (t: AskTrace, name: string) =>
      t.replay ? el('p', { class: 'canopy-muted' }, `${name} replays ${t.replay.of}: ${t.replay.notes.join('; ') || 'from the recorded scores'}`) : '';
    this.result.replaceChildren(
      heading(a, 'A'),
      heading(b, 'B'),
      replayNote(a, 'A'),
      replayNote(b, 'B'),
      el('h4', {}, 'Totals'),
      el('div', { class: 'canopy-table-scroll' }, totals),
      el('h4', {}, 'Settings'),
      settings,
      regionList('Kept only in A', 'only-a', d.onlyA, true),
      regionList('Kept only in B', 'only-b', d.onlyB, false),
      regionList('Kept in both', 'both', d.both, true),
      el('h4', {}, 'Items'),
      el('div', { class: 'canopy-table-scroll' }, items),
      el('h4', {}, 'Answers'),
      el('div', { class: 'canopy-compare-answers' }, el('p', {}, el('strong', {}, 'A: '), plainText(a.answer.text)), el('p', {}, el('strong', {}, 'B: '), plainText(b.answer.text))),
    );
    this.result.dataset.compared = other.id;
  }
}
