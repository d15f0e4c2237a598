/**
 * Candidate actions for one iteration, generated from the evidence state alone, in a fixed
 * order (so indices are reproducible): ACTIVATE_PAGE, ACTIVATE_NODE, OPEN_NODE,
 * FOLLOW_RELATION, PRUNE_NODE. Each gets a 1-based index — the LLM evaluator picks by index and
 * never copies ids. SEARCH_EVIDENCE and STOP are not candidates: the evaluator asks for them.
 *
 *   ACTIVATE_PAGE   pages proposed by a search hit (source `search`) or a followed relation
 *                   (`relation-target`), and the neighbours of active pages (`adjacent`)
 *   ACTIVATE_NODE   inactive elements of active pages (source `search`/`relation` when a
 *                   search or a followed relation pointed at them, else `page`)
 *   OPEN_NODE       active elements
 *   FOLLOW_RELATION relations from active or opened elements to elements on inactive pages
 *                   that nothing proposed yet (targets on active pages are already
 *                   ACTIVATE_NODE candidates, so following an edge there would add nothing)
 *   PRUNE_NODE      active pages, active and opened elements
 */
import type { DocumentView } from './documentView';
import type { EvidenceState } from './state';
import type { ControllerAction } from './trace';

export type CandidateAction = Exclude<ControllerAction, { type: 'STOP' } | { type: 'SEARCH_EVIDENCE' }>;

export interface Candidate {
  /** 1-based position in this iteration's list. */
  index: number;
  action: CandidateAction;
  /** The node the action is about (FOLLOW_RELATION: its target; ACTIVATE_PAGE: the page). */
  targetId: string;
  /** 0-based page of the target. */
  page: number;
  /** What the evaluator sees of the target: its summary (tables: header and first rows), clipped. */
  preview: string;
  /** ACTIVATE_PAGE from a search hit or relation: the element that made the page a candidate. */
  via?: string;
}

const previewChars = 160;

function clip(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= previewChars ? t : `${t.slice(0, previewChars - 1)}…`;
}

export function generateCandidates(view: DocumentView, state: EvidenceState): Candidate[] {
  const out: Omit<Candidate, 'index'>[] = [];
  // A table's summary is its header row: its first rows say more about what it holds.
  const summary = (id: string) => {
    const n = view.node(id);
    return clip(n?.type === 'table' ? `${n.summary} — ${n.text}` : (n?.summary ?? ''));
  };

  // ACTIVATE_PAGE: search hits, then relation targets, then neighbours; one candidate per page.
  const pages = new Set<string>();
  const pageCandidate = (pageId: string, source: 'search' | 'relation-target' | 'adjacent', via?: string) => {
    const page = view.node(pageId);
    if (!page || pages.has(pageId) || state.stateOf(pageId) !== 'inactive') return;
    pages.add(pageId);
    out.push({
      action: { type: 'ACTIVATE_PAGE', pageId, page: page.page, source },
      targetId: pageId,
      page: page.page,
      preview: via ? summary(via) : summary(pageId),
      ...(via ? { via } : {}),
    });
  };
  for (const id of state.searchHits.keys()) pageCandidate(view.pageOf(id)!.id, 'search', id);
  for (const id of state.proposals.keys()) pageCandidate(view.pageOf(id)!.id, 'relation-target', id);
  for (const pageId of state.activePages()) {
    const p = view.node(pageId)!.page;
    for (const q of [p - 1, p + 1]) {
      const adj = view.page(q);
      if (adj) pageCandidate(adj.id, 'adjacent');
    }
  }

  // ACTIVATE_NODE: inactive elements of active pages.
  for (const pageId of state.activePages()) {
    for (const e of view.elementsOn(pageId)) {
      if (state.stateOf(e.id) !== 'inactive') continue;
      const source = state.searchHits.has(e.id) ? 'search' : state.proposals.has(e.id) ? 'relation' : 'page';
      out.push({ action: { type: 'ACTIVATE_NODE', nodeId: e.id, source }, targetId: e.id, page: e.page, preview: summary(e.id) });
    }
  }

  // OPEN_NODE: active elements.
  const active = state.elementsIn('active');
  for (const id of active) out.push({ action: { type: 'OPEN_NODE', nodeId: id }, targetId: id, page: view.node(id)!.page, preview: summary(id) });

  // FOLLOW_RELATION: edges to elements on inactive pages, one per target.
  const targets = new Set<string>();
  for (const from of [...active, ...state.elementsIn('opened')].sort((a, b) => view.readingOrder(a) - view.readingOrder(b))) {
    for (const r of view.relationsFrom(from)) {
      const page = view.pageOf(r.to);
      if (!page || state.stateOf(page.id) !== 'inactive' || state.stateOf(r.to) !== 'inactive') continue;
      if (targets.has(r.to) || state.proposals.has(r.to) || state.searchHits.has(r.to) || state.followed.has(`${from}>${r.to}`)) continue;
      targets.add(r.to);
      out.push({ action: { type: 'FOLLOW_RELATION', from, to: r.to, relation: r.type }, targetId: r.to, page: page.page, preview: summary(r.to) });
    }
  }

  // PRUNE_NODE: active pages, then active and opened elements.
  for (const pageId of state.activePages()) out.push({ action: { type: 'PRUNE_NODE', nodeId: pageId, reason: '' }, targetId: pageId, page: view.node(pageId)!.page, preview: summary(pageId) });
  for (const id of [...active, ...state.elementsIn('opened')].sort((a, b) => view.readingOrder(a) - view.readingOrder(b))) {
    out.push({ action: { type: 'PRUNE_NODE', nodeId: id, reason: '' }, targetId: id, page: view.node(id)!.page, preview: summary(id) });
  }

  return out.map((c, i) => ({ ...c, index: i + 1 }));
}
