/**
 * The trace (design §9): one JSON document per question, holding every score and decision the
 * inspector needs to re-render the answer and to replay it with other settings. The webview
 * renders only from traces. Documented for humans in docs/trace-schema.md; bump
 * TRACE_SCHEMA_VERSION on any incompatible change and keep readers of older versions working
 * or failing with a clear message.
 */
import type { Anchor, Modality, RegionKind } from '../model/region';
import type { NodeDecision, ProjectionRule } from '../compress/projection';

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
  decision: NodeDecision | 'kept-by-baseline' | 'dropped-by-baseline';
  rule: ProjectionRule | 'flat-top-m' | 'threshold' | 'none' | 'item-gate';
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
  ms: number;
}

export type StopReason = 'critic-sufficient' | 'round-limit' | 'no-new-items' | 'token-cap' | 'cancelled';

export interface TraceCitation {
  /** [n] in the answer text. */
  marker: number;
  itemId: string;
  nodeId: string;
  file: string;
  anchor: Anchor;
  text: string;
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
  readerInput: { text: string; tokens: number; truncated: boolean; regions: Array<{ itemId: string; nodeId: string }> };
  answer: { mode: 'extractive' | 'llm'; text: string; citations: TraceCitation[]; model?: string; notes?: string[]; unresolvedMarkers?: number[] };
  totals: { evidenceTokens: number; uncompressedTokens: number; items: number; keptRegions: number };
  ms: number;
}
