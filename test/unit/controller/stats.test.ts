// Trace statistics: per run (actions by type, opened, pruned, stop reason) and aggregated over
// runs split by correct vs incorrect answers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { aggregateTraceStats, traceStats } from '../../../src/core/controller/stats';
import { buildEvidenceSubgraph } from '../../../src/core/controller/subgraph';
import { buildFixtureDoc, hashDeps } from './fixtureDoc';
import { QUESTION } from './scripted';

describe('controller trace statistics', () => {
  it('counts valid actions by type, invalid ones apart, and takes opened, pruned and the stop from the trace', async () => {
    const doc = await buildFixtureDoc();
    const { trace } = await buildEvidenceSubgraph(QUESTION, doc, { ...hashDeps(), tokens: bpeTokenCounter() }, { initialPages: 2 });
    // Make one step invalid, as a rejected action would be.
    trace.steps.push({ ...trace.steps[1]!, step: trace.steps.length, valid: false, error: 'budget: test' });
    const s = traceStats(trace);
    const count = (type: string) => trace.steps.filter((st) => st.valid && st.action.type === type).length;
    assert.equal(s.actions, trace.steps.length - 1);
    assert.equal(s.invalidActions, 1);
    assert.deepEqual(s.byType, {
      ACTIVATE_PAGE: count('ACTIVATE_PAGE'),
      ACTIVATE_NODE: count('ACTIVATE_NODE'),
      OPEN_NODE: count('OPEN_NODE'),
      FOLLOW_RELATION: count('FOLLOW_RELATION'),
      SEARCH_EVIDENCE: count('SEARCH_EVIDENCE'),
      PRUNE_NODE: count('PRUNE_NODE'),
      STOP: 1,
    });
    assert.equal(s.opened, 1);
    assert.equal(s.pruned, trace.totals.pruned);
    assert.ok(s.pruned >= 1, 'the rule pruned the risk-factors entry page');
    assert.equal(s.stopReason, 'evaluator-stop');
    assert.equal(s.evaluator, 'rule');
    assert.equal(s.evidenceTokens, trace.totals.evidenceTokens);
  });

  it('aggregates runs into all / correct / incorrect with means and stop reasons', async () => {
    const doc = await buildFixtureDoc();
    const deps = { ...hashDeps(), tokens: bpeTokenCounter() };
    const a = (await buildEvidenceSubgraph(QUESTION, doc, deps)).trace;
    const b = (await buildEvidenceSubgraph(QUESTION, doc, deps, { maxOpenedNodes: 0 })).trace;
    const c = (await buildEvidenceSubgraph('How many people did the company employ?', doc, deps)).trace;
    const split = aggregateTraceStats([
      { trace: a, correct: true },
      { trace: traceStats(c), correct: true },
      { trace: b, correct: false },
    ]);
    assert.equal(split.all.runs, 3);
    assert.equal(split.correct.runs, 2);
    assert.equal(split.incorrect.runs, 1);
    const mean = (xs: number[]) => Math.round((xs.reduce((x, y) => x + y, 0) / xs.length) * 1000) / 1000;
    assert.equal(split.correct.mean.opened, mean([a.totals.opened, c.totals.opened]));
    assert.equal(split.incorrect.mean.opened, 0);
    assert.equal(split.correct.mean.actions, mean([traceStats(a).actions, traceStats(c).actions]));
    assert.equal(split.all.meanByType.STOP, 1);
    assert.deepEqual(split.incorrect.stopReasons, { 'opened-budget': 1 });
    assert.equal((split.all.stopReasons['evaluator-stop'] ?? 0) + (split.all.stopReasons['opened-budget'] ?? 0) + (split.all.stopReasons['iteration-budget'] ?? 0), 3);
    const empty = aggregateTraceStats([{ trace: a, correct: true }]).incorrect;
    assert.deepEqual([empty.runs, empty.mean.actions, empty.stopReasons], [0, 0, {}]);
  });
});
