/**
 * ControllerTrace: everything one run of the MAGE controller (design §7) decided, in order, so
 * the inspector can replay it step by step — every action with the evaluator's utility estimate,
 * whether it was valid, the node states it changed, the budget left after it — plus the page
 * grounding it started from, the evaluator calls, the stop reason and the final subgraph.
 *
 * It is plain JSON (no Maps, no class instances) and versioned on its own
 * (`kind: 'canopy.controller'`, `version`), so the ask trace can embed it as an optional field.
 * docs/controller.md describes every field for the inspector.
 */
import type { Anchor } from '../../contracts/region';
import type { GraphNodeType } from '../../contracts/graph';
import type { ControllerBudgets } from './options';
import type { GroundingWeights } from './grounding';

export const CONTROLLER_TRACE_KIND = 'canopy.controller';
export const CONTROLLER_TRACE_VERSION = 1;

/** Inactive → Active → Opened, or Pruned (from Active or Opened). */
export type NodeState = 'inactive' | 'active' | 'opened' | 'pruned';

/** Why a page was activated. */
export type PageActivationSource = 'initial' | 'adjacent' | 'relation-target' | 'search';

/** How an element became a candidate for activation. */
export type NodeActivationSource = 'page' | 'relation' | 'search';

/**
 * Relations the controller follows between elements: the document graph's edges, plus `section`
 * (a heading ↔ the elements of its section, through the graph's section node) and `subsection`
 * (a section's heading ↔ its subsections' headings).
 */
export type RelationType = 'next' | 'prev' | 'near' | 'semantic' | 'section' | 'subsection';

export type ControllerAction =
  | { type: 'ACTIVATE_PAGE'; pageId: string; page: number; source: PageActivationSource }
  | { type: 'ACTIVATE_NODE'; nodeId: string; source: NodeActivationSource }
  | { type: 'OPEN_NODE'; nodeId: string }
  | { type: 'FOLLOW_RELATION'; from: string; to: string; relation: RelationType }
  | { type: 'SEARCH_EVIDENCE'; query: string }
  | { type: 'PRUNE_NODE'; nodeId: string; reason: string }
  | { type: 'STOP'; reason: string };

export type ControllerActionType = ControllerAction['type'];

export const controllerActionTypes: readonly ControllerActionType[] = Object.freeze([
  'ACTIVATE_PAGE',
  'ACTIVATE_NODE',
  'OPEN_NODE',
  'FOLLOW_RELATION',
  'SEARCH_EVIDENCE',
  'PRUNE_NODE',
  'STOP',
]);

/** What is left after an action. */
export interface BudgetLeft {
  iterations: number;
  /** Activations still allowed in the current iteration. */
  activationsThisIteration: number;
  openedNodes: number;
  searches: number;
}

export interface StateCounts {
  activePages: number;
  /** Active (not yet opened) elements. */
  activeElements: number;
  opened: number;
  /** Pruned pages and elements. */
  pruned: number;
}

export interface StateChange {
  id: string;
  from: NodeState;
  to: NodeState;
}

/** Who decided an action. `rule-fallback`: the rule, because the LLM's decision was unusable. */
export type DecidedBy = 'grounding' | 'rule' | 'llm' | 'rule-fallback' | 'controller';

export interface ControllerStep {
  /** 0-based position in the run. */
  step: number;
  /** 0 = activation of the entry pages; evaluator iterations count from 1. */
  iteration: number;
  action: ControllerAction;
  decidedBy: DecidedBy;
  /** The candidate's 1-based index in that iteration's list (what the LLM picks by). */
  candidateIndex?: number;
  /** The deciding evaluator's estimate of the action's marginal utility (0–1), when it gave one. */
  utility?: number;
  /** The rule's estimate for the same candidate, always computed, for comparison. */
  ruleUtility?: number;
  /** One line: why the evaluator chose it (the rule names its terms). */
  why?: string;
  valid: boolean;
  /** Why the action was rejected (rule violated, budget spent, bad index …); state is unchanged then. */
  error?: string;
  /** Node states this action changed (a pruned page lists its pruned elements too). */
  changes: StateChange[];
  /** FOLLOW_RELATION: the activations it proposed for the next iteration. */
  proposed?: Array<{ type: 'ACTIVATE_PAGE' | 'ACTIVATE_NODE'; id: string }>;
  /** SEARCH_EVIDENCE: the elements found (best first) with their fused score. */
  results?: Array<{ nodeId: string; page: number; score: number }>;
  budgetLeft: BudgetLeft;
  counts: StateCounts;
}

export type ValidationErrorKind =
  /** The LLM's reply held no usable decision (no JSON object, wrong shape). */
  | 'unparseable'
  /** The LLM named a candidate index that does not exist. */
  | 'bad-index'
  /** STOP together with actions, or STOP while a candidate could still help. */
  | 'bad-stop'
  /** A search without a query, or with no searches left. */
  | 'bad-search'
  /** The action broke a controller rule (e.g. opening a page, activating on an inactive page). */
  | 'rule'
  /** The action would exceed a budget. */
  | 'budget';

export interface ControllerValidationError {
  iteration: number;
  kind: ValidationErrorKind;
  message: string;
  /** The rejected action's step, when it got that far. */
  step?: number;
}

export interface EvaluatorCall {
  iteration: number;
  evaluator: 'rule' | 'llm';
  candidates: number;
  /** Candidates listed to the LLM (fewer than `candidates` when capped). */
  shown?: number;
  outcome: 'ok' | 'invalid' | 'failed';
  error?: string;
  model?: string;
  ms: number;
  attempts?: number;
  usage?: { promptTokens?: number; completionTokens?: number; totalTokens?: number };
  /** The raw reply, clipped (debugging an LLM evaluator needs it). */
  reply?: string;
}

export type ControllerStopReason =
  /** The evaluator decided that no candidate can still improve the evidence. */
  | 'evaluator-stop'
  /** All iterations were used. */
  | 'iteration-budget'
  /** The opened-node budget is spent: the evidence cannot grow. */
  | 'opened-budget'
  /** Nothing left to do: no candidate and no search left. */
  | 'no-candidates'
  /** Two iterations in a row changed nothing (every chosen action was invalid). */
  | 'no-progress'
  /** The LLM decision was unusable and `onInvalidDecision` is 'stop'. */
  | 'evaluator-invalid'
  /** The LLM evaluator call failed (error, timeout): the run stops with what it has. */
  | 'evaluator-failed';

/** A page as page-level grounding ranked it. */
export interface GroundedPage {
  pageId: string;
  page: number;
  /** 0-based rank in the fused ranking. */
  rank: number;
  /** Cosine of the page's vector with the question (absent for pages without text). */
  dense?: number;
  denseRank?: number;
  /** BM25 of the question over the page heads (absent when no question term is in the page's head). */
  head?: number;
  headRank?: number;
  /** The best BM25 score of one of the page's elements (absent when no question term occurs on the page). */
  element?: number;
  elementRank?: number;
  /** head + ½ element + 0.05 dense, each min-max normalised over the pages (grounding.ts); 0 for pages without text. */
  fused: number;
}

/** An opened element and what CANOPY projection kept of it. */
export interface OpenedEvidence {
  nodeId: string;
  type: GraphNodeType;
  page: number;
  /** Tokens of the whole element. */
  tokens: number;
  /** The regions that reach the reader (the element itself when not projected). */
  keptRegionIds: string[];
  keptTokens: number;
  projected: boolean;
}

/** A node of the final subgraph: every node that left the Inactive state. */
export interface SubgraphNode {
  id: string;
  type: GraphNodeType;
  label: string;
  page: number;
  state: NodeState;
  regionId?: string;
  anchor: Anchor;
  bbox?: [number, number, number, number];
  /** Rule relevance to the question (0–1, relative to the best element of the document). */
  relevance?: number;
}

export interface SubgraphEdge {
  from: string;
  to: string;
  type: RelationType | 'contains';
  /** True for relations the controller followed. */
  followed?: boolean;
}

export interface ControllerTrace {
  kind: typeof CONTROLLER_TRACE_KIND;
  version: typeof CONTROLLER_TRACE_VERSION;
  question: string;
  file: string;
  evaluator: { kind: 'rule' | 'llm'; model?: string; onInvalidDecision: 'rule' | 'stop' };
  budgets: ControllerBudgets;
  grounding: {
    /** How pages were ranked: `head+element-bm25` (grounding.ts, with its weights); traces written before it say `dense+bm25-rrf` (RRF of page cosine and page BM25, with its rrfK). */
    method: 'head+element-bm25' | 'dense+bm25-rrf';
    weights?: GroundingWeights;
    rrfK?: number;
    pageCount: number;
    /** The best pages of the fused ranking (at least the entry pages, at most 20). */
    pages: GroundedPage[];
    /** The entry pages (0-based page numbers), best first. */
    entryPages: number[];
  };
  steps: ControllerStep[];
  validationErrors: ControllerValidationError[];
  evaluatorCalls: EvaluatorCall[];
  stop: { reason: ControllerStopReason; iteration: number; note: string };
  subgraph: { nodes: SubgraphNode[]; edges: SubgraphEdge[] };
  opened: OpenedEvidence[];
  totals: {
    iterations: number;
    actions: number;
    validActions: number;
    invalidActions: number;
    activatedPages: number;
    opened: number;
    pruned: number;
    /** Tokens of the kept text of the opened nodes (what the reader gets, without markup). */
    evidenceTokens: number;
    /** Tokens of the XML rendering for the reader. */
    xmlTokens: number;
    tokenizer: string;
  };
  ms: number;
}
