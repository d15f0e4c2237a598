// The controller loop on the fixture graph, driven by a scripted evaluator: every action type,
// every budget limit, both stop paths (the evaluator's STOP and budget exhaustion), invalid
// actions recorded without changing the state, and the trace each step leaves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CanopyError, CancelledError } from '../../../src/core/errors';
import { resolveControllerOptions } from '../../../src/core/controller/options';
import type { ControllerStep } from '../../../src/core/controller/trace';
import { buildFixtureDoc, elementId, pageId } from './fixtureDoc';
import { pick, runScripted, ScriptedEvaluator, setup } from './scripted';

const kinds = (steps: ControllerStep[]) => steps.map((s) => `${s.iteration}:${s.action.type}${s.valid ? '' : '!'}`);

describe('controller: actions', () => {
  it('activates the entry pages first: the best of page grounding, at most initialPages', async () => {
    const s = await setup({ initialPages: 3 });
    const run = await runScripted(s, new ScriptedEvaluator([() => ({ stop: { reason: 'enough' } })]));
    const entry = run.steps.filter((st) => st.iteration === 0);
    assert.equal(entry.length, 3);
    assert.ok(entry.every((st) => st.action.type === 'ACTIVATE_PAGE' && st.action.source === 'initial' && st.decidedBy === 'grounding' && st.valid));
    assert.equal((entry[0]!.action as { pageId: string }).pageId, pageId(2), 'the cash-flow page grounds best');
    assert.equal(entry[0]!.utility, 1);
    assert.ok(entry[1]!.utility! <= 1 && entry[2]!.utility! <= entry[1]!.utility!);
    assert.match(entry[0]!.why!, /^grounding rank 1, no question term in the page head, best element BM25 [\d.]+ \(#1\), dense [\d.]+ \(#1\)$/);
    assert.deepEqual(run.stop, { reason: 'evaluator-stop', iteration: 1, note: 'enough' });
    const last = run.steps.at(-1)!;
    assert.deepEqual(last.action, { type: 'STOP', reason: 'enough' });
    assert.equal(last.decidedBy, 'rule');
  });

  it('runs every action type through the state and records each with its budget and state counts', async () => {
    const s = await setup({ initialPages: 1, maxSearches: 2, searchResults: 1 });
    const doc = s.doc;
    const heading = elementId(doc, 'Consolidated Statement');
    const table = elementId(doc, 'Purchases of property');
    const nextTable = elementId(doc, 'Net cash used in investing');
    const staff = elementId(doc, 'employed 93,000');
    const evaluator = new ScriptedEvaluator([
      // 1: two elements of the entry page, the adjacent page before it, and a search.
      (input) => ({
        picks: [
          pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === table),
          pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === heading),
          pick(input, (c) => c.action.type === 'ACTIVATE_PAGE' && c.targetId === pageId(1)),
        ],
        search: { query: 'staff turnover of people employed', utility: 0.4, why: 'scripted' },
      }),
      // 2: open the table; follow the heading's section relation to the table's continuation on page 4.
      (input) => {
        assert.ok(input.candidates.some((c) => c.action.type === 'ACTIVATE_PAGE' && c.action.source === 'search' && c.page === 4), 'the search hit on page 5 proposes its page');
        return {
          picks: [
            pick(input, (c) => c.action.type === 'OPEN_NODE' && c.targetId === table),
            pick(input, (c) => c.action.type === 'FOLLOW_RELATION' && c.targetId === nextTable),
          ],
        };
      },
      // 3: the relation target's page and the search hit's page; prune the page activated as a neighbour.
      (input) => ({
        picks: [
          pick(input, (c) => c.action.type === 'PRUNE_NODE' && c.targetId === pageId(1)),
          pick(input, (c) => c.action.type === 'ACTIVATE_PAGE' && c.targetId === pageId(3) && c.action.source === 'relation-target'),
          pick(input, (c) => c.action.type === 'ACTIVATE_PAGE' && c.targetId === pageId(4) && c.action.source === 'search'),
        ],
      }),
      // 4: the proposed element (source relation) and the search hit (source search); prune the heading.
      (input) => {
        assert.ok(!input.candidates.some((c) => c.page === 1), 'nothing of the pruned page 2 is a candidate');
        return {
          picks: [
            pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === nextTable && c.action.source === 'relation'),
            pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === staff && c.action.source === 'search'),
            pick(input, (c) => c.action.type === 'PRUNE_NODE' && c.targetId === heading),
          ],
        };
      },
      // 5: open the continuation table; 6: stop.
      (input) => ({ picks: [pick(input, (c) => c.action.type === 'OPEN_NODE' && c.targetId === nextTable)] }),
      () => ({ stop: { reason: 'the capex row and its continuation are open' } }),
    ]);
    const run = await runScripted(s, evaluator);
    assert.deepEqual(kinds(run.steps), [
      '0:ACTIVATE_PAGE',
      '1:ACTIVATE_NODE',
      '1:ACTIVATE_NODE',
      '1:ACTIVATE_PAGE',
      '1:SEARCH_EVIDENCE',
      '2:OPEN_NODE',
      '2:FOLLOW_RELATION',
      '3:PRUNE_NODE',
      '3:ACTIVATE_PAGE',
      '3:ACTIVATE_PAGE',
      '4:ACTIVATE_NODE',
      '4:ACTIVATE_NODE',
      '4:PRUNE_NODE',
      '5:OPEN_NODE',
      '6:STOP',
    ]);
    assert.deepEqual(run.validationErrors, []);
    assert.equal(run.stop.reason, 'evaluator-stop');
    const search = run.steps[4]!;
    assert.deepEqual(search.action, { type: 'SEARCH_EVIDENCE', query: 'staff turnover of people employed' });
    assert.equal(search.results![0]!.nodeId, staff);
    assert.equal(search.budgetLeft.searches, 1);
    const follow = run.steps[6]!;
    // One candidate per target: the heading comes first in reading order, so its section relation carries it.
    assert.deepEqual(follow.action, { type: 'FOLLOW_RELATION', from: heading, to: nextTable, relation: 'section' });
    assert.deepEqual(follow.proposed, [{ type: 'ACTIVATE_PAGE', id: pageId(3) }]);
    assert.deepEqual(follow.changes, []);
    // Budget left after each activation counts down within the iteration, then resets.
    assert.deepEqual(
      run.steps.filter((st) => st.iteration === 1 && st.action.type.startsWith('ACTIVATE')).map((st) => st.budgetLeft.activationsThisIteration),
      [3, 2, 1],
    );
    assert.deepEqual(run.steps[5]!.budgetLeft, { iterations: 6, activationsThisIteration: 4, openedNodes: 11, searches: 1 });
    assert.deepEqual(run.steps[5]!.counts, { activePages: 2, activeElements: 1, opened: 1, pruned: 0 });
    assert.equal(run.steps[5]!.utility, 0.9);
    assert.equal(typeof run.steps[5]!.ruleUtility, 'number');
    assert.equal(typeof run.steps[5]!.candidateIndex, 'number');
    assert.equal(run.steps[7]!.action.type === 'PRUNE_NODE' && run.steps[7]!.action.reason, 'scripted');
    // Final states.
    const st = run.state;
    assert.deepEqual(
      [table, nextTable, staff, heading, pageId(1), pageId(2), pageId(3), pageId(4)].map((id) => st.stateOf(id)),
      ['opened', 'opened', 'active', 'pruned', 'pruned', 'active', 'active', 'active'],
    );
    // The evaluator saw the recent trace: everything so far (fewer than 25 steps).
    assert.equal(evaluator.inputs[5]!.recentSteps.length, 14);
  });

  it('records an action that breaks a rule as invalid, with the reason, and changes nothing', async () => {
    const s = await setup({ initialPages: 1 });
    const table = elementId(s.doc, 'Purchases of property');
    const evaluator = new ScriptedEvaluator([
      (input) => ({
        picks: [pick(input, (c) => c.action.type === 'PRUNE_NODE' && c.targetId === pageId(2)), pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === table)],
      }),
    ]);
    const run = await runScripted(s, evaluator);
    const bad = run.steps.find((st) => !st.valid)!;
    assert.equal(bad.action.type, 'ACTIVATE_NODE');
    assert.match(bad.error!, /page .* is pruned; an element can only be activated while its page is active/);
    assert.deepEqual(bad.changes, []);
    assert.equal(run.state.stateOf(table), 'inactive');
    assert.equal(bad.budgetLeft.activationsThisIteration, 4, 'a rejected activation uses no budget');
    assert.deepEqual(
      run.validationErrors.map((e) => [e.iteration, e.kind, e.step]),
      [[1, 'rule', bad.step]],
    );
  });

  it('rejects the same activation twice in one iteration (the list was made before the first ran)', async () => {
    const s = await setup({ initialPages: 1 });
    const table = elementId(s.doc, 'Purchases of property');
    const run = await runScripted(
      s,
      new ScriptedEvaluator([
        (input) => {
          const p = pick(input, (c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === table);
          return { picks: [p, { ...p, index: p.index }] };
        },
      ]),
    );
    assert.deepEqual(kinds(run.steps), ['0:ACTIVATE_PAGE', '1:ACTIVATE_NODE', '1:ACTIVATE_NODE!', '2:STOP']);
    assert.match(run.steps[2]!.error!, /already active/);
  });

  it('throws CancelledError when the signal fires', async () => {
    const s = await setup();
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(runScripted(s, new ScriptedEvaluator([]), undefined, ac.signal), CancelledError);
  });
});

describe('controller: budgets and stop paths', () => {
  it('allows at most maxActivationsPerIteration activations per iteration', async () => {
    const s = await setup({ initialPages: 1, maxActivationsPerIteration: 2 });
    const run = await runScripted(
      s,
      new ScriptedEvaluator([
        (input) => ({
          picks: input.candidates.filter((c) => c.action.type === 'ACTIVATE_NODE' || c.action.type === 'ACTIVATE_PAGE').map((c) => ({ index: c.index })),
        }),
      ]),
    );
    const it1 = run.steps.filter((st) => st.iteration === 1 && st.action.type !== 'STOP');
    assert.equal(it1.length, 5, 'two page neighbours and three elements were chosen');
    assert.deepEqual(
      it1.map((st) => st.valid),
      [true, true, false, false, false],
    );
    assert.ok(it1.slice(2).every((st) => st.error === 'budget: at most 2 activations per iteration'));
    assert.deepEqual(
      run.validationErrors.map((e) => e.kind),
      ['budget', 'budget', 'budget'],
    );
    assert.equal(run.state.counts().activePages + run.state.counts().activeElements, 3);
  });

  it('stops when the opened-node budget is spent, and rejects opens beyond it', async () => {
    const s = await setup({ initialPages: 1, maxOpenedNodes: 1 });
    const run = await runScripted(
      s,
      new ScriptedEvaluator([
        (input) => ({ picks: input.candidates.filter((c) => c.action.type === 'ACTIVATE_NODE').map((c) => ({ index: c.index })) }),
        (input) => ({ picks: input.candidates.filter((c) => c.action.type === 'OPEN_NODE').map((c) => ({ index: c.index })) }),
        () => ({ stop: { reason: 'never reached' } }),
      ]),
    );
    const opens = run.steps.filter((st) => st.action.type === 'OPEN_NODE');
    assert.deepEqual(
      opens.map((st) => st.valid),
      [true, false, false],
    );
    assert.equal(opens[1]!.error, 'budget: the opened-node budget (1) is spent');
    assert.equal(opens[0]!.budgetLeft.openedNodes, 0);
    assert.deepEqual(run.stop, { reason: 'opened-budget', iteration: 3, note: 'the opened-node budget (1) is spent' });
    assert.equal(run.steps.at(-1)!.action.type, 'STOP');
    assert.equal(run.steps.at(-1)!.decidedBy, 'controller');
    assert.equal(run.state.counts().opened, 1);
  });

  it('stops after maxIterations when the evaluator never stops', async () => {
    const s = await setup({ initialPages: 1, maxIterations: 2 });
    const evaluator = new ScriptedEvaluator([
      (input) => ({ picks: [pick(input, (c) => c.action.type === 'ACTIVATE_PAGE')] }),
      (input) => ({ picks: [pick(input, (c) => c.action.type === 'ACTIVATE_PAGE')] }),
      () => ({ stop: { reason: 'never reached' } }),
    ]);
    const run = await runScripted(s, evaluator);
    assert.equal(evaluator.inputs.length, 2);
    assert.deepEqual(run.stop, { reason: 'iteration-budget', iteration: 2, note: 'all 2 iterations used' });
    assert.deepEqual(run.steps.at(-1)!.budgetLeft.iterations, 0);
    assert.equal(run.iterations, 2);
    assert.deepEqual(evaluator.inputs.map((i) => i.budgetLeft.iterations), [2, 1]);
  });

  it('allows at most maxSearches searches', async () => {
    const s = await setup({ initialPages: 1, maxSearches: 1 });
    const run = await runScripted(
      s,
      new ScriptedEvaluator([() => ({ search: { query: 'revenue growth' } }), () => ({ search: { query: 'employees' } }), () => ({ stop: { reason: 'done' } })]),
    );
    const searches = run.steps.filter((st) => st.action.type === 'SEARCH_EVIDENCE');
    assert.deepEqual(
      searches.map((st) => [st.valid, st.error]),
      [
        [true, undefined],
        [false, 'budget: all 1 searches used'],
      ],
    );
    assert.ok(searches[0]!.results!.length > 0);
    assert.deepEqual(run.state.queries, ['revenue growth']);
    assert.equal(run.stop.reason, 'evaluator-stop');
  });

  it('stops with no-progress after two iterations that change nothing', async () => {
    const s = await setup({ initialPages: 1 });
    const run = await runScripted(s, new ScriptedEvaluator([() => ({ picks: [{ index: 999 }] }), () => ({ picks: [{ index: 998 }] })]));
    assert.equal(run.stop.reason, 'no-progress');
    assert.deepEqual(
      run.validationErrors.map((e) => [e.iteration, e.kind]),
      [
        [1, 'bad-index'],
        [2, 'bad-index'],
      ],
    );
  });

  it('stops with no-candidates when nothing is left to do', async () => {
    const doc = await buildFixtureDoc([[{ kind: 'paragraph', sentences: ['Capital expenditure was 10 million.'] }]]);
    const s = await setup({ maxSearches: 0 }, doc);
    const run = await runScripted(s, new ScriptedEvaluator([(input) => ({ picks: [pick(input, (c) => c.action.type === 'PRUNE_NODE' && c.targetId === pageId(0))] })]));
    assert.deepEqual(run.stop, { reason: 'no-candidates', iteration: 2, note: 'no candidate action and no search left' });
  });

  it('validates options: at most 4 activations per iteration, integer budgets', () => {
    assert.throws(() => resolveControllerOptions({ maxActivationsPerIteration: 5 }), (e: unknown) => e instanceof CanopyError && /maxActivationsPerIteration must be an integer from 1 to 4/.test(e.message));
    assert.throws(() => resolveControllerOptions({ maxOpenedNodes: 2.5 }), CanopyError);
    assert.throws(() => resolveControllerOptions({ onInvalidDecision: 'ignore' as 'rule' }), CanopyError);
    const d = resolveControllerOptions({ maxIterations: undefined });
    assert.deepEqual([d.initialPages, d.maxActivationsPerIteration], [5, 4], 'the authors’ defaults');
  });
});
