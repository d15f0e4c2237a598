/**
 * The topics tab: the topic compass (MCompassRAG, design §4) per round — the topics selected for
 * the query with their weights, and how much the topic signal moved each chunk (score without
 * and with topics, rank before and after), and why the compass is on or off for this question.
 * Shows an empty state (with that reason) until retrieval uses topics.
 */
import type { TraceRound } from '../../src/contracts/trace';
import type { InspectorContext } from '../context';
import { button, el, emptyState, fmtDelta, fmtScore, unit } from '../dom';

export function renderTopics(ctx: InspectorContext): HTMLElement {
  const rounds = ctx.model.trace.rounds.filter((r) => r.topics);
  // Why the compass is on or off for this question (the index's grain and the scorer's held-back figure, or the setting).
  const reason = ctx.model.trace.settings.retrieval?.topicsReason;
  if (rounds.length === 0) {
    const state = emptyState(
      'No topic compass in this trace.',
      `Topic-aware retrieval is ${ctx.model.trace.settings.retrieval?.topics ? 'on but recorded nothing for these rounds' : 'off for this trace'}. When it runs, the topics selected for each query, their weights and how much they lifted each chunk appear here.`,
    );
    if (reason) state.append(el('p', { class: 'canopy-topics-reason' }, `Why: ${reason}.`));
    return state;
  }
  return el('div', { class: 'canopy-topics-view' }, ...(reason ? [el('p', { class: 'canopy-topics-reason canopy-muted' }, `Why: ${reason}.`)] : []), ...rounds.map((r) => topicRound(ctx, r)));
}

function topicRound(ctx: InspectorContext, r: TraceRound): HTMLElement {
  const t = r.topics!;
  const maxWeight = Math.max(1e-9, ...t.selected.map((s) => Math.abs(s.weight)));
  const topics = el('table', { class: 'canopy-table canopy-topic-table' });
  topics.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Topic'), el('th', { scope: 'col' }, 'Weight'), el('th', { scope: 'col' }, 'Terms'))));
  const tb = el('tbody');
  for (const s of [...t.selected].sort((a, b) => b.weight - a.weight)) {
    const bar = el('div', { class: 'canopy-weight-fill' });
    bar.style.width = `${(100 * unit(Math.abs(s.weight) / maxWeight)).toFixed(1)}%`;
    tb.append(
      el(
        'tr',
        {},
        el('td', {}, `#${s.topic} ${s.label}`),
        el('td', { class: 'canopy-num' }, el('div', { class: 'canopy-weight', role: 'img', 'aria-label': `weight ${fmtScore(s.weight)}` }, bar), fmtScore(s.weight)),
        el('td', { class: 'canopy-muted' }, (s.terms ?? []).join(', ')),
      ),
    );
  }
  topics.append(tb);

  const lift = el('table', { class: 'canopy-table canopy-lift-table' });
  lift.append(
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Chunk'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'Without topics'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'With topics'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'Lift'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'Rank'),
      ),
    ),
  );
  const lb = el('tbody');
  const titles = new Map(r.retrieved.map((i) => [i.itemId, i.title]));
  for (const l of [...t.lift].sort((a, b) => Math.abs(b.withTopics - b.base) - Math.abs(a.withTopics - a.base))) {
    const d = l.withTopics - l.base;
    const target = l.nodeId && ctx.model.ref(l.nodeId) ? l.nodeId : ctx.model.entryOfItem(l.itemId)?.tree.id;
    const name = titles.get(l.itemId) ?? l.itemId;
    const cell = target ? button(name, () => ctx.selectNode(target), { class: 'canopy-link' }) : el('span', {}, name);
    lb.append(
      el(
        'tr',
        { class: d > 0 ? 'canopy-up' : d < 0 ? 'canopy-down' : '' },
        el('td', {}, cell),
        el('td', { class: 'canopy-num' }, fmtScore(l.base, 4)),
        el('td', { class: 'canopy-num' }, fmtScore(l.withTopics, 4)),
        el('td', { class: 'canopy-num' }, fmtDelta(d, 4)),
        el('td', { class: 'canopy-num' }, l.rankBefore !== undefined && l.rankAfter !== undefined ? `${l.rankBefore + 1} → ${l.rankAfter + 1}` : '—'),
      ),
    );
  }
  lift.append(lb);
  return el(
    'section',
    { class: 'canopy-topic-round', 'aria-label': `Topics, round ${r.round}` },
    el('h3', {}, `Round ${r.round}: ${t.selected.length} of ${t.k} topics selected${t.selectedEntries !== undefined ? ` from ${t.selectedEntries} bank entries` : ''}`),
    // Narrow views scroll the tables sideways rather than cut columns off.
    el('div', { class: 'canopy-table-scroll' }, topics),
    el('h4', {}, 'Per-chunk lift'),
    el('div', { class: 'canopy-table-scroll' }, lift),
  );
}
