/**
 * The one typed protocol between the extension host and the inspector webview.
 *
 * Each direction has a closed set of methods, described once in a descriptor map that names the
 * params and, for requests, the result type. On the wire there are three message shapes:
 *   request      { kind: 'request', id, method, params }   — expects exactly one response
 *   response     { kind: 'response', id, ok: true, result } | { ..., ok: false, error: {code, message} }
 *   notification { kind: 'notify', method, params }        — fire and forget
 * The webview opens with the `webview/ready` notification; the host answers `host/hello`
 * (the handshake). Nothing else is sent to the webview before the handshake completes.
 */

import type { AskTrace, CompressorSetting } from '../contracts/trace';
import type { SideMetrics } from '../contracts/training';

/**
 * 2: trace history, replay, PDF pages, reveal and compare (the Evidence Inspector UI).
 * 3: `gold/mark` (mark a node of the shown trace, or a box on its PDF page, as gold evidence).
 * 4: `inspector/showTraining` (the node-adapter checkpoints' before/after report).
 */
export const PROTOCOL_VERSION = 4;

/** Errors cross the wire as plain data. */
export interface WireError {
  code: string;
  message: string;
}

/** What the inspector shows before any question has been asked. */
export interface PlaceholderView {
  title: string;
  message: string;
  /** A summary of the indexed corpus, when the host has one. */
  corpus?: { files: number; byFormat: Record<string, number>; root: string };
}

/** One saved trace, as the history and the compare picker list it. */
export interface TraceSummary {
  /** File name in the traces folder (what `traces/get` takes). */
  name: string;
  id: string;
  question: string;
  createdAt: string;
  mode: 'extractive' | 'llm';
  evidenceTokens: number;
  replayOf?: string;
}

/** Settings a replay may change (src/core/replay); absent ones keep the trace's. */
export interface ReplayRequestSettings {
  topK?: number;
  maxRounds?: number;
  branchingFactor?: number;
  compressor?: CompressorSetting;
  critic?: 'rule' | 'none' | 'recorded';
}

/**
 * One side (untrained or trained adapter) of a training report on questions it was not trained
 * on: the fields of `SideMetrics` in src/core/train/report.ts, shares in [0, 1].
 */
export type TrainingFigures = SideMetrics;

/** §10 preference counts (`PreferenceCounts` of src/core/annotate/preferences.ts). */
export interface TrainingPreferenceCounts {
  pairs: number;
  refine: number;
  keepWhole: number;
  /** Parent/child pairs left out because the child holds its parent's text. */
  identical: number;
  itemsWithGold: number;
  itemsWithoutGold: number;
}

/** One adapter checkpoint as the Training view lists it, read from its checkpoint file. */
export interface TrainingCheckpointSummary {
  id: string;
  createdAt: string;
  /** Whether `canopy.adapter.checkpoint` names this checkpoint (questions use it). */
  active: boolean;
  baseEncoderId: string;
  rank: number;
  seed?: number;
  /** The epoch kept (0 = the untrained identity) and the epochs run. */
  bestEpoch?: number;
  epochs?: number;
  /** How the checkpoint was trained, in words (selection, blend, pairs, splits). */
  recipe?: string;
  trainedOn: { questions: number; annotations: number; pairs: number; validationPairs: number };
  heldOutQuestions?: number;
  /** Held-back figures, untrained and trained; absent when the checkpoint holds no report. */
  before?: TrainingFigures;
  after?: TrainingFigures;
  /** The validation questions' figures that chose the epoch (recall-guarded selection). */
  validation?: { before: TrainingFigures; after: TrainingFigures };
}

/** What only a run knows (checkpoints do not store it): the split and the preference counts. */
export interface TrainingRunSummary {
  checkpointId?: string;
  questions: { total: number; train: number; validation: number; heldOut: number };
  annotations: { total: number; lost: number; corrupt: number };
  preferences: { train: TrainingPreferenceCounts; validation: TrainingPreferenceCounts; heldOut: TrainingPreferenceCounts };
  /** Prune-sibling pairs added to training (0 unless the recipe adds them). */
  prunePairs: { train: number; validation: number };
}

/** The Training view: every checkpoint found (newest first), which one is active, the last run. */
export interface TrainingReport {
  checkpoints: TrainingCheckpointSummary[];
  /** A problem with the active-checkpoint setting (e.g. it names a file that is not listed). */
  activeNote?: string;
  lastRun?: TrainingRunSummary;
}

/** Most bytes of a PDF the host sends to the webview (base64 makes the message a third larger). */
export const MAX_PDF_BYTES = 64 * 1024 * 1024;

/** Requests the webview sends and the host answers. */
export interface HostRequestMap {
  /** Ask the host for the current view (also used after a webview reload). */
  'inspector/getView': { params: Record<string, never>; result: PlaceholderView };
  /** Open a source file of the index at a range. Refused for files outside the index. */
  'source/open': {
    params: { file: string; startLine?: number; startColumn?: number; endLine?: number; endColumn?: number; preserveFocus?: boolean };
    result: { opened: boolean };
  };
  /** The bytes of an indexed PDF (base64), for the PDF view. Refused for files outside the index. */
  'pdf/get': { params: { file: string }; result: { file: string; data: string } };
  /** The saved traces, newest first. */
  'traces/list': { params: Record<string, never>; result: { traces: TraceSummary[] } };
  /** One saved trace by file name (to compare with, or to show). */
  'traces/get': { params: { name: string }; result: { trace: AskTrace } };
  /** Replay the trace with this id (the shown one or a saved one) with other settings. */
  'trace/replay': { params: { traceId: string; settings: ReplayRequestSettings }; result: { trace: AskTrace } };
  /**
   * Mark a node of a trace as gold evidence for the trace's question (design §10); with `bbox`
   * (PDF points, [x0, y0, x1, y1]) only that box of the node's page. Refused for nodes whose file
   * is not in the index. `added` is false when the same span was already gold for that question.
   */
  'gold/mark': { params: { traceId: string; nodeId: string; bbox?: [number, number, number, number] }; result: { annotationId: string; added: boolean; question: string } };
}

/** Notifications the webview sends to the host. */
export interface HostNotificationMap {
  'webview/ready': { protocolVersion: number };
  'webview/error': { message: string };
}

/** Notifications the host sends to the webview. */
export interface WebviewNotificationMap {
  'host/hello': { protocolVersion: number; view: PlaceholderView };
  'inspector/showView': { view: PlaceholderView };
  /** Render an answer from its trace (the only thing the inspector renders answers from). */
  'inspector/showTrace': { trace: AskTrace };
  /** A question is being answered: show progress, drop whatever older question was shown. */
  'inspector/busy': { question: string };
  /** Select a node of the shown trace (from the Evidence view or an editor hover). */
  'inspector/reveal': { itemId: string; nodeId: string };
  /** Show `base` and compare it with `other` (from the Questions view). */
  'inspector/compare': { base: AskTrace; other: AskTrace };
  /** Show the node-adapter training report (after "Train Node Adapter", or "Show Training Report"). */
  'inspector/showTraining': { report: TrainingReport };
}

export type HostRequestMethod = keyof HostRequestMap;
export type HostNotificationMethod = keyof HostNotificationMap;
export type WebviewNotificationMethod = keyof WebviewNotificationMap;

export type RequestMessage<M extends HostRequestMethod = HostRequestMethod> = {
  [K in M]: { kind: 'request'; id: number; method: K; params: HostRequestMap[K]['params'] };
}[M];

export type ResponseMessage<M extends HostRequestMethod = HostRequestMethod> =
  | { kind: 'response'; id: number; ok: true; result: HostRequestMap[M]['result'] }
  | { kind: 'response'; id: number; ok: false; error: WireError };

export type NotificationMessage<Map, M extends keyof Map = keyof Map> = {
  [K in M]: { kind: 'notify'; method: K; params: Map[K] };
}[M];

/** Everything the webview may send: a closed union. */
export type WebviewToHostMessage = RequestMessage | NotificationMessage<HostNotificationMap>;

/** Everything the host may send: a closed union. */
export type HostToWebviewMessage = ResponseMessage | NotificationMessage<WebviewNotificationMap>;
