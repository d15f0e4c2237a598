/**
 * Validation of incoming protocol messages at the boundary, through the schemas of messages.ts.
 * Both sides treat the other as untrusted: a message that does not match the protocol — an
 * unknown kind or method, a key the message does not name, a value of the wrong type or over a
 * size limit — is rejected with an E_PROTOCOL WireError naming the first problem, and has no side
 * effect. The envelope is read first, so an unknown method is reported as such.
 */
import * as z from 'zod/mini';
import { check, count, str } from '../contracts/validation';
import {
  WireError,
  hostNotifications,
  hostRequests,
  webviewNotifications,
  type HostRequestMap,
  type HostToWebviewMessage,
  type WebviewToHostMessage,
} from './messages';

export type Validation<T> = { ok: true; value: T } | { ok: false; error: WireError };

function fail<T>(message: string): Validation<T> {
  return { ok: false, error: { code: 'E_PROTOCOL', message } };
}

/** Checks a value against a schema, in the protocol's words. */
function validate<S extends z.core.$ZodType>(schema: S, value: unknown, root: string): Validation<z.output<S>> {
  const checked = check(schema, value, root, { unknownKey: 'is not part of the protocol' });
  return checked.ok ? checked : fail(checked.problem);
}

const has = <T extends object>(table: T, key: unknown): key is keyof T => typeof key === 'string' && Object.prototype.hasOwnProperty.call(table, key);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// The envelopes leave params and results to the method's own schema (a missing one is refused there).
const anything = z.optional(z.unknown());
const requestEnvelope = z.strictObject({ kind: z.literal('request'), id: count, method: str, params: anything });
const notifyEnvelope = z.strictObject({ kind: z.literal('notify'), method: str, params: anything });
const responseEnvelope = z.discriminatedUnion('ok', [
  z.strictObject({ kind: z.literal('response'), id: count, ok: z.literal(true), result: anything }),
  z.strictObject({ kind: z.literal('response'), id: count, ok: z.literal(false), error: WireError }),
]);

/** Validates a message arriving at the host from the webview. */
export function validateWebviewToHost(raw: unknown): Validation<WebviewToHostMessage> {
  if (!isRecord(raw)) return fail('message must be an object');
  if (raw.kind === 'request') {
    const envelope = validate(requestEnvelope, raw, 'message');
    if (!envelope.ok) return envelope;
    const { id, method } = envelope.value;
    if (!has(hostRequests, method)) return fail(`unknown request method ${JSON.stringify(method)}`);
    const params = validate(hostRequests[method].params, raw.params, 'params');
    return params.ok ? { ok: true, value: { kind: 'request', id, method, params: params.value } as WebviewToHostMessage } : params;
  }
  if (raw.kind === 'notify') {
    const envelope = validate(notifyEnvelope, raw, 'message');
    if (!envelope.ok) return envelope;
    const { method } = envelope.value;
    if (!has(hostNotifications, method)) return fail(`unknown notification ${JSON.stringify(method)}`);
    const params = validate(hostNotifications[method], raw.params, 'params');
    return params.ok ? { ok: true, value: { kind: 'notify', method, params: params.value } as WebviewToHostMessage } : params;
  }
  return fail(`unknown message kind ${JSON.stringify(raw.kind)}`);
}

/** Validates a message arriving at the webview from the host. A response's result is checked by validateResult, for the method it answers. */
export function validateHostToWebview(raw: unknown): Validation<HostToWebviewMessage> {
  if (!isRecord(raw)) return fail('message must be an object');
  if (raw.kind === 'response') {
    const response = validate(responseEnvelope, raw, 'response');
    return response.ok ? { ok: true, value: response.value as HostToWebviewMessage } : response;
  }
  if (raw.kind === 'notify') {
    const envelope = validate(notifyEnvelope, raw, 'message');
    if (!envelope.ok) return envelope;
    const { method } = envelope.value;
    if (!has(webviewNotifications, method)) return fail(`unknown notification ${JSON.stringify(method)}`);
    const params = validate(webviewNotifications[method], raw.params, 'params');
    return params.ok ? { ok: true, value: { kind: 'notify', method, params: params.value } as HostToWebviewMessage } : params;
  }
  return fail(`unknown message kind ${JSON.stringify(raw.kind)}`);
}

/** Validates a request's result on the webview side, for the method it answered. */
export function validateResult<M extends keyof HostRequestMap>(method: M, result: unknown): Validation<HostRequestMap[M]['result']> {
  return validate(hostRequests[method].result, result, 'result') as Validation<HostRequestMap[M]['result']>;
}
