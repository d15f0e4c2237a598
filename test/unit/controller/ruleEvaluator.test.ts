// The deterministic evaluator: utilities from relevance, novelty, priors and budget pressure;
// thresholds that rise with pressure; duplicates neither opened nor kept; the rule's searches;
// and a STOP that names the closest candidate when nothing clears its threshold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateCandidates } from '../../../src/core/controller/candidates';
import type { EvaluatorInput } from '../../../src/core/controller/evaluator';
import { budgetPressure, ruleDecide, ruleSearch, scoreCandidates } from '../../../src/core/controller/ruleEvaluator';
import { EvidenceState } from '../../../src/core/controller/state';
import { buildFixtureDoc, elementId, pageId } from './fixtureDoc';
import { QUESTION, setup, type Setup } from './scripted';

function inputFor(s: Setup, state: EvidenceState, iteration = 1, searchesLeft = 2): EvaluatorInput {
  const candidates = generateCandidates(s.view, state);
  return {
    question: QUESTION,
    iteration,
    view: s.view,
    state,
    relevance: s.relevance,
    candidates,
    ruleScores: scoreCandidates({ view: s.view, state, relevance: s.relevance, candidates, iteration, options: s.options }),
    budgetLeft: { iterations: s.options.maxIterations - iteration + 1, activationsThisIteration: s.options.maxActivationsPerIteration, openedNodes: s.options.maxOpenedNodes - state.counts().opened, searches: searchesLeft },
    options: s.options,
    recentSteps: [],
  };
}

describe('rule evaluator', () => {
  it('raises its thresholds with budget pressure: the larger of opened share and iterations used', async () => {
    const s = await setup({ maxOpenedNodes: 4, maxIterations: 8 });
    const state = new EvidenceState(s.view);
    assert.equal(budgetPressure({ state, iteration: 1, options: s.options }), 0);
    assert.equal(budgetPressure({ state, iteration: 5, options: s.options }), 0.5);
    const table = elementId(s.doc, 'Purchases of property');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    state.apply({ type: 'OPEN_NODE', nodeId: table });
    assert.equal(budgetPressure({ state, iteration: 1, options: s.options }), 0.25);
    const entry = new EvidenceState(s.view);
    entry.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    const early = inputFor(s, entry, 1);
    const late = inputFor(s, state, 7);
    const threshold = (i: EvaluatorInput, type: string) => [...i.ruleScores.entries()].find(([idx]) => i.candidates[idx - 1]!.action.type === type)?.[1].threshold;
    assert.equal(threshold(early, 'ACTIVATE_PAGE'), 0.45);
    assert.equal(threshold(late, 'ACTIVATE_PAGE'), 0.675, '0.45 + 0.3 × 6/8');
    assert.equal(threshold(late, 'OPEN_NODE'), undefined, 'nothing active left to open');
  });

  it('scores by relevance × novelty × prior, and gives a page the worth of its best element', async () => {
    const s = await setup();
    const state = new EvidenceState(s.view);
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    const input = inputFor(s, state);
    const table = elementId(s.doc, 'Purchases of property');
    const byTarget = (type: string, id: string) => {
      const c = input.candidates.find((x) => x.action.type === type && x.targetId === id)!;
      return input.ruleScores.get(c.index)!;
    };
    const t = byTarget('ACTIVATE_NODE', table);
    assert.equal(t.utility, 1, 'the best element of the document, nothing opened yet');
    assert.equal(t.why, 'page prior 1 × relevance 1 × novelty 1');
    const adjacent = byTarget('ACTIVATE_PAGE', pageId(3));
    const best = Math.max(...s.view.elementsOn(pageId(3)).map((e) => s.relevance.relative(e.id)));
    assert.equal(adjacent.utility, Math.round(0.85 * best * 1000) / 1000);
    assert.match(adjacent.why, /^adjacent prior 0\.85 × best element/);
  });

  it('neither opens nor keeps a copy of opened evidence', async () => {
    const para = (s: string) => ({ kind: 'paragraph' as const, sentences: [s] });
    const doc = await buildFixtureDoc([[para('Capital expenditure was 1577 million in 2023.')], [para('Capital expenditure was 1577 million in 2023.'), para('Staff numbers were stable.')]]);
    const s = await setup({}, doc);
    const [first, copy] = s.view.elements.filter((e) => e.text.startsWith('Capital'));
    const state = new EvidenceState(s.view);
    for (const p of [0, 1]) state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(p), page: p, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: first!.id, source: 'page' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: copy!.id, source: 'page' });
    state.apply({ type: 'OPEN_NODE', nodeId: first!.id });
    const input = inputFor(s, state, 2);
    const open = input.candidates.find((c) => c.action.type === 'OPEN_NODE' && c.targetId === copy!.id)!;
    assert.equal(input.ruleScores.get(open.index)!.utility, 0);
    assert.ok(!ruleDecide(input).picks.some((p) => p.index === open.index));
    // Both open (as an LLM might do): the later copy is pruned, the first kept.
    state.apply({ type: 'OPEN_NODE', nodeId: copy!.id });
    const after = inputFor(s, state, 3);
    const prunes = ruleDecide(after).picks.map((p) => after.candidates[p.index - 1]!).filter((c) => c.action.type === 'PRUNE_NODE');
    assert.deepEqual(
      prunes.map((c) => c.targetId),
      [copy!.id],
    );
  });

  it('of a quarter\'s statement and the year to date\'s, keeps the one of the period the question asks about', async () => {
    const para = (t: string) => ({ kind: 'paragraph' as const, sentences: [t] });
    const rows = ['Sales to customers | 25,530 | 24,020', 'Net earnings | 5,144 | 4,814'];
    // The year to date's copy comes first: of equals, the earlier one would stay.
    const doc = await buildFixtureDoc([
      [para('Consolidated Statement of Earnings'), para('SIX MONTHS'), { kind: 'table', header: '(Millions) | 2023 | 2022', rows }],
      [para('Consolidated Statement of Earnings'), para('SECOND QUARTER'), { kind: 'table', header: '(Millions) | 2023 | 2022', rows }],
    ]);
    const question = 'Did net earnings as a percent of sales increase in Q2 of FY2023 compared to Q2 of FY2022?';
    const s = await setup({}, doc, question);
    const [ytd, quarter] = s.view.elements.filter((e) => e.type === 'table');
    const state = new EvidenceState(s.view);
    for (const p of [0, 1]) state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(p), page: p, source: 'initial' });
    for (const t of [ytd!, quarter!]) {
      state.apply({ type: 'ACTIVATE_NODE', nodeId: t.id, source: 'page' });
      state.apply({ type: 'OPEN_NODE', nodeId: t.id });
    }
    const prunes = (q: string | undefined) => {
      const candidates = generateCandidates(s.view, state);
      const scores = scoreCandidates({ view: s.view, state, relevance: s.relevance, candidates, iteration: 2, options: s.options, ...(q ? { question: q } : {}) });
      const prune = (id: string) => scores.get(candidates.find((c) => c.action.type === 'PRUNE_NODE' && c.targetId === id)!.index)!.utility;
      return { ytd: prune(ytd!.id), quarter: prune(quarter!.id) };
    };
    const asked = prunes(question);
    assert.ok(asked.ytd > 0.95 && asked.quarter < 0.95, `the six months' copy goes: ${JSON.stringify(asked)}`);
    const plain = prunes(undefined);
    assert.ok(plain.quarter > 0.95 && plain.ytd < 0.95, `without a period asked, the later copy goes: ${JSON.stringify(plain)}`);
  });

  it('prunes an entry page where nothing can clear the activation threshold, and limits activations per iteration', async () => {
    const s = await setup({ maxActivationsPerIteration: 1 });
    const state = new EvidenceState(s.view);
    for (const p of [2, 4]) state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(p), page: p, source: 'initial' });
    const input = inputFor(s, state);
    const d = ruleDecide(input);
    const chosen = d.picks.map((p) => input.candidates[p.index - 1]!);
    assert.deepEqual(
      chosen.map((c) => [c.action.type, c.targetId]),
      [
        ['PRUNE_NODE', pageId(4)],
        ['ACTIVATE_NODE', elementId(s.doc, 'Purchases of property')],
      ],
    );
    assert.equal(d.picks[0]!.why, 'nothing on the page can clear the activation threshold: best element 0 < 0.45');
    assert.deepEqual(d.search, { query: QUESTION, utility: 1, why: 'first search: the question itself, over every element of the document' });
  });

  it('searches again with the question words the opened evidence misses, once each', async () => {
    const s = await setup();
    const state = new EvidenceState(s.view);
    state.queries.push(QUESTION);
    const staff = elementId(s.doc, 'employed 93,000');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(4), page: 4, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: staff, source: 'page' });
    state.apply({ type: 'OPEN_NODE', nodeId: staff });
    const input = inputFor(s, state, 2);
    const search = ruleSearch(input)!;
    assert.equal(search.query, 'capital expenditure purchases property plant equipment 2023');
    assert.equal(search.utility, 1);
    state.queries.push(search.query);
    assert.equal(ruleSearch(inputFor(s, state, 3)), undefined, 'the same query is not searched twice');
    assert.equal(ruleSearch(inputFor(s, state, 3, 0)), undefined, 'no searches left');
    // Once the table is open the question is covered: no search is due.
    const table = elementId(s.doc, 'Purchases of property');
    const covered = new EvidenceState(s.view);
    covered.queries.push(QUESTION);
    covered.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    covered.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    covered.apply({ type: 'OPEN_NODE', nodeId: table });
    assert.equal(ruleSearch(inputFor(s, covered, 2)), undefined);
  });

  it('stops when nothing clears its threshold, naming the closest candidate', async () => {
    const s = await setup();
    const state = new EvidenceState(s.view);
    const table = elementId(s.doc, 'Purchases of property');
    state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
    state.apply({ type: 'ACTIVATE_NODE', nodeId: table, source: 'page' });
    state.apply({ type: 'OPEN_NODE', nodeId: table });
    const d = ruleDecide(inputFor(s, state, 8, 0));
    assert.deepEqual(d.picks, []);
    assert.match(d.stop!.reason, /^no candidate clears its threshold: the closest is #\d+ \w+ .* at 0\.\d+ < 0\.\d+$/);
  });
});
