/**
 * The rounds tab: a timeline of the retrieval rounds. Per round: the query, the routing, the
 * retrieved items with their score components (dense, BM25, fused scores and ranks), which
 * items were new and what they added, the critic's verdict, what it found missing and the
 * follow-up query that became the next round's query. Items open in the evidence tree.
 */
import type { TraceRound } from '../../src/contracts/trace';
import type { InspectorContext } from '../context';
import { button, el, fmtInt, fmtScore } from '../dom';
import { keptTokens } from '../model';
import { plainLabel } from '../text';
import { renderCriticCard, stopReasonText } from './critic';

export function renderRounds(ctx: InspectorContext): HTMLElement {
  const trace = ctx.model.trace;
  const list = el('ol', { class: 'canopy-timeline', 'aria-label': 'Rounds' });
  for (const r of trace.rounds) list.append(roundCard(ctx, r));
  const stop = el(
    'p',
    { class: 'canopy-stop' },
    el('strong', {}, `Stopped after round ${trace.stop.round}: ${trace.stop.reason}. `),
    trace.stop.note,
    // The one stop a note does not explain by itself.
    trace.stop.reason === 'replay-diverged' ? ` (${stopReasonText['replay-diverged']})` : '',
  );
  return el('div', { class: 'canopy-rounds-view' }, list, stop);
}

function rankCell(score: number | undefined, rank: number | undefined): HTMLElement {
  if (score === undefined) return el('td', { class: 'canopy-num canopy-muted' }, '—');
  return el('td', { class: 'canopy-num' }, fmtScore(score), el('span', { class: 'canopy-rank' }, rank === undefined ? '' : ` #${rank + 1}`));
}

function roundCard(ctx: InspectorContext, r: TraceRound): HTMLElement {
  const added = new Set(r.addedItemIds);
  const addedTokens = r.retrieved.filter((i) => added.has(i.itemId)).reduce((a, i) => a + i.tokens.kept, 0);
  const card = el('li', { class: 'canopy-round', 'data-round': String(r.round), 'aria-label': `Round ${r.round}` });
  card.append(
    el('div', { class: 'canopy-round-marker', 'aria-hidden': 'true' }, String(r.round)),
    el('h3', {}, `Round ${r.round}${r.round === 1 ? ' — the question' : ' — follow-up'}`),
    el('p', { class: 'canopy-query' }, el('span', { class: 'canopy-label' }, 'Query '), el('q', {}, r.query)),
    el(
      'p',
      { class: 'canopy-routing canopy-muted' },
      `Routing (${r.routing.source}): ${r.routing.aggregate ? 'aggregate — tables kept whole' : 'lookup — rows pruned'}; modalities ${r.routing.modalities.join(', ')}. ${r.routing.reason}`,
    ),
  );

  // The flat BM25 column only when the fusion used that list (a profile with a flat weight).
  const flat = r.retrieved.some((i) => i.scores.bm25Flat !== undefined);
  const table = el('table', { class: 'canopy-table canopy-retrieved' });
  table.append(
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, '#'),
        el('th', { scope: 'col' }, 'Item'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'Dense'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'BM25'),
        ...(flat ? [el('th', { scope: 'col', class: 'canopy-num' }, 'BM25 flat')] : []),
        el('th', { scope: 'col', class: 'canopy-num' }, 'Fused'),
        el('th', { scope: 'col', class: 'canopy-num' }, 'Kept / whole tokens'),
        el('th', { scope: 'col' }, 'Status'),
      ),
    ),
  );
  const body = el('tbody');
  for (const it of r.retrieved) {
    const entry = ctx.model.entryOfItem(it.itemId);
    const open = button(plainLabel(entry ? ctx.model.displayTitle(entry) : it.title), () => entry && ctx.selectNode(entry.tree.id), {
      class: 'canopy-link canopy-item-link',
      title: `${it.file} — show its hierarchy`,
      'data-item': it.itemId,
    });
    if (!entry) open.disabled = true;
    body.append(
      el(
        'tr',
        { class: it.repeated ? 'canopy-repeated' : added.has(it.itemId) ? 'canopy-added' : '' },
        el('td', { class: 'canopy-num' }, String(it.rank + 1)),
        el(
          'td',
          {},
          open,
          el('div', { class: 'canopy-muted canopy-file' }, it.file),
          ...(it.scores.namedSource ? [el('div', { class: 'canopy-muted canopy-named', title: 'Ranked below k, taken into the top k because the question names its file' }, 'named by the question')] : []),
          ...(it.scores.titleMatch ? [el('div', { class: 'canopy-muted canopy-named', title: 'Taken first because its title names a thing the follow-up looks for' }, 'named by the follow-up')] : []),
        ),
        rankCell(it.scores.dense, it.scores.denseRank),
        rankCell(it.scores.bm25, it.scores.bm25Rank),
        ...(flat ? [rankCell(it.scores.bm25Flat, it.scores.bm25FlatRank)] : []),
        el('td', { class: 'canopy-num' }, fmtScore(it.scores.fused, 4)),
        el('td', { class: 'canopy-num' }, keptCell(it)),
        el('td', {}, it.repeated ? 'already held' : added.has(it.itemId) ? 'new' : '—'),
      ),
    );
  }
  table.append(body);
  // Narrow views scroll the table sideways (the item column stays in place) rather than cut columns off.
  card.append(el('div', { class: 'canopy-table-scroll', tabindex: '0', role: 'region', 'aria-label': `Items of round ${r.round}` }, table));
  card.append(
    el(
      'p',
      { class: 'canopy-added-summary' },
      r.addedItemIds.length === 0 ? 'This round added no new item.' : `Added ${r.addedItemIds.length} item(s), ${fmtInt(addedTokens)} kept tokens.`,
    ),
  );

  if (r.critic) card.append(renderCriticCard(ctx, r));
  else card.append(el('p', { class: 'canopy-muted' }, 'No critic verdict for this round.'));
  card.append(el('p', { class: 'canopy-muted canopy-ms' }, `${fmtInt(r.ms)} ms`));
  return card;
}

/** "120 / 400", or "900 (whole PDF)" for the item carrying the controller's regions. */
function keptCell(it: TraceRound['retrieved'][number]): string {
  const k = keptTokens(it);
  return k.whole === undefined ? `${fmtInt(k.kept)} (whole PDF)` : `${fmtInt(k.kept)} / ${fmtInt(k.whole)}`;
}
