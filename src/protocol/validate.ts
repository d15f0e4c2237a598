/**
 * Validation of incoming protocol messages at the boundary. Both sides treat the other as
 * untrusted: a message that does not match the protocol is rejected with a WireError and has
 * no side effect. Hand-written checks keep the webview bundle small and the rules visible.
 */
import {
  MAX_PDF_BYTES,
  type HostNotificationMap,
  type HostRequestMap,
  type HostToWebviewMessage,
  type PlaceholderView,
  type WebviewNotificationMap,
  type WebviewToHostMessage,
  type WireError,
} from './messages';

export type Validation<T> = { ok: true; value: T } | { ok: false; error: WireError };

const MAX_STRING = 1_000_000;

type Check = (value: unknown, path: string) => string | undefined;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const str: Check = (v, p) => (typeof v === 'string' && v.length <= MAX_STRING ? undefined : `${p} must be a string`);
const shortStr: Check = (v, p) => (typeof v === 'string' && v.length > 0 && v.length <= 1000 ? undefined : `${p} must be a non-empty string of at most 1000 characters`);
const num: Check = (v, p) => (typeof v === 'number' && Number.isFinite(v) ? undefined : `${p} must be a finite number`);
const bool: Check = (v, p) => (typeof v === 'boolean' ? undefined : `${p} must be a boolean`);
const oneOf =
  (...values: string[]): Check =>
  (v, p) =>
    typeof v === 'string' && values.includes(v) ? undefined : `${p} must be one of ${values.join(', ')}`;
const intIn =
  (min: number, max: number): Check =>
  (v, p) =>
    int(v, p) ?? ((v as number) >= min && (v as number) <= max ? undefined : `${p} must be from ${min} to ${max}`);
const list =
  (item: Check, max = 100_000): Check =>
  (v, p) => {
    if (!Array.isArray(v)) return `${p} must be a list`;
    if (v.length > max) return `${p} has more than ${max} entries`;
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i], `${p}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };
/** An object that must have these keys right (others, from newer producers, are ignored). */
const record =
  (shape: Record<string, Check>): Check =>
  (v, p) => {
    if (!isRecord(v)) return `${p} must be an object`;
    for (const [key, check] of Object.entries(shape)) {
      const problem = check(v[key], `${p}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  };
const int: Check = (v, p) => (typeof v === 'number' && Number.isSafeInteger(v) ? undefined : `${p} must be an integer`);
const nonNegInt: Check = (v, p) => int(v, p) ?? ((v as number) >= 0 ? undefined : `${p} must be ≥ 0`);
/** A box on a PDF page in points: four finite numbers, x0 ≤ x1 and y0 ≤ y1. */
const bbox: Check = (v, p) => {
  if (!Array.isArray(v) || v.length !== 4 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) return `${p} must be four finite numbers`;
  const [x0, y0, x1, y1] = v as number[];
  return x0! <= x1! && y0! <= y1! ? undefined : `${p} must have x0 ≤ x1 and y0 ≤ y1`;
};
const optional =
  (check: Check): Check =>
  (v, p) =>
    v === undefined ? undefined : check(v, p);

/** An object with exactly these keys (extra keys are rejected: the protocol is closed). */
function object(shape: Record<string, Check>): Check {
  return (v, p) => {
    if (!isRecord(v)) return `${p} must be an object`;
    for (const key of Object.keys(v)) if (!(key in shape)) return `${p}.${key} is not part of the protocol`;
    for (const [key, check] of Object.entries(shape)) {
      const problem = check(v[key], `${p}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  };
}

const placeholderView: Check = object({
  title: str,
  message: str,
  corpus: optional(
    object({
      files: nonNegInt,
      root: str,
      byFormat: (v, p) =>
        isRecord(v) && Object.values(v).every((n) => Number.isSafeInteger(n)) ? undefined : `${p} must map formats to counts`,
    }),
  ),
});

const hostRequestParams: { [K in keyof HostRequestMap]: Check } = {
  'inspector/getView': object({}),
  'source/open': object({
    file: str,
    startLine: optional(nonNegInt),
    startColumn: optional(nonNegInt),
    endLine: optional(nonNegInt),
    endColumn: optional(nonNegInt),
    preserveFocus: optional(bool),
  }),
  'pdf/get': object({ file: str }),
  'traces/list': object({}),
  'traces/get': object({ name: shortStr }),
  'gold/mark': object({ traceId: shortStr, nodeId: shortStr, bbox: optional(bbox) }),
  'trace/replay': object({
    traceId: shortStr,
    settings: object({
      topK: optional(intIn(1, 100)),
      maxRounds: optional(intIn(1, 10)),
      branchingFactor: optional(intIn(2, 4)),
      critic: optional(oneOf('rule', 'none', 'recorded')),
      compressor: optional((v, p) => {
        if (!isRecord(v)) return `${p} must be an object`;
        switch (v.name) {
          case 'none':
            return object({ name: str })(v, p);
          case 'canopy':
            return object({ name: str, itemGate: optional(num) })(v, p);
          case 'flat':
            return object({ name: str, m: intIn(1, 10_000) })(v, p);
          case 'threshold':
            return object({ name: str, threshold: num })(v, p);
          default:
            return `${p}.name must be canopy, none, flat or threshold`;
        }
      }),
    }),
  }),
};

const hostNotificationParams: { [K in keyof HostNotificationMap]: Check } = {
  'webview/ready': object({ protocolVersion: int }),
  'webview/error': object({ message: str }),
};

/**
 * Traces are large and produced by the core. The webview checks every part it dereferences —
 * rounds, items, every node of every tree, citations, the optional controller and topic
 * sections — so a malformed trace is refused whole instead of half-painted; strings are only
 * ever rendered with textContent. Keys it does not know are ignored (newer producers may add).
 */
const anchor = record({ file: str });
const scores = record({ fused: num, dense: optional(num), bm25: optional(num), denseRank: optional(nonNegInt), bm25Rank: optional(nonNegInt), topic: optional(num) });

const MAX_TREE_NODES = 2_000_000;
const MAX_DEPTH = 200;

const nodeFields: Array<[string, Check]> = Object.entries({
  id: str,
  kind: str,
  modality: str,
  anchor,
  decision: str,
  rule: str,
  tokens: num,
  score: optional(num),
  parentScore: optional(num),
  text: optional(str),
  preview: optional(str),
  header: optional(str),
});

/**
 * Every node of a scored tree, iteratively (no recursion limit, bounded size and depth). Big
 * traces have thousands of nodes, so a node's path is spelled out only when it is wrong.
 */
const traceTree: Check = (v, p) => {
  type Frame = { node: unknown; parent: Frame | undefined; index: number; depth: number };
  const pathOf = (f: Frame): string => (f.parent ? `${pathOf(f.parent)}.children[${f.index}]` : p);
  const stack: Frame[] = [{ node: v, parent: undefined, index: 0, depth: 0 }];
  let seen = 0;
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (++seen > MAX_TREE_NODES) return `${p} has more than ${MAX_TREE_NODES} nodes`;
    if (frame.depth > MAX_DEPTH) return `${pathOf(frame)} is nested deeper than ${MAX_DEPTH}`;
    const node = frame.node;
    if (!isRecord(node)) return `${pathOf(frame)} must be an object`;
    for (const [key, check] of nodeFields) {
      const value = node[key];
      // The common cases inline; anything unusual goes through the check for its message.
      if (typeof value === 'string' && check === str && value.length <= MAX_STRING) continue;
      const problem = check(value, 'x');
      if (problem) return `${pathOf(frame)}.${key}${problem.slice(1)}`;
    }
    const children = node.children;
    if (!Array.isArray(children)) return `${pathOf(frame)}.children must be a list`;
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i], parent: frame, index: i, depth: frame.depth + 1 });
  }
  return undefined;
};

const controllerTrace = record({
  file: str,
  evaluator: record({ kind: str }),
  budgets: record({ initialPages: num, maxActivationsPerIteration: num, maxIterations: num, maxOpenedNodes: num, maxSearches: num }),
  steps: list(
    record({
      step: num,
      iteration: num,
      action: record({ type: str }),
      decidedBy: str,
      valid: bool,
      utility: optional(num),
      why: optional(str),
      error: optional(str),
      changes: list(record({ id: str, from: str, to: str })),
      budgetLeft: record({ iterations: num, activationsThisIteration: num, openedNodes: num, searches: num }),
    }),
  ),
  stop: record({ reason: str, iteration: num, note: str }),
  subgraph: record({
    nodes: list(record({ id: str, type: str, label: str, page: num, state: oneOf('inactive', 'active', 'opened', 'pruned'), regionId: optional(str), relevance: optional(num) })),
    edges: list(record({ from: str, to: str, type: str })),
  }),
});

const topics = record({
  k: num,
  selected: list(record({ topic: num, label: str, weight: num, terms: optional(list(str)) })),
  lift: list(record({ itemId: str, nodeId: optional(str), base: num, withTopics: num, rankBefore: optional(num), rankAfter: optional(num) })),
});

const retrievedItem = record({
  itemId: str,
  file: str,
  title: str,
  modality: str,
  rank: nonNegInt,
  scores,
  repeated: bool,
  keptNodeIds: list(str),
  tokens: record({ whole: num, kept: num }),
  tree: optional(traceTree),
  controller: optional(controllerTrace),
});

const traceRound = record({
  round: int,
  query: str,
  routing: record({ aggregate: bool, reason: str, modalities: list(str) }),
  candidates: list(record({ itemId: str, scores })),
  retrieved: list(retrievedItem),
  addedItemIds: list(str),
  critic: optional(record({ sufficient: bool, missing: list(str), followUpQuery: optional(str), source: str })),
  topics: optional(topics),
});

const citation = record({ marker: int, itemId: str, nodeId: str, file: str, anchor, text: str });

const askTrace: Check = (v, p) => {
  if (!isRecord(v)) return `${p} must be an object`;
  if (v.schema !== 'canopy.trace') return `${p}.schema must be "canopy.trace"`;
  if (v.version !== 1) return `${p}.version ${String(v.version)} is not supported (expected 1)`;
  return record({
    id: str,
    createdAt: str,
    question: str,
    settings: record({ topK: num, maxRounds: num, branchingFactor: num, compressor: record({ name: str }), critic: str, reader: str, readerTokenCap: num, encoderId: str }),
    rounds: list(traceRound, 1000),
    stop: record({ reason: str, round: num, note: str }),
    readerInput: record({
      text: str,
      tokens: num,
      truncated: bool,
      regions: list(record({ itemId: str, nodeId: str })),
      images: optional(list(record({ ref: str, file: str, page: nonNegInt, bbox: optional(bbox), width: nonNegInt, height: nonNegInt, bytes: nonNegInt }))),
      notes: optional(list(str)),
    }),
    answer: record({ mode: oneOf('extractive', 'llm'), text: str, citations: list(citation), model: optional(str), notes: optional(list(str)) }),
    totals: record({ evidenceTokens: num, uncompressedTokens: num, items: num, keptRegions: num }),
    replay: optional(record({ of: str, notes: list(str), changed: record({}) })),
  })(v, p);
};

const base64: Check = (v, p) => {
  if (typeof v !== 'string') return `${p} must be a base64 string`;
  if (v.length > Math.ceil(MAX_PDF_BYTES / 3) * 4) return `${p} is larger than ${MAX_PDF_BYTES} bytes`;
  return /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0 ? undefined : `${p} must be a base64 string`;
};

const traceSummary = object({
  name: shortStr,
  id: str,
  question: str,
  createdAt: str,
  mode: oneOf('extractive', 'llm'),
  evidenceTokens: num,
  replayOf: optional(str),
});

const share: Check = (v, p) => num(v, p) ?? ((v as number) >= 0 && (v as number) <= 1 ? undefined : `${p} must be from 0 to 1`);

const trainingFigures = record({
  decisionAccuracy: share,
  decisions: nonNegInt,
  pairAccuracy: share,
  pairs: nonNegInt,
  goldRecall: share,
  goldSpans: nonNegInt,
  evidenceTokens: nonNegInt,
  wholeTokens: nonNegInt,
  tokenShare: num,
  prunedItemShare: share,
  items: nonNegInt,
  questions: nonNegInt,
});

const preferenceCounts = record({ pairs: nonNegInt, refine: nonNegInt, keepWhole: nonNegInt, identical: nonNegInt, itemsWithGold: nonNegInt, itemsWithoutGold: nonNegInt });

const trainingCheckpoint = record({
  id: shortStr,
  createdAt: str,
  active: bool,
  baseEncoderId: str,
  rank: nonNegInt,
  seed: optional(int),
  bestEpoch: optional(nonNegInt),
  epochs: optional(nonNegInt),
  recipe: optional(str),
  trainedOn: record({ questions: nonNegInt, annotations: nonNegInt, pairs: nonNegInt, validationPairs: nonNegInt }),
  heldOutQuestions: optional(nonNegInt),
  before: optional(trainingFigures),
  after: optional(trainingFigures),
  validation: optional(record({ before: trainingFigures, after: trainingFigures })),
});

const trainingReport: Check = record({
  checkpoints: list(trainingCheckpoint, 10_000),
  activeNote: optional(str),
  lastRun: optional(
    record({
      checkpointId: optional(str),
      questions: record({ total: nonNegInt, train: nonNegInt, validation: nonNegInt, heldOut: nonNegInt }),
      annotations: record({ total: nonNegInt, lost: nonNegInt, corrupt: nonNegInt }),
      preferences: record({ train: preferenceCounts, validation: preferenceCounts, heldOut: preferenceCounts }),
      prunePairs: record({ train: nonNegInt, validation: nonNegInt }),
    }),
  ),
});

const webviewNotificationParams: { [K in keyof WebviewNotificationMap]: Check } = {
  'host/hello': object({ protocolVersion: int, view: placeholderView }),
  'inspector/showView': object({ view: placeholderView }),
  'inspector/showTrace': object({ trace: askTrace }),
  'inspector/busy': object({ question: str }),
  'inspector/reveal': object({ itemId: str, nodeId: str }),
  'inspector/compare': object({ base: askTrace, other: askTrace }),
  'inspector/showTraining': object({ report: trainingReport }),
};

/** Result payloads the webview checks before trusting them. */
export const hostRequestResults: { [K in keyof HostRequestMap]: Check } = {
  'inspector/getView': placeholderView,
  'source/open': object({ opened: bool }),
  'pdf/get': object({ file: str, data: base64 }),
  'traces/list': object({ traces: list(traceSummary, 100_000) }),
  'traces/get': object({ trace: askTrace }),
  'trace/replay': object({ trace: askTrace }),
  'gold/mark': object({ annotationId: str, added: bool, question: str }),
};

const has = <T extends object>(table: T, key: unknown): key is keyof T =>
  typeof key === 'string' && Object.prototype.hasOwnProperty.call(table, key);

function fail<T>(message: string): Validation<T> {
  return { ok: false, error: { code: 'E_PROTOCOL', message } };
}

/** Validates a message arriving at the host from the webview. */
export function validateWebviewToHost(raw: unknown): Validation<WebviewToHostMessage> {
  if (!isRecord(raw)) return fail('message must be an object');
  if (raw.kind === 'request') {
    const shape = object({ kind: str, id: nonNegInt, method: str, params: () => undefined })(raw, 'message');
    if (shape) return fail(shape);
    if (!has(hostRequestParams, raw.method)) return fail(`unknown request method ${JSON.stringify(raw.method)}`);
    const problem = hostRequestParams[raw.method](raw.params, 'params');
    return problem ? fail(problem) : { ok: true, value: raw as WebviewToHostMessage };
  }
  if (raw.kind === 'notify') {
    const shape = object({ kind: str, method: str, params: () => undefined })(raw, 'message');
    if (shape) return fail(shape);
    if (!has(hostNotificationParams, raw.method)) return fail(`unknown notification ${JSON.stringify(raw.method)}`);
    const problem = hostNotificationParams[raw.method](raw.params, 'params');
    return problem ? fail(problem) : { ok: true, value: raw as WebviewToHostMessage };
  }
  return fail(`unknown message kind ${JSON.stringify(raw.kind)}`);
}

/** Validates a message arriving at the webview from the host. */
export function validateHostToWebview(raw: unknown): Validation<HostToWebviewMessage> {
  if (!isRecord(raw)) return fail('message must be an object');
  if (raw.kind === 'response') {
    if (nonNegInt(raw.id, 'id')) return fail('response id must be a non-negative integer');
    if (raw.ok === true) return { ok: true, value: raw as HostToWebviewMessage };
    if (raw.ok === false) {
      const problem = object({ code: str, message: str })(raw.error, 'error');
      return problem ? fail(problem) : { ok: true, value: raw as HostToWebviewMessage };
    }
    return fail('response must have ok: true or ok: false');
  }
  if (raw.kind === 'notify') {
    if (!has(webviewNotificationParams, raw.method)) return fail(`unknown notification ${JSON.stringify(raw.method)}`);
    const problem = webviewNotificationParams[raw.method](raw.params, 'params');
    return problem ? fail(problem) : { ok: true, value: raw as HostToWebviewMessage };
  }
  return fail(`unknown message kind ${JSON.stringify(raw.kind)}`);
}

/** Validates a request's result on the webview side, for the method it answered. */
export function validateResult<M extends keyof HostRequestMap>(method: M, result: unknown): Validation<HostRequestMap[M]['result']> {
  const problem = hostRequestResults[method](result, 'result');
  return problem ? fail(problem) : { ok: true, value: result as HostRequestMap[M]['result'] };
}

/** Whether a value is a trace the inspector can render (the same check a showTrace message gets). */
export function isAskTrace(v: unknown): boolean {
  return askTrace(v, 'trace') === undefined;
}

/** Why a value is not a renderable trace, or undefined. */
export function traceProblem(v: unknown): string | undefined {
  return askTrace(v, 'trace');
}

/** Why a value is not a training report the inspector can render, or undefined. */
export function trainingReportProblem(v: unknown): string | undefined {
  return trainingReport(v, 'report');
}

export function isPlaceholderView(v: unknown): v is PlaceholderView {
  return placeholderView(v, 'view') === undefined;
}
