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
 *
 * Every payload is a schema (src/contracts/validation.ts explains the building blocks) and its
 * type is inferred from it; validate.ts checks every incoming message against these tables.
 * Objects of the protocol's own messages are closed: a key they do not name is refused. Traces
 * and training reports are produced by the core and may carry keys a newer producer added:
 * those are ignored.
 */

import * as z from 'zod/mini';
import { ReplaySettings } from '../contracts/askSettings';
import { TraceSummary } from '../contracts/savedTrace';
import { AskTrace } from '../contracts/trace';
import { SideMetrics } from '../contracts/training';
import { bool, count, int, list, num, orderedBox, share, shortStr, str } from '../contracts/validation';

/**
 * 2: trace history, replay, PDF pages, reveal and compare (the Evidence Inspector UI).
 * 3: `gold/mark` (mark a node of the shown trace, or a box on its PDF page, as gold evidence).
 * 4: `inspector/showTraining` (the node-adapter checkpoints' before/after report).
 * 5: `inspector/indexing` (an index run's progress while it runs).
 */
export const PROTOCOL_VERSION = 5;

/** Errors cross the wire as plain data. */
export const WireError = z.strictObject({ code: str, message: str });
export type WireError = z.output<typeof WireError>;

/** What the inspector shows before any question has been asked. */
export const PlaceholderView = z.strictObject({
  title: str,
  message: str,
  /** A summary of the indexed corpus, when the host has one. */
  corpus: z.optional(z.strictObject({ files: count, byFormat: z.record(z.string(), int), root: str })),
});
export type PlaceholderView = z.output<typeof PlaceholderView>;

/**
 * One side (untrained or trained adapter) of a training report on questions it was not trained
 * on: the fields of `SideMetrics` (src/contracts/training.ts), shares in [0, 1].
 */
export const TrainingFigures = SideMetrics;
export type TrainingFigures = SideMetrics;

/** §10 preference counts (`PreferenceCounts` of src/core/annotate/preferences.ts). */
export const TrainingPreferenceCounts = z.object({
  pairs: count,
  refine: count,
  keepWhole: count,
  /** Parent/child pairs left out because the child holds its parent's text. */
  identical: count,
  itemsWithGold: count,
  itemsWithoutGold: count,
});
export type TrainingPreferenceCounts = z.output<typeof TrainingPreferenceCounts>;

/** One adapter checkpoint as the Training view lists it, read from its checkpoint file. */
export const TrainingCheckpointSummary = z.object({
  id: shortStr,
  createdAt: str,
  /** Whether `canopy.adapter.checkpoint` names this checkpoint (questions use it). */
  active: bool,
  baseEncoderId: str,
  rank: count,
  seed: z.optional(int),
  /** The epoch kept (0 = the untrained identity) and the epochs run. */
  bestEpoch: z.optional(count),
  epochs: z.optional(count),
  /** How the checkpoint was trained, in words (selection, blend, pairs, splits). */
  recipe: z.optional(str),
  trainedOn: z.object({ questions: count, annotations: count, pairs: count, validationPairs: count }),
  heldOutQuestions: z.optional(count),
  /** Held-back figures, untrained and trained; absent when the checkpoint holds no report. */
  before: z.optional(TrainingFigures),
  after: z.optional(TrainingFigures),
  /** The validation questions' figures that chose the epoch (recall-guarded selection). */
  validation: z.optional(z.object({ before: TrainingFigures, after: TrainingFigures })),
  /**
   * Held-back figures with the configuration the workspace's ask uses (issue 36): the
   * configuration in use before, untrained, and the one fitted with this adapter, each in words.
   * Then `before` / `after` above are the plain rule's figures for the same adapter.
   */
  ask: z.optional(z.object({ configurationBefore: str, configuration: str, blend: num, before: TrainingFigures, after: TrainingFigures })),
});
export type TrainingCheckpointSummary = z.output<typeof TrainingCheckpointSummary>;

/**
 * The scoring weights a run fitted beside the adapter (issue 17), on the same held-back
 * questions: the retrieval fusion (mean nDCG@10 over the index) and the CANOPY rule's node-score
 * weights (the adapter report's figures), each described in words, and whether it was adopted
 * (written into the index's retrieval profile for later questions).
 */
export const TrainingScoring = z.object({
  fusion: z.object({
    adopted: bool,
    reason: str,
    before: str,
    after: z.optional(str),
    questions: z.object({ train: count, heldBack: count, unjudged: count }),
    heldBack: z.optional(z.object({ questions: count, before: share, after: share })),
  }),
  nodeScore: z.object({
    adopted: bool,
    reason: str,
    before: str,
    after: str,
    heldBack: z.optional(z.object({ before: TrainingFigures, after: TrainingFigures })),
  }),
  /** The retrieval profile written (absent when nothing was adopted). */
  profileFile: z.optional(str),
});
export type TrainingScoring = z.output<typeof TrainingScoring>;

/** What only a run knows (checkpoints do not store it): the split and the preference counts. */
export const TrainingRunSummary = z.object({
  checkpointId: z.optional(str),
  questions: z.object({ total: count, train: count, validation: count, heldOut: count }),
  annotations: z.object({ total: count, lost: count, corrupt: count }),
  preferences: z.object({ train: TrainingPreferenceCounts, validation: TrainingPreferenceCounts, heldOut: TrainingPreferenceCounts }),
  /** Prune-sibling pairs added to training (0 unless the recipe adds them). */
  prunePairs: z.object({ train: count, validation: count }),
  /** The fusion and node-score fits of the run (absent when the run fitted only the adapter). */
  scoring: z.optional(TrainingScoring),
  /**
   * The fit to the ask's configuration (train/askFit.ts): the configuration in use and the fitted
   * one in words, the adapter's blend, the held-back figures with the ask's configuration and the
   * plain rule's beside, whether it was adopted and why, and why no checkpoint was written.
   */
  ask: z.optional(
    z.object({
      before: str,
      after: str,
      blend: num,
      adopted: bool,
      reason: str,
      heldBack: z.optional(z.object({ before: TrainingFigures, after: TrainingFigures, plainBefore: TrainingFigures, plainAfter: TrainingFigures })),
      checkpointSkipped: z.optional(str),
    }),
  ),
  /**
   * The reader model fitted to the gold spans (train/readerFit.ts): the model it started from,
   * [1] on a gold span on the held-back questions before and after, and whether it was written.
   */
  reader: z.optional(
    z.object({
      base: str,
      heldBack: count,
      before: count,
      after: z.optional(count),
      written: z.optional(str),
      reason: str,
    }),
  ),
});
export type TrainingRunSummary = z.output<typeof TrainingRunSummary>;

/** The Training view: every checkpoint found (newest first), which one is active, the last run. */
export const TrainingReport = z.object({
  checkpoints: list(TrainingCheckpointSummary, 10_000),
  /** A problem with the active-checkpoint setting (e.g. it names a file that is not listed). */
  activeNote: z.optional(str),
  lastRun: z.optional(TrainingRunSummary),
});
export type TrainingReport = z.output<typeof TrainingReport>;

/**
 * An index run's progress: `files` done of the total, the file being read and, within it, how far
 * (a PDF's pages, or the encoding of its sentences, rows and tables); `running: false` once it ends.
 */
export const IndexingProgress = z.strictObject({
  running: bool,
  files: z.strictObject({ done: count, total: count }),
  file: z.optional(str),
  part: z.optional(z.strictObject({ step: z.enum(['pages', 'encoding']), done: count, total: count })),
  /** Whether a question waits for this run to finish before it is answered. */
  questionWaiting: z.optional(bool),
});
export type IndexingProgress = z.output<typeof IndexingProgress>;

/** Most bytes of a PDF the host sends to the webview (base64 makes the message a third larger). */
export const MAX_PDF_BYTES = 64 * 1024 * 1024;

const base64Problem = 'must be a base64 string';
/** A PDF's bytes in base64, at most MAX_PDF_BYTES of them. */
const base64Pdf = z.string({ error: base64Problem }).check(
  z.maxLength(Math.ceil(MAX_PDF_BYTES / 3) * 4, `is larger than ${MAX_PDF_BYTES} bytes`),
  z.regex(/^[A-Za-z0-9+/]*={0,2}$/, base64Problem),
  z.refine((v) => v.length % 4 === 0, base64Problem),
);

const noParams = z.strictObject({});

/** Requests the webview sends and the host answers: each method's params and result. */
export const hostRequests = {
  /** Ask the host for the current view (also used after a webview reload). */
  'inspector/getView': { params: noParams, result: PlaceholderView },
  /** Open a source file of the index at a range. Refused for files outside the index. */
  'source/open': {
    params: z.strictObject({
      file: str,
      startLine: z.optional(count),
      startColumn: z.optional(count),
      endLine: z.optional(count),
      endColumn: z.optional(count),
      preserveFocus: z.optional(bool),
    }),
    result: z.strictObject({ opened: bool }),
  },
  /** The bytes of an indexed PDF (base64), for the PDF view. Refused for files outside the index. */
  'pdf/get': { params: z.strictObject({ file: str }), result: z.strictObject({ file: str, data: base64Pdf }) },
  /** The saved traces, newest first. */
  'traces/list': { params: noParams, result: z.strictObject({ traces: list(TraceSummary) }) },
  /** One saved trace by file name (to compare with, or to show). */
  'traces/get': { params: z.strictObject({ name: shortStr }), result: z.strictObject({ trace: AskTrace }) },
  /** Replay the trace with this id (the shown one or a saved one) with other settings. */
  'trace/replay': { params: z.strictObject({ traceId: shortStr, settings: ReplaySettings }), result: z.strictObject({ trace: AskTrace }) },
  /**
   * Mark a node of a trace as gold evidence for the trace's question (design §10); with `bbox`
   * (PDF points, [x0, y0, x1, y1]) only that box of the node's page. Refused for nodes whose file
   * is not in the index. `added` is false when the same span was already gold for that question.
   */
  'gold/mark': {
    params: z.strictObject({ traceId: shortStr, nodeId: shortStr, bbox: z.optional(orderedBox) }),
    result: z.strictObject({ annotationId: str, added: bool, question: str }),
  },
} as const;

/** Notifications the webview sends to the host. */
export const hostNotifications = {
  'webview/ready': z.strictObject({ protocolVersion: int }),
  'webview/error': z.strictObject({ message: str }),
} as const;

/** Notifications the host sends to the webview. */
export const webviewNotifications = {
  'host/hello': z.strictObject({ protocolVersion: int, view: PlaceholderView }),
  'inspector/showView': z.strictObject({ view: PlaceholderView }),
  /** Render an answer from its trace (the only thing the inspector renders answers from). */
  'inspector/showTrace': z.strictObject({ trace: AskTrace }),
  /** A question is being answered: show progress, drop whatever older question was shown. */
  'inspector/busy': z.strictObject({ question: str }),
  /** Select a node of the shown trace (from the Evidence view or an editor hover). */
  'inspector/reveal': z.strictObject({ itemId: str, nodeId: str }),
  /** Show `base` and compare it with `other` (from the Questions view). */
  'inspector/compare': z.strictObject({ base: AskTrace, other: AskTrace }),
  /** Show the node-adapter training report (after "Train Node Adapter", or "Show Training Report"). */
  'inspector/showTraining': z.strictObject({ report: TrainingReport }),
  /** An index run's progress (throttled), and its end; shown over whatever the panel shows. */
  'inspector/indexing': IndexingProgress,
} as const;

export type HostRequestMap = {
  [K in keyof typeof hostRequests]: { params: z.output<(typeof hostRequests)[K]['params']>; result: z.output<(typeof hostRequests)[K]['result']> };
};
export type HostNotificationMap = { [K in keyof typeof hostNotifications]: z.output<(typeof hostNotifications)[K]> };
export type WebviewNotificationMap = { [K in keyof typeof webviewNotifications]: z.output<(typeof webviewNotifications)[K]> };

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
