/**
 * The MAGE controller loop (design §7). Iteration 0 activates the entry pages from page-level
 * grounding (and opens the tables of the statements the question names, `statementPages`); then each iteration generates the candidates, has the evaluator choose, and
 * executes the choice action by action — each validated against the rules (state.ts) and the
 * budgets — until the evaluator stops or a budget runs out:
 *   - at most `maxActivationsPerIteration` ACTIVATE_PAGE/ACTIVATE_NODE per iteration,
 *   - at most `maxOpenedNodes` opened elements (the run stops once they are spent),
 *   - at most `maxSearches` SEARCH_EVIDENCE, one per iteration,
 *   - at most `maxIterations` iterations.
 * A rejected action is recorded (step with `valid: false` and a validation error) and changes
 * nothing. An unusable LLM decision is recorded and the iteration is decided by the rule (or
 * the run stops, per `onInvalidDecision`); a failed LLM call stops the run with its reason.
 * Every run ends with a STOP step that says why.
 */
import { throwIfCancelled } from '../errors';
import type { Tracer } from '../trace/tracer';
import { generateCandidates, type Candidate } from './candidates';
import type { DocumentView } from './documentView';
import type { ControllerEvaluator, EvaluatorDecision, EvaluatorInput } from './evaluator';
import { searchElements, type OverviewParagraphs, type StatementPage } from './grounding';
import type { ControllerOptions } from './options';
import type { RelevanceDeps, RelevanceModel } from './relevance';
import { RuleEvaluator, scoreCandidates } from './ruleEvaluator';
import { EvidenceState } from './state';
import type {
  BudgetLeft,
  ControllerAction,
  ControllerStep,
  ControllerStopReason,
  ControllerValidationError,
  DecidedBy,
  EvaluatorCall,
  GroundedPage,
} from './trace';

export interface ControllerRunDeps extends Pick<RelevanceDeps, 'embedQuery'> {
  evaluator: ControllerEvaluator;
  /** Decides when the evaluator's decision is unusable (default: the rule). */
  fallback?: ControllerEvaluator;
  tracer?: Tracer;
  /** Entry pages beyond grounding's: the best-grounded page of a retrieved item's span (`span` = its 0-based place among the spans), activated after grounding's. */
  retrievedEntries?: ReadonlyArray<{ page: number; span: number }>;
  /** Pages of the statements the question names (grounding.ts `statementPages`): activated, and their statement tables opened, in iteration 0. */
  statementPages?: readonly StatementPage[];
  /** For a question about what the company does: its business overview's first paragraphs (grounding.ts `overviewParagraphs`), opened in iteration 0. */
  overview?: OverviewParagraphs;
}

export interface ControllerRun {
  state: EvidenceState;
  steps: ControllerStep[];
  validationErrors: ControllerValidationError[];
  evaluatorCalls: EvaluatorCall[];
  stop: { reason: ControllerStopReason; iteration: number; note: string };
  /** Iterations in which the evaluator was asked. */
  iterations: number;
  /**
   * Elements the controller opened on its own that are read whole, not projected: tables opened
   * because their lead-in paragraph was (their rows are what the lead-in introduces), and the
   * business overview's paragraphs (the sentence that says what the company is may share no word with the question).
   */
  readWhole: Set<string>;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function runController(
  question: string,
  view: DocumentView,
  relevance: RelevanceModel,
  grounding: GroundedPage[],
  options: ControllerOptions,
  deps: ControllerRunDeps,
  signal?: AbortSignal,
): Promise<ControllerRun> {
  const fallback = deps.fallback ?? new RuleEvaluator();
  const state = new EvidenceState(view);
  const steps: ControllerStep[] = [];
  const validationErrors: ControllerValidationError[] = [];
  const evaluatorCalls: EvaluatorCall[] = [];
  let searchesUsed = 0;
  let iteration = 0;
  let activationsLeft = options.maxActivationsPerIteration;

  const budgetLeft = (): BudgetLeft => ({
    iterations: Math.max(0, options.maxIterations - iteration),
    activationsThisIteration: activationsLeft,
    openedNodes: Math.max(0, options.maxOpenedNodes - state.counts().opened),
    searches: Math.max(0, options.maxSearches - searchesUsed),
  });

  const record = (step: Omit<ControllerStep, 'step' | 'iteration' | 'budgetLeft' | 'counts'>): ControllerStep => {
    const full: ControllerStep = { step: steps.length, iteration, ...step, budgetLeft: budgetLeft(), counts: state.counts() };
    steps.push(full);
    deps.tracer?.emit('controller/step', { step: full.step, iteration, action: full.action.type, valid: full.valid, ...(full.error ? { error: full.error } : {}) });
    if (!full.valid && full.error) validationErrors.push({ iteration, kind: full.error.startsWith('budget:') ? 'budget' : 'rule', message: full.error, step: full.step });
    return full;
  };

  const finish = (reason: ControllerStopReason, note: string, decidedBy: DecidedBy = 'controller', extra: Partial<ControllerStep> = {}): ControllerRun => {
    record({ action: { type: 'STOP', reason: note }, decidedBy, valid: true, changes: [], ...extra });
    deps.tracer?.emit('controller/stop', { reason, iteration, note });
    return { state, steps, validationErrors, evaluatorCalls, stop: { reason, iteration, note }, iterations: evaluatorCalls.length > 0 ? Math.max(...evaluatorCalls.map((c) => c.iteration)) : 0, readWhole };
  };

  const readWhole = new Set<string>();
  /**
   * Opens an element outside the evaluator's picks (its page and itself activated first when they
   * are not yet), within the opened-node budget; false when it could not be opened.
   */
  const openDirectly = (nodeId: string, decidedBy: DecidedBy, why: string): boolean => {
    const page = view.pageOf(nodeId);
    if (!page || state.counts().opened >= options.maxOpenedNodes) return false;
    if (state.stateOf(page.id) === 'inactive') {
      const action = { type: 'ACTIVATE_PAGE' as const, pageId: page.id, page: page.page, source: 'initial' as const };
      const result = state.apply(action);
      record({ action, decidedBy, why, valid: result.ok, changes: result.ok ? result.changes : [], ...(result.ok ? {} : { error: result.error }) });
    }
    if (state.stateOf(nodeId) === 'inactive') {
      const action = { type: 'ACTIVATE_NODE' as const, nodeId, source: 'page' as const };
      const result = state.apply(action);
      record({ action, decidedBy, why, valid: result.ok, changes: result.ok ? result.changes : [], ...(result.ok ? {} : { error: result.error }) });
    }
    if (state.stateOf(nodeId) !== 'active') return false;
    const result = state.apply({ type: 'OPEN_NODE', nodeId });
    record({ action: { type: 'OPEN_NODE', nodeId }, decidedBy, why, valid: result.ok, changes: result.ok ? result.changes : [], ...(result.ok ? {} : { error: result.error }) });
    return result.ok;
  };
  /** A lead-in paragraph was opened: the table it introduces is what it is about, so it is opened too, and read whole. */
  const openTableAfter = (paragraphId: string): boolean => {
    const table = view.tableAfter(paragraphId);
    if (!table || state.stateOf(table.id) === 'opened' || state.stateOf(table.id) === 'pruned') return false;
    if (!openDirectly(table.id, 'controller', `the table its opened lead-in introduces (${view.label(paragraphId, 60)})`)) return false;
    readWhole.add(table.id);
    return true;
  };

  // Iteration 0: the entry pages, best first.
  const best = grounding[0]?.fused ?? 0;
  for (const g of grounding.filter((p) => p.fused > 0).slice(0, options.initialPages)) {
    const result = state.apply({ type: 'ACTIVATE_PAGE', pageId: g.pageId, page: g.page, source: 'initial' });
    const parts = [
      `grounding rank ${g.rank + 1}`,
      g.head !== undefined ? `head BM25 ${r3(g.head)} (#${(g.headRank ?? 0) + 1})` : 'no question term in the page head',
      g.element !== undefined ? `best element BM25 ${r3(g.element)} (#${(g.elementRank ?? 0) + 1})` : 'no BM25 match on the page',
      g.dense !== undefined ? `dense ${r3(g.dense)} (#${(g.denseRank ?? 0) + 1})` : 'no text vector',
    ];
    record({
      action: { type: 'ACTIVATE_PAGE', pageId: g.pageId, page: g.page, source: 'initial' },
      decidedBy: 'grounding',
      utility: best > 0 ? r3(g.fused / best) : 0,
      why: parts.join(', '),
      valid: result.ok,
      changes: result.ok ? result.changes : [],
      ...(result.ok ? {} : { error: result.error }),
    });
  }

  for (const r of deps.retrievedEntries ?? []) {
    const page = view.page(r.page);
    if (!page) continue;
    const g = grounding.find((x) => x.pageId === page.id);
    const result = state.apply({ type: 'ACTIVATE_PAGE', pageId: page.id, page: r.page, source: 'initial' });
    record({
      action: { type: 'ACTIVATE_PAGE', pageId: page.id, page: r.page, source: 'initial' },
      decidedBy: 'grounding',
      utility: best > 0 && g ? r3(g.fused / best) : 0,
      why: `best-grounded page of retrieved span ${r.span + 1} (grounding rank ${(g?.rank ?? 0) + 1})`,
      valid: result.ok,
      changes: result.ok ? result.changes : [],
      ...(result.ok ? {} : { error: result.error }),
    });
  }

  // The statements the question names: their pages and tables, opened at once (the answer is a row of them).
  const statementNames = { 'cash-flow': 'cash flow statement', 'balance-sheet': 'balance sheet', income: 'income statement' } as const;
  for (const sp of deps.statementPages ?? []) {
    const named = sp.implied ? `the question's metric is read from the ${statementNames[sp.statement]}` : `the question names the ${statementNames[sp.statement]}`;
    if (state.stateOf(sp.pageId) === 'inactive') {
      const result = state.apply({ type: 'ACTIVATE_PAGE', pageId: sp.pageId, page: sp.page, source: 'initial' });
      record({ action: { type: 'ACTIVATE_PAGE', pageId: sp.pageId, page: sp.page, source: 'initial' }, decidedBy: 'grounding', why: `${named}; its head names it and a table on it is one`, valid: result.ok, changes: result.ok ? result.changes : [], ...(result.ok ? {} : { error: result.error }) });
    }
    for (const nodeId of sp.tableIds) {
      if (state.counts().opened >= options.maxOpenedNodes) break;
      if (state.stateOf(nodeId) === 'inactive') {
        const result = state.apply({ type: 'ACTIVATE_NODE', nodeId, source: 'page' });
        record({ action: { type: 'ACTIVATE_NODE', nodeId, source: 'page' }, decidedBy: 'grounding', why: `${named}: this table is it`, valid: result.ok, changes: result.ok ? result.changes : [], ...(result.ok ? {} : { error: result.error }) });
      }
      if (state.stateOf(nodeId) === 'active') {
        const result = state.apply({ type: 'OPEN_NODE', nodeId });
        record({ action: { type: 'OPEN_NODE', nodeId }, decidedBy: 'grounding', why: `${named}: its table on page ${sp.page + 1}`, valid: result.ok, changes: result.ok ? result.changes : [], ...(result.ok ? {} : { error: result.error }) });
      }
    }
  }

  // A question about what the company does: the opening paragraphs of its business overview ("Acme is a global leader in …").
  if (deps.overview) {
    const heading = view.label(deps.overview.headingId, 60);
    for (const id of deps.overview.paragraphIds) {
      if (openDirectly(id, 'grounding', `the question asks what the company does: the first paragraphs under ${heading}`)) readWhole.add(id);
    }
  }

  let stale = 0;
  for (iteration = 1; ; iteration++) {
    throwIfCancelled(signal);
    activationsLeft = options.maxActivationsPerIteration;
    if (iteration > options.maxIterations) {
      iteration = options.maxIterations;
      activationsLeft = 0;
      return finish('iteration-budget', `all ${options.maxIterations} iterations used`);
    }
    if (state.counts().opened >= options.maxOpenedNodes) {
      return finish('opened-budget', `the opened-node budget (${options.maxOpenedNodes}) is spent`);
    }
    const candidates = generateCandidates(view, state);
    if (candidates.length === 0 && searchesUsed >= options.maxSearches) {
      return finish('no-candidates', 'no candidate action and no search left');
    }
    const ruleScores = scoreCandidates({ view, state, relevance, candidates, iteration, options, question });
    const input: EvaluatorInput = {
      question,
      iteration,
      view,
      state,
      relevance,
      candidates,
      ruleScores,
      budgetLeft: { ...budgetLeft(), iterations: options.maxIterations - iteration + 1 },
      options,
      recentSteps: options.recentTraceSteps > 0 ? steps.slice(-options.recentTraceSteps) : [],
    };

    let decision: EvaluatorDecision = await deps.evaluator.decide(input, signal);
    evaluatorCalls.push({ iteration, ...decision.call });
    let decidedBy: DecidedBy = deps.evaluator.kind;
    if (!decision.ok) {
      if (decision.failure === 'failed') {
        return finish('evaluator-failed', `the evaluator call failed: ${decision.error}`);
      }
      for (const p of decision.problems ?? [{ kind: 'unparseable' as const, message: decision.error }]) validationErrors.push({ iteration, ...p });
      if (options.onInvalidDecision === 'stop') {
        return finish('evaluator-invalid', `the evaluator's decision was unusable: ${decision.error}`);
      }
      decision = await fallback.decide(input, signal);
      evaluatorCalls.push({ iteration, ...decision.call });
      decidedBy = 'rule-fallback';
      if (!decision.ok) return finish('evaluator-failed', `the fallback evaluator failed too: ${decision.error}`);
    } else {
      for (const p of decision.problems) validationErrors.push({ iteration, ...p });
    }

    const byIndex = new Map<number, Candidate>(candidates.map((c) => [c.index, c]));
    let changed = false;
    for (const pick of decision.picks) {
      throwIfCancelled(signal);
      const c = byIndex.get(pick.index);
      if (!c) {
        validationErrors.push({ iteration, kind: 'bad-index', message: `candidate ${pick.index} is not in the list` });
        continue;
      }
      // A table the controller opened with its lead-in earlier in this iteration needs no pick of its own.
      if ((c.action.type === 'OPEN_NODE' || c.action.type === 'ACTIVATE_NODE') && readWhole.has(c.targetId) && state.stateOf(c.targetId) === 'opened') continue;
      const action: ControllerAction =
        c.action.type === 'PRUNE_NODE' ? { ...c.action, reason: pick.why ?? ruleScores.get(c.index)?.why ?? 'pruned by the evaluator' } : c.action;
      const common = {
        action,
        decidedBy,
        candidateIndex: c.index,
        ...(pick.utility === undefined ? {} : { utility: pick.utility }),
        ...(ruleScores.has(c.index) ? { ruleUtility: ruleScores.get(c.index)!.utility } : {}),
        ...(pick.why ? { why: pick.why } : {}),
      };
      const activation = action.type === 'ACTIVATE_PAGE' || action.type === 'ACTIVATE_NODE';
      if (activation && activationsLeft <= 0) {
        record({ ...common, valid: false, error: `budget: at most ${options.maxActivationsPerIteration} activations per iteration`, changes: [] });
        continue;
      }
      if (action.type === 'OPEN_NODE' && state.counts().opened >= options.maxOpenedNodes) {
        record({ ...common, valid: false, error: `budget: the opened-node budget (${options.maxOpenedNodes}) is spent`, changes: [] });
        continue;
      }
      const result = state.apply(action);
      if (!result.ok) {
        record({ ...common, valid: false, error: result.error, changes: [] });
        continue;
      }
      if (activation) activationsLeft--;
      if (result.changes.length > 0 || result.proposed) changed = true;
      record({ ...common, valid: true, changes: result.changes, ...(result.proposed ? { proposed: result.proposed } : {}) });
      if (action.type === 'OPEN_NODE' && openTableAfter(action.nodeId)) changed = true;
    }

    if (decision.search) {
      const action: ControllerAction = { type: 'SEARCH_EVIDENCE', query: decision.search.query };
      const common = {
        action,
        decidedBy,
        ...(decision.search.utility === undefined ? {} : { utility: decision.search.utility }),
        ...(decision.search.why ? { why: decision.search.why } : {}),
      };
      if (searchesUsed >= options.maxSearches) {
        record({ ...common, valid: false, error: `budget: all ${options.maxSearches} searches used`, changes: [] });
      } else {
        searchesUsed++;
        const hits = await searchElements(
          decision.search.query,
          view,
          relevance,
          deps,
          {
            k: options.searchResults,
            rrfK: options.rrfK,
            eligible: (id) => state.stateOf(id) === 'inactive' && state.stateOf(view.pageOf(id)?.id ?? '') !== 'pruned',
          },
          signal,
        );
        state.queries.push(decision.search.query);
        for (const h of hits) if (!state.searchHits.has(h.nodeId)) state.searchHits.set(h.nodeId, { query: decision.search.query, score: h.score });
        if (hits.length > 0) changed = true;
        record({ ...common, valid: true, changes: [], results: hits.map((h) => ({ nodeId: h.nodeId, page: h.page, score: Math.round(h.score * 1e5) / 1e5 })) });
      }
    }

    if (decision.stop) {
      return finish('evaluator-stop', decision.stop.reason, decidedBy);
    }
    stale = changed ? 0 : stale + 1;
    if (stale >= 2) return finish('no-progress', 'two iterations in a row changed nothing');
  }
}
