/**
 * Budgets and settings of the MAGE controller (design §7), with their defaults and the one
 * function that validates a caller's partial options. The budgets are what the paper bounds:
 * entry pages, activations per iteration, iterations and opened nodes; searches are bounded too
 * because each one is a re-retrieval over the whole document.
 */
import { CanopyError, ErrorCodes } from '../errors';

export interface ControllerBudgets {
  /** Entry pages taken from page-level grounding and activated before the first iteration. */
  initialPages: number;
  /** ACTIVATE_PAGE + ACTIVATE_NODE actions allowed in one iteration (1–4). */
  maxActivationsPerIteration: number;
  /** Evaluator iterations after the entry pages are activated. */
  maxIterations: number;
  /** Element nodes that may be opened in all (opened nodes are what the reader gets). */
  maxOpenedNodes: number;
  /** SEARCH_EVIDENCE actions in all (each re-retrieves over every element of the document). */
  maxSearches: number;
}

export interface ControllerOptions extends ControllerBudgets {
  /** Elements a SEARCH_EVIDENCE returns as new candidates. */
  searchResults: number;
  /** Trace steps the LLM evaluator sees (the most recent ones). */
  recentTraceSteps: number;
  /** Candidates listed to the LLM evaluator; beyond this, those with the highest rule utility are listed. */
  maxCandidatesShown: number;
  /** Characters of an opened node's text shown to the LLM evaluator. */
  maxTextCharsShown: number;
  /** Apply CANOPY projection inside every opened node (design §5): only its best sub-regions reach the reader. */
  project: boolean;
  /** Keep tables whole inside opened nodes (aggregate questions); undefined = the router's rule decides. */
  keepTablesWhole?: boolean;
  /** Reciprocal-rank-fusion constant for SEARCH_EVIDENCE (as the retriever uses); page grounding fuses by score (grounding.ts). */
  rrfK: number;
  /** An LLM decision that cannot be used: decide this iteration by the rule, or stop the run. */
  onInvalidDecision: 'rule' | 'stop';
  /** One LLM evaluator call may take this long; then the run stops with the reason recorded. */
  llmTimeoutMs: number;
  /** Answer tokens for one LLM evaluator decision. */
  llmMaxTokens: number;
}

/**
 * Defaults. initialPages 5 and 4 activations per iteration are the authors' values. Iterations,
 * opened nodes and searches are general settings chosen on the FinanceBench dev questions
 * (docs/controller.md has the figures); nothing is set per question or per document.
 */
export const defaultControllerOptions: Readonly<ControllerOptions> = Object.freeze({
  initialPages: 5,
  maxActivationsPerIteration: 4,
  maxIterations: 8,
  maxOpenedNodes: 12,
  maxSearches: 2,
  searchResults: 8,
  recentTraceSteps: 25,
  maxCandidatesShown: 120,
  maxTextCharsShown: 1200,
  project: true,
  rrfK: 60,
  onInvalidDecision: 'rule',
  llmTimeoutMs: 60_000,
  llmMaxTokens: 600,
});

const integerRanges: Array<[keyof ControllerOptions, number, number]> = [
  ['initialPages', 1, 100],
  ['maxActivationsPerIteration', 1, 4],
  ['maxIterations', 0, 100],
  ['maxOpenedNodes', 0, 1000],
  ['maxSearches', 0, 20],
  ['searchResults', 1, 100],
  ['recentTraceSteps', 0, 500],
  ['maxCandidatesShown', 1, 1000],
  ['maxTextCharsShown', 0, 100_000],
  ['rrfK', 1, 1000],
  ['llmTimeoutMs', 1, 3_600_000],
  ['llmMaxTokens', 16, 32_000],
];

/** The defaults overlaid with `partial`; throws E_BAD_INPUT naming the first bad setting. */
export function resolveControllerOptions(partial: Partial<ControllerOptions> = {}): ControllerOptions {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<ControllerOptions>;
  const options: ControllerOptions = { ...defaultControllerOptions, ...defined };
  for (const [key, min, max] of integerRanges) {
    const value = options[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new CanopyError(ErrorCodes.badInput, `controller option ${key} must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`);
    }
  }
  if (options.onInvalidDecision !== 'rule' && options.onInvalidDecision !== 'stop') {
    throw new CanopyError(ErrorCodes.badInput, `controller option onInvalidDecision must be "rule" or "stop", not ${JSON.stringify(options.onInvalidDecision)}`);
  }
  return options;
}

/** The budget part of the options, as the trace records it. */
export function budgetsOf(options: ControllerBudgets): ControllerBudgets {
  return {
    initialPages: options.initialPages,
    maxActivationsPerIteration: options.maxActivationsPerIteration,
    maxIterations: options.maxIterations,
    maxOpenedNodes: options.maxOpenedNodes,
    maxSearches: options.maxSearches,
  };
}
