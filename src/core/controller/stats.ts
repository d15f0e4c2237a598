/**
 * Trace statistics in the spirit of the paper's trace analysis: per question, how many actions
 * of each kind the controller took, how many nodes it opened and pruned, how many iterations it
 * used and why it stopped; and the same aggregated over many runs, split by whether the answer
 * was correct — the paper's finding is that correct runs are not longer, they select better.
 * Pure functions over ControllerTrace; the evaluation harness decides what "correct" means.
 */
import { controllerActionTypes, type ControllerActionType, type ControllerStopReason, type ControllerTrace } from './trace';

export interface ControllerTraceStats {
  /** Valid actions, STOP and the entry-page activations included. */
  actions: number;
  /** Valid actions by type. */
  byType: Record<ControllerActionType, number>;
  /** Rejected actions (rule or budget). */
  invalidActions: number;
  /** Validation errors of every kind (rejected actions, bad indices, unparseable replies …). */
  validationErrors: number;
  iterations: number;
  activatedPages: number;
  opened: number;
  pruned: number;
  searches: number;
  evidenceTokens: number;
  stopReason: ControllerStopReason;
  evaluator: 'rule' | 'llm';
}

export function traceStats(trace: ControllerTrace): ControllerTraceStats {
  const byType = Object.fromEntries(controllerActionTypes.map((t) => [t, 0])) as Record<ControllerActionType, number>;
  let valid = 0;
  for (const s of trace.steps) {
    if (!s.valid) continue;
    valid++;
    byType[s.action.type]++;
  }
  return {
    actions: valid,
    byType,
    invalidActions: trace.steps.length - valid,
    validationErrors: trace.validationErrors.length,
    iterations: trace.totals.iterations,
    activatedPages: byType.ACTIVATE_PAGE,
    opened: trace.totals.opened,
    pruned: trace.totals.pruned,
    searches: byType.SEARCH_EVIDENCE,
    evidenceTokens: trace.totals.evidenceTokens,
    stopReason: trace.stop.reason,
    evaluator: trace.evaluator.kind,
  };
}

export interface ControllerStatsGroup {
  runs: number;
  /** Means over the group's runs (0 for an empty group). */
  mean: {
    actions: number;
    invalidActions: number;
    validationErrors: number;
    iterations: number;
    activatedPages: number;
    opened: number;
    pruned: number;
    searches: number;
    evidenceTokens: number;
  };
  /** Mean valid actions per type. */
  meanByType: Record<ControllerActionType, number>;
  /** How many runs stopped for each reason. */
  stopReasons: Partial<Record<ControllerStopReason, number>>;
}

export interface ControllerStatsSplit {
  all: ControllerStatsGroup;
  correct: ControllerStatsGroup;
  incorrect: ControllerStatsGroup;
}

function group(stats: ControllerTraceStats[]): ControllerStatsGroup {
  const n = stats.length;
  const mean = (f: (s: ControllerTraceStats) => number) => (n === 0 ? 0 : Math.round((stats.reduce((a, s) => a + f(s), 0) / n) * 1000) / 1000);
  const stopReasons: Partial<Record<ControllerStopReason, number>> = {};
  for (const s of stats) stopReasons[s.stopReason] = (stopReasons[s.stopReason] ?? 0) + 1;
  return {
    runs: n,
    mean: {
      actions: mean((s) => s.actions),
      invalidActions: mean((s) => s.invalidActions),
      validationErrors: mean((s) => s.validationErrors),
      iterations: mean((s) => s.iterations),
      activatedPages: mean((s) => s.activatedPages),
      opened: mean((s) => s.opened),
      pruned: mean((s) => s.pruned),
      searches: mean((s) => s.searches),
      evidenceTokens: mean((s) => s.evidenceTokens),
    },
    meanByType: Object.fromEntries(controllerActionTypes.map((t) => [t, mean((s) => s.byType[t])])) as Record<ControllerActionType, number>,
    stopReasons,
  };
}

/** Aggregates runs (a trace, or its stats, with whether the answer was correct) into all / correct / incorrect. */
export function aggregateTraceStats(runs: ReadonlyArray<{ trace: ControllerTrace | ControllerTraceStats; correct: boolean }>): ControllerStatsSplit {
  const stats = runs.map((r) => ({ s: 'steps' in r.trace ? traceStats(r.trace) : r.trace, correct: r.correct }));
  return {
    all: group(stats.map((x) => x.s)),
    correct: group(stats.filter((x) => x.correct).map((x) => x.s)),
    incorrect: group(stats.filter((x) => !x.correct).map((x) => x.s)),
  };
}
