/**
 * The trace (design §9): one JSON document per question, holding every score and decision the
 * inspector needs to re-render the answer and to replay it with other settings. The webview
 * renders only from traces. Documented for humans in docs/trace-schema.md; bump
 * TRACE_SCHEMA_VERSION on any incompatible change and keep readers of older versions working
 * or failing with a clear message.
 */
import type { Anchor, Modality, RegionKind } from './region';
import type { GraphEdgeType, GraphNodeType } from './graph';

/** What the CANOPY projection decided for a node (src/core/compress/projection.ts). */
export type NodeDecision =
  /** Replaced by its children that scored ≥ it. */
  | 'descend'
  /** Kept as one region: no child scored ≥ it (or it is a leaf, or a table kept whole). */
  | 'keep-whole'
  /** A sibling of a descended-into child that scored below the parent: its subtree is dropped. */
  | 'dropped-sibling'
  /** Never scored: inside a kept-whole node or a dropped subtree. */
  | 'not-visited';

export type ProjectionRule =
  | 'child-ge-parent' // descend: at least one child scored ≥ the parent
  | 'no-child-ge-parent' // keep-whole: every child scored below the parent
  | 'leaf' // keep-whole: nothing finer exists
  | 'aggregate-table' // keep-whole: an aggregate question keeps tables whole
  | 'below-parent' // dropped-sibling: scored below the parent while a sibling did not
  | 'ancestor-kept-whole' // not-visited: an ancestor was kept whole
  | 'ancestor-dropped'; // not-visited: an ancestor was dropped

export const TRACE_SCHEMA = 'canopy.trace';
export const TRACE_SCHEMA_VERSION = 1;

export type CompressorSetting =
  | { name: 'none' }
  | { name: 'flat'; m: number }
  | { name: 'threshold'; threshold: number }
  | { name: 'canopy'; itemGate?: number };

export interface TraceSettings {
  topK: number;
  maxRounds: number;
  branchingFactor: number;
  compressor: CompressorSetting;
  critic: 'rule' | 'llm' | 'none';
  reader: 'extractive' | 'llm';
  readerTokenCap: number;
  tokenizer: string;
  encoderId: string;
  adapterId?: string;
  retrieval: { dense: boolean; bm25: boolean; topics: boolean; fusion: 'rrf'; rrfK: number };
  /** The LLM used by the critic, reader or router, when one is configured. */
  llm?: { id: string; remote: boolean };
  /** The MAGE controller, when the pipeline may run it: PDFs of at least `minPages` pages, its evaluator and budgets. */
  controller?: {
    minPages: number;
    evaluator: 'rule' | 'llm';
    budgets: { initialPages: number; maxActivationsPerIteration: number; maxIterations: number; maxOpenedNodes: number; maxSearches: number };
  };
  /** Page images and crops of the controller's subgraph were asked for (a multimodal reader). */
  pageImages?: boolean;
}

/** One node of an item's scored tree. Leaves carry their text; inner nodes a short preview. */
export interface TraceNode {
  id: string;
  kind: RegionKind;
  modality: Modality;
  anchor: Anchor;
  text?: string;
  preview?: string;
  header?: string;
  tokens: number;
  score?: number;
  parentScore?: number;
  /** `kept-by-controller`: a region of an element the MAGE controller opened (the item's file went through it). */
  decision: NodeDecision | 'kept-by-baseline' | 'dropped-by-baseline' | 'kept-by-controller';
  rule: ProjectionRule | 'flat-top-m' | 'threshold' | 'none' | 'item-gate' | 'controller';
  children: TraceNode[];
}

export interface ScoreComponents {
  dense?: number;
  denseRank?: number;
  bm25?: number;
  bm25Rank?: number;
  topic?: number;
  fused: number;
}

export interface TraceRetrievedItem {
  itemId: string;
  file: string;
  title: string;
  modality: Modality;
  rank: number;
  scores: ScoreComponents;
  /** Already in the evidence from an earlier round: not compressed again. */
  repeated: boolean;
  /** The scored tree (absent for repeated items: see the round that added them). */
  tree?: TraceNode;
  keptNodeIds: string[];
  tokens: { whole: number; kept: number };
  /** The MAGE controller's run over this item's document graph (design §7), when it ran. */
  controller?: TraceController;
}

// ---- Optional sections written by later stages (additive; readers show an empty state) ----

/**
 * The MAGE controller's run over one document (design §7), as the inspector reads it. This is
 * the shape of `ControllerTrace` in src/core/controller/trace.ts (kind "canopy.controller",
 * versioned on its own), restated here as the subset the inspector renders so that the ask
 * trace does not depend on the controller's module; the controller's full trace fits it.
 */
export type ControllerNodeState = 'inactive' | 'active' | 'opened' | 'pruned';

/** One controller action: `type` is ACTIVATE_PAGE, ACTIVATE_NODE, OPEN_NODE, FOLLOW_RELATION, SEARCH_EVIDENCE, PRUNE_NODE or STOP. */
export interface TraceControllerAction {
  type: string;
  pageId?: string;
  page?: number;
  nodeId?: string;
  from?: string;
  to?: string;
  relation?: string;
  query?: string;
  reason?: string;
  source?: string;
}

export interface TraceControllerStep {
  step: number;
  /** 0 = activation of the entry pages; evaluator iterations count from 1. */
  iteration: number;
  action: TraceControllerAction;
  /** grounding, rule, llm, rule-fallback or controller. */
  decidedBy: string;
  /** The evaluator's estimate of the action's marginal utility (0–1). */
  utility?: number;
  why?: string;
  valid: boolean;
  error?: string;
  changes: Array<{ id: string; from: ControllerNodeState; to: ControllerNodeState }>;
  budgetLeft: { iterations: number; activationsThisIteration: number; openedNodes: number; searches: number };
}

export interface TraceControllerNode {
  id: string;
  type: GraphNodeType;
  label: string;
  page: number;
  state: ControllerNodeState;
  regionId?: string;
  anchor: Anchor;
  bbox?: [number, number, number, number];
  relevance?: number;
}

export interface TraceControllerEdge {
  from: string;
  to: string;
  /** A document-graph relation (next, prev, near, semantic, section, subsection) or contains. */
  type: GraphEdgeType | 'section' | 'contains';
  followed?: boolean;
}

export interface TraceController {
  kind: 'canopy.controller';
  version: number;
  file: string;
  evaluator: { kind: 'rule' | 'llm'; model?: string };
  budgets: { initialPages: number; maxActivationsPerIteration: number; maxIterations: number; maxOpenedNodes: number; maxSearches: number };
  steps: TraceControllerStep[];
  stop: { reason: string; iteration: number; note: string };
  /** Every node that left the Inactive state, and the edges between them. */
  subgraph: { nodes: TraceControllerNode[]; edges: TraceControllerEdge[] };
  validationErrors?: Array<{ iteration: number; kind: string; message: string; step?: number }>;
}

/** One topic the topic compass (MCompassRAG, design §4) selected for a round's query. */
export interface TraceTopic {
  topic: number;
  /** A readable name (top terms), when the topic model has one. */
  label: string;
  /** Weight in the abstracted query-topic vector (top-M topics). */
  weight: number;
  terms?: string[];
}

/** How much the topic signal moved one chunk (item, or node when chunks are regions). */
export interface TraceTopicLift {
  itemId: string;
  nodeId?: string;
  /** Score without the topic signal, and with it. */
  base: number;
  withTopics: number;
  rankBefore?: number;
  rankAfter?: number;
}

/** The topic compass for one round: selected bank entries, topics and per-chunk lift. */
export interface TraceTopics {
  /** K: topics in the model. */
  k: number;
  /** L: metadata-bank entries selected for the query. */
  selectedEntries?: number;
  selected: TraceTopic[];
  lift: TraceTopicLift[];
  source?: string;
}

export interface TraceRouting {
  modalities: Modality[];
  aggregate: boolean;
  source: 'rule' | 'llm';
  reason: string;
}

export interface TraceCritic {
  sufficient: boolean;
  missing: string[];
  followUpQuery?: string;
  source: string;
  details?: Record<string, unknown>;
}

export interface TraceRound {
  round: number;
  query: string;
  routing: TraceRouting;
  /** The fused ranking beyond k (up to 50), so replays with a larger k need no new retrieval. */
  candidates: Array<{ itemId: string; scores: ScoreComponents }>;
  retrieved: TraceRetrievedItem[];
  addedItemIds: string[];
  critic?: TraceCritic;
  /** The topic compass's selection and its effect on this round's ranking, when topics are on. */
  topics?: TraceTopics;
  ms: number;
}

/** `replay-diverged`: a replay whose critic asked for a query the recorded trace never ran. */
export type StopReason = 'critic-sufficient' | 'round-limit' | 'no-new-items' | 'token-cap' | 'cancelled' | 'replay-diverged';

/** Present on traces made by replaying another trace with other settings (src/core/replay). */
export interface TraceReplay {
  /** Id of the trace replayed. */
  of: string;
  /** The settings that differ from the original's. */
  changed: Partial<Pick<TraceSettings, 'topK' | 'maxRounds' | 'branchingFactor' | 'compressor' | 'critic'>>;
  /** What the replay reused, recomputed or could not do. */
  notes: string[];
}

export interface TraceCitation {
  /** [n] in the answer text. */
  marker: number;
  itemId: string;
  nodeId: string;
  file: string;
  anchor: Anchor;
  text: string;
}

export interface TraceReaderImage {
  ref: string;
  file: string;
  /** 0-based page. */
  page: number;
  bbox?: [number, number, number, number];
  width: number;
  height: number;
  bytes: number;
}

export interface AskTrace {
  schema: typeof TRACE_SCHEMA;
  version: typeof TRACE_SCHEMA_VERSION;
  id: string;
  createdAt: string;
  question: string;
  settings: TraceSettings;
  index: { root: string; generation: number; items: number };
  rounds: TraceRound[];
  stop: { reason: StopReason; round: number; note: string };
  readerInput: {
    text: string;
    tokens: number;
    truncated: boolean;
    regions: Array<{ itemId: string; nodeId: string }>;
    /** Page images (no bbox) and element crops sent to a multimodal reader: which, and their size (the pixels are not stored). */
    images?: TraceReaderImage[];
    /** Why page images that were asked for were not sent. */
    notes?: string[];
  };
  answer: { mode: 'extractive' | 'llm'; text: string; citations: TraceCitation[]; model?: string; notes?: string[]; unresolvedMarkers?: number[] };
  totals: { evidenceTokens: number; uncompressedTokens: number; items: number; keptRegions: number };
  ms: number;
  replay?: TraceReplay;
}
