/**
 * The evaluator port: given the question, the evidence state, the iteration's candidates and
 * the recent trace, decide which candidates to take (by index), whether to search, or to stop.
 * Two implementations: the deterministic rule (ruleEvaluator.ts) and the LLM prompt
 * (llmEvaluator.ts). The controller validates whatever comes back; an evaluator never changes
 * the state itself.
 */
import type { Candidate } from './candidates';
import type { DocumentView } from './documentView';
import type { ControllerOptions } from './options';
import type { RelevanceModel } from './relevance';
import type { EvidenceState } from './state';
import type { BudgetLeft, ControllerStep, EvaluatorCall, ValidationErrorKind } from './trace';

/** The rule's estimate for one candidate: utility, the threshold it must reach, and why. */
export interface RuleScore {
  utility: number;
  threshold: number;
  why: string;
}

export interface EvaluatorInput {
  question: string;
  /** 1-based iteration about to run. */
  iteration: number;
  view: DocumentView;
  state: EvidenceState;
  relevance: RelevanceModel;
  candidates: Candidate[];
  /** The rule's estimate for every candidate, by index (computed whichever evaluator decides). */
  ruleScores: Map<number, RuleScore>;
  /** The budget before this iteration's actions (`iterations` counts this one). */
  budgetLeft: BudgetLeft;
  options: ControllerOptions;
  /** The most recent steps of the run (at most `options.recentTraceSteps`). */
  recentSteps: ControllerStep[];
}

export interface CandidatePick {
  /** 1-based candidate index. */
  index: number;
  /** Estimated marginal utility, 0–1. */
  utility?: number;
  why?: string;
}

export interface SearchRequest {
  query: string;
  utility?: number;
  why?: string;
}

export interface DecisionProblem {
  kind: ValidationErrorKind;
  message: string;
}

export type EvaluatorDecision =
  | {
      ok: true;
      /** In the order to execute. Indices are not yet checked against the list. */
      picks: CandidatePick[];
      search?: SearchRequest;
      /** Stop after this iteration's picks (the rule and a valid LLM stop send no picks). */
      stop?: { reason: string };
      /** Parts of the decision that were rejected (bad indices, a stop with actions …). */
      problems: DecisionProblem[];
      call: Omit<EvaluatorCall, 'iteration'>;
    }
  | {
      ok: false;
      /** `invalid`: a reply with no usable decision; `failed`: the call itself failed. */
      failure: 'invalid' | 'failed';
      error: string;
      /** What made an invalid decision unusable, item by item. */
      problems?: DecisionProblem[];
      call: Omit<EvaluatorCall, 'iteration'>;
    };

export interface ControllerEvaluator {
  readonly kind: 'rule' | 'llm';
  /** The model behind an LLM evaluator (credential-free id). */
  readonly model?: string;
  decide(input: EvaluatorInput, signal?: AbortSignal): Promise<EvaluatorDecision>;
}
