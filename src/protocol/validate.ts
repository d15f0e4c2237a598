/**
 * Validation of incoming protocol messages at the boundary. Both sides treat the other as
 * untrusted: a message that does not match the protocol is rejected with a WireError and has
 * no side effect. Hand-written checks keep the webview bundle small and the rules visible.
 */
import type {
  HostNotificationMap,
  HostRequestMap,
  HostToWebviewMessage,
  PlaceholderView,
  WebviewNotificationMap,
  WebviewToHostMessage,
  WireError,
} from './messages';

export type Validation<T> = { ok: true; value: T } | { ok: false; error: WireError };

const MAX_STRING = 1_000_000;

type Check = (value: unknown, path: string) => string | undefined;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const str: Check = (v, p) => (typeof v === 'string' && v.length <= MAX_STRING ? undefined : `${p} must be a string`);
const int: Check = (v, p) => (typeof v === 'number' && Number.isSafeInteger(v) ? undefined : `${p} must be an integer`);
const nonNegInt: Check = (v, p) => int(v, p) ?? ((v as number) >= 0 ? undefined : `${p} must be ≥ 0`);
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
  }),
};

const hostNotificationParams: { [K in keyof HostNotificationMap]: Check } = {
  'webview/ready': object({ protocolVersion: int }),
  'webview/error': object({ message: str }),
};

/**
 * Traces are large and produced by the core; the webview checks the envelope and the parts it
 * dereferences (rounds, answer, citations), and renders every string with textContent.
 */
const askTrace: Check = (v, p) => {
  if (!isRecord(v)) return `${p} must be an object`;
  if (v.schema !== 'canopy.trace') return `${p}.schema must be "canopy.trace"`;
  if (v.version !== 1) return `${p}.version ${String(v.version)} is not supported (expected 1)`;
  if (typeof v.question !== 'string') return `${p}.question must be a string`;
  if (!Array.isArray(v.rounds) || !v.rounds.every(isRecord)) return `${p}.rounds must be a list of objects`;
  for (const [i, r] of (v.rounds as Record<string, unknown>[]).entries()) {
    if (!Array.isArray(r.retrieved) || !r.retrieved.every(isRecord)) return `${p}.rounds[${i}].retrieved must be a list of objects`;
  }
  const a = v.answer;
  if (!isRecord(a) || typeof a.text !== 'string' || (a.mode !== 'extractive' && a.mode !== 'llm')) return `${p}.answer must have text and mode`;
  if (!Array.isArray(a.citations) || !a.citations.every((c) => isRecord(c) && typeof c.file === 'string' && isRecord(c.anchor) && Number.isSafeInteger(c.marker))) {
    return `${p}.answer.citations must be a list of citations`;
  }
  if (!isRecord(v.totals) || !isRecord(v.stop)) return `${p} must have totals and stop`;
  return undefined;
};

const webviewNotificationParams: { [K in keyof WebviewNotificationMap]: Check } = {
  'host/hello': object({ protocolVersion: int, view: placeholderView }),
  'inspector/showView': object({ view: placeholderView }),
  'inspector/showTrace': object({ trace: askTrace }),
  'inspector/busy': object({ question: str }),
};

/** Result payloads the webview checks before trusting them. */
export const hostRequestResults: { [K in keyof HostRequestMap]: Check } = {
  'inspector/getView': placeholderView,
  'source/open': object({ opened: (v, p) => (typeof v === 'boolean' ? undefined : `${p} must be a boolean`) }),
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

export function isPlaceholderView(v: unknown): v is PlaceholderView {
  return placeholderView(v, 'view') === undefined;
}
