// The evidence state's rules (design §7): activation needs an active page, only active elements
// open, pages never open, pruning a page takes its elements with it and keeps them out of the
// candidates, pruned pages stay pruned, FOLLOW_RELATION only proposes. A rejected action says
// why and changes nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateCandidates } from '../../../src/core/controller/candidates';
import { DocumentView } from '../../../src/core/controller/documentView';
import { EvidenceState } from '../../../src/core/controller/state';
import { buildFixtureDoc, elementId, pageId } from './fixtureDoc';

async function fresh() {
  const doc = await buildFixtureDoc();
  const view = await DocumentView.of(doc);
  return { doc, view, state: new EvidenceState(view) };
}

function snapshot(state: EvidenceState) {
  return JSON.stringify([state.touched(), [...state.proposals], [...state.followed]]);
}

describe('evidence state rules', () => {
  it('activates a page from inactive, and an element only while its page is active', async () => {
    const { doc, state } = await fresh();
    const table = elementId(doc, 'Purchases of property');
    const before = snapshot(state);
    const early = state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    assert.equal(early.ok, false);
    assert.match((early as { error: string }).error, /only be activated while its page is active/);
    assert.equal(snapshot(state), before, 'a rejected action changes nothing');

    const page = state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    assert.deepEqual(page, { ok: true, changes: [{ id: pageId(2), from: 'inactive', to: 'active' }] });
    const again = state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'adjacent' });
    assert.match((again as { error: string }).error, /already active/);
    const node = state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    assert.deepEqual(node, { ok: true, changes: [{ id: table, from: 'inactive', to: 'active' }] });
    assert.match((state.apply({ type: 'ACTIVATE_NODE', nodeId: pageId(3), source: 'page' }) as { error: string }).error, /is a page/);
  });

  it('opens only active elements and never a page', async () => {
    const { doc, state } = await fresh();
    const table = elementId(doc, 'Purchases of property');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    const openPage = state.apply({ type: 'OPEN_NODE', nodeId: pageId(2) });
    assert.match((openPage as { error: string }).error, /page nodes are never opened/);
    const openInactive = state.apply({ type: 'OPEN_NODE', nodeId: table });
    assert.match((openInactive as { error: string }).error, /is inactive; only active nodes can be opened/);
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    assert.deepEqual(state.apply({ type: 'OPEN_NODE', nodeId: table }), { ok: true, changes: [{ id: table, from: 'active', to: 'opened' }] });
    assert.match((state.apply({ type: 'OPEN_NODE', nodeId: table }) as { error: string }).error, /is opened; only active/);
    assert.deepEqual(state.counts(), { activePages: 1, activeElements: 0, opened: 1, pruned: 0 });
  });

  it('pruning a page prunes its active and opened elements and drops the rest from the candidates', async () => {
    const { doc, view, state } = await fresh();
    const heading = elementId(doc, 'Consolidated Statement');
    const para = elementId(doc, 'Cash flows from investing');
    const table = elementId(doc, 'Purchases of property');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: heading, source: 'page' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    state.apply({ type: 'OPEN_NODE', nodeId: table });
    const pruned = state.apply({ type: 'PRUNE_NODE', nodeId: pageId(2), reason: 'test' });
    assert.deepEqual(pruned, {
      ok: true,
      changes: [
        { id: pageId(2), from: 'active', to: 'pruned' },
        { id: heading, from: 'active', to: 'pruned' },
        { id: table, from: 'opened', to: 'pruned' },
      ],
    });
    assert.equal(state.stateOf(para), 'inactive', 'an element never activated stays inactive');
    const candidates = generateCandidates(view, state);
    assert.deepEqual(candidates, [], 'nothing of the pruned page (or anything else) is a candidate');
    const back = state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'search' });
    assert.match((back as { error: string }).error, /pruned pages stay out of the evidence/);
    const el = state.apply({ type: 'ACTIVATE_NODE', nodeId: para, source: 'page' });
    assert.match((el as { error: string }).error, /page .* is pruned/);
    assert.match((state.apply({ type: 'PRUNE_NODE', nodeId: para, reason: '' }) as { error: string }).error, /only active or opened nodes can be pruned/);
  });

  it('pruning an element leaves its page and siblings alone', async () => {
    const { doc, view, state } = await fresh();
    const heading = elementId(doc, 'Consolidated Statement');
    const table = elementId(doc, 'Purchases of property');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: heading, source: 'page' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    assert.deepEqual(state.apply({ type: 'PRUNE_NODE', nodeId: heading, reason: 'noise' }), { ok: true, changes: [{ id: heading, from: 'active', to: 'pruned' }] });
    assert.equal(state.stateOf(pageId(2)), 'active');
    assert.equal(state.stateOf(table), 'active');
    const types = generateCandidates(view, state).map((c) => `${c.action.type}:${c.targetId}`);
    assert.ok(!types.includes(`ACTIVATE_NODE:${heading}`), 'a pruned element is not offered again');
    assert.ok(types.includes(`OPEN_NODE:${table}`));
  });

  it('FOLLOW_RELATION proposes the target page (or element) and changes no state', async () => {
    const { doc, view, state } = await fresh();
    const table = elementId(doc, 'Purchases of property');
    const next = elementId(doc, 'Net cash used in investing');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    const fromInactive = state.apply({ type: 'FOLLOW_RELATION', from: table, to: next, relation: 'next' });
    assert.match((fromInactive as { error: string }).error, /followed from active or opened elements/);
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    // The two tables are on different pages, so never `near`. (They are `semantic` neighbours:
    // tables are encoded with their header, as the indexer encodes them, and both share one.)
    const wrong = state.apply({ type: 'FOLLOW_RELATION', from: table, to: next, relation: 'near' });
    assert.match((wrong as { error: string }).error, /no near relation/);
    const before = state.touched();
    const followed = state.apply({ type: 'FOLLOW_RELATION', from: table, to: next, relation: 'next' });
    assert.deepEqual(followed, { ok: true, changes: [], proposed: [{ type: 'ACTIVATE_PAGE', id: pageId(3) }] });
    assert.deepEqual(state.touched(), before);
    assert.deepEqual([...state.proposals], [[next, { from: table, relation: 'next' }]]);
    assert.match((state.apply({ type: 'FOLLOW_RELATION', from: table, to: next, relation: 'next' }) as { error: string }).error, /already followed/);
    // The proposal becomes an ACTIVATE_PAGE candidate, then an ACTIVATE_NODE one once the page is active.
    const c1 = generateCandidates(view, state).find((c) => c.action.type === 'ACTIVATE_PAGE' && c.targetId === pageId(3));
    assert.deepEqual(c1?.action, { type: 'ACTIVATE_PAGE', pageId: pageId(3), page: 3, source: 'relation-target' });
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(3), page: 3, source: 'relation-target' });
    const c2 = generateCandidates(view, state).find((c) => c.targetId === next && c.action.type === 'ACTIVATE_NODE');
    assert.deepEqual(c2?.action, { type: 'ACTIVATE_NODE', nodeId: next, source: 'relation' });
  });
});

describe('candidates', () => {
  it('come in a fixed order with 1-based indices: pages, nodes, opens, relations, prunes', async () => {
    const { doc, view, state } = await fresh();
    const table = elementId(doc, 'Purchases of property');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    const list = generateCandidates(view, state);
    assert.deepEqual(
      list.map((c) => c.index),
      list.map((_, i) => i + 1),
    );
    const order = ['ACTIVATE_PAGE', 'ACTIVATE_NODE', 'OPEN_NODE', 'FOLLOW_RELATION', 'PRUNE_NODE'];
    const ranks = list.map((c) => order.indexOf(c.action.type));
    assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b));
    assert.deepEqual(
      list.filter((c) => c.action.type === 'ACTIVATE_PAGE').map((c) => [c.targetId, (c.action as { source: string }).source]),
      [
        [pageId(1), 'adjacent'],
        [pageId(3), 'adjacent'],
      ],
    );
    // The table's next element is on page 4, which is already an adjacent candidate: a relation
    // to it is still offered (following it proposes that exact element).
    const follow = list.filter((c) => c.action.type === 'FOLLOW_RELATION');
    assert.ok(follow.every((c) => view.node(c.targetId)!.page !== 2), 'relations lead to other pages only');
    assert.ok(follow.some((c) => c.targetId === elementId(doc, 'Net cash used in investing')));
    assert.ok(list.every((c) => c.preview.length > 0 && c.preview.length <= 160));
  });
});
