// A table's lead-in (the paragraph just before it) in the controller: it counts toward the
// table's relevance, and opening it opens the table it introduces, read whole.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { DocumentView } from '../../../src/core/controller/documentView';
import { RelevanceModel } from '../../../src/core/controller/relevance';
import { buildEvidenceSubgraph } from '../../../src/core/controller/subgraph';
import { buildFixtureDoc, elementId, hashDeps } from './fixtureDoc';
import { pick, runScripted, ScriptedEvaluator, setup } from './scripted';

describe('controller: a table and its lead-in', () => {
  it('takes the paragraph just before a table as its lead-in, and nothing for other elements', async () => {
    const doc = await buildFixtureDoc();
    const view = await DocumentView.of(doc);
    const table = elementId(doc, 'Products | 70');
    const lead = elementId(doc, 'Revenue grew to 120 million');
    assert.equal(view.leadIn(table)?.id, lead);
    assert.equal(view.tableAfter(lead)?.id, table);
    assert.equal(view.leadIn(lead), undefined, 'a paragraph has no lead-in');
    // The first table of page 4 follows a table, not a paragraph.
    assert.equal(view.leadIn(elementId(doc, 'Net cash used in investing')), undefined);
  });

  it("counts the lead-in's words toward the table's lexical relevance", async () => {
    const doc = await buildFixtureDoc();
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create('How much did revenue grow in the services segment?', view, hashDeps());
    const table = elementId(doc, 'Products | 70');
    // The table itself names neither revenue nor growth; its lead-in names both.
    assert.ok(relevance.lexical(table) >= relevance.lexical(elementId(doc, 'Revenue grew to 120 million')) - 1e-9, `table ${relevance.lexical(table)}`);
  });

  it('opens the table after an opened lead-in, in the same iteration, and reads it whole', async () => {
    const s = await setup({ initialPages: 2 }, undefined, 'How much did revenue grow?');
    const lead = elementId(s.doc, 'Revenue grew to 120 million');
    const table = elementId(s.doc, 'Products | 70');
    const script = () =>
      new ScriptedEvaluator([
        // The lead-in's page is an entry page (or becomes active now); then the lead-in is activated and opened.
        (input) => ({
          picks: [input.candidates.some((c) => c.targetId === lead) ? pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === lead) : pick(input, (c) => c.action.type === 'ACTIVATE_PAGE' && c.page === 1)],
        }),
        (input) => ({ picks: input.state.stateOf(lead) === 'active' ? [] : [pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === lead)] }),
        (input) => ({ picks: [pick(input, (c) => c.action.type === 'OPEN_NODE' && c.targetId === lead)] }),
        () => ({ stop: { reason: 'enough' } }),
      ]);
    const run = await runScripted(s, script(), 'How much did revenue grow?');
    assert.equal(run.state.stateOf(table), 'opened');
    assert.ok(run.readWhole.has(table));
    const open = run.steps.find((st) => st.action.type === 'OPEN_NODE' && st.action.nodeId === table)!;
    assert.equal(open.decidedBy, 'controller');
    assert.match(open.why!, /lead-in/);
    assert.equal(run.validationErrors.length, 0);

    const result = await buildEvidenceSubgraph('How much did revenue grow?', s.doc, { ...hashDeps(), tokens: bpeTokenCounter(), evaluator: script() }, { initialPages: 2 });
    assert.deepEqual(result.openedNodeIds, [lead, table]);
    const kept = result.regions.filter((r) => r.graphNodeId === table);
    assert.ok(kept.length === 1 && kept[0]!.node.kind === 'table', 'the table is read whole');
    assert.equal(kept[0]!.element.leadIn, 'Revenue grew to 120 million in 2023. Growth came from the services segment.');
  });
});
