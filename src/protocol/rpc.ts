/**
 * The tiny request/reply helper used on both ends of the protocol. Each end is given a `post`
 * function (webview.postMessage on the host, vscode.postMessage in the webview) and fed every
 * incoming raw message through `receive`, which validates before anything else happens.
 */
import {
  type HostNotificationMap,
  type HostRequestMap,
  type HostRequestMethod,
  type HostToWebviewMessage,
  type NotificationMessage,
  type WebviewNotificationMap,
  type WebviewToHostMessage,
  type WireError,
} from './messages';
import { validateHostToWebview, validateResult, validateWebviewToHost } from './validate';

export type RequestHandlers = {
  [M in HostRequestMethod]: (params: HostRequestMap[M]['params']) => Promise<HostRequestMap[M]['result']>;
};

export type HostNotificationHandler = (message: NotificationMessage<HostNotificationMap>) => void;
export type WebviewNotificationHandler = (message: NotificationMessage<WebviewNotificationMap>) => void;

/** An error a handler throws on purpose, with a code the webview can show. */
export class ProtocolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

function toWireError(err: unknown): WireError {
  if (err && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return { code: (err as { code: string }).code, message: err instanceof Error ? err.message : String(err) };
  }
  return { code: 'E_INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

/**
 * The host's end: answers requests, receives and sends notifications. A host may serve a subset
 * of the requests (a test host, an older host): a valid request it has no handler for is
 * answered with E_UNSUPPORTED. The extension's panel passes a complete RequestHandlers.
 */
export class HostEndpoint {
  constructor(
    private readonly post: (message: HostToWebviewMessage) => void,
    private readonly handlers: Partial<RequestHandlers>,
    private readonly onNotification: HostNotificationHandler,
    private readonly onRejected: (error: WireError) => void = () => undefined,
  ) {}

  notify<M extends keyof WebviewNotificationMap>(method: M, params: WebviewNotificationMap[M]): void {
    this.post({ kind: 'notify', method, params } as HostToWebviewMessage);
  }

  /** Validates and dispatches one raw message; resolves when a request has been answered. */
  async receive(raw: unknown): Promise<void> {
    const checked = validateWebviewToHost(raw);
    if (!checked.ok) {
      this.onRejected(checked.error);
      // Answer a malformed request when its id can be read, so the caller does not hang.
      const id = (raw as { kind?: unknown; id?: unknown } | null)?.id;
      if ((raw as { kind?: unknown } | null)?.kind === 'request' && Number.isSafeInteger(id) && (id as number) >= 0) {
        this.post({ kind: 'response', id: id as number, ok: false, error: checked.error });
      }
      return;
    }
    const message = checked.value;
    switch (message.kind) {
      case 'notify':
        this.onNotification(message);
        return;
      case 'request': {
        const handler = this.handlers[message.method] as ((params: unknown) => Promise<unknown>) | undefined;
        if (!handler) {
          this.post({ kind: 'response', id: message.id, ok: false, error: { code: 'E_UNSUPPORTED', message: `this host does not serve ${message.method}` } });
          return;
        }
        try {
          const result = await handler(message.params);
          this.post({ kind: 'response', id: message.id, ok: true, result } as HostToWebviewMessage);
        } catch (err) {
          this.post({ kind: 'response', id: message.id, ok: false, error: toWireError(err) });
        }
        return;
      }
      default: {
        const unreachable: never = message;
        throw new Error(`unhandled message ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

interface Pending {
  method: HostRequestMethod;
  resolve: (value: unknown) => void;
  reject: (error: ProtocolError) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The webview's end: sends requests and notifications, receives responses and notifications. */
export class WebviewClient {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly post: (message: WebviewToHostMessage) => void,
    private readonly onNotification: WebviewNotificationHandler,
    private readonly timeoutMs = 30_000,
  ) {}

  request<M extends HostRequestMethod>(method: M, params: HostRequestMap[M]['params']): Promise<HostRequestMap[M]['result']> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ProtocolError('E_TIMEOUT', `${method} got no answer in ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      this.post({ kind: 'request', id, method, params } as WebviewToHostMessage);
    });
  }

  notify<M extends keyof HostNotificationMap>(method: M, params: HostNotificationMap[M]): void {
    this.post({ kind: 'notify', method, params } as WebviewToHostMessage);
  }

  /** Validates and dispatches one raw message; returns the rejection, if any, for logging. */
  receive(raw: unknown): WireError | undefined {
    const checked = validateHostToWebview(raw);
    if (!checked.ok) return checked.error;
    const message = checked.value;
    switch (message.kind) {
      case 'notify':
        this.onNotification(message);
        return undefined;
      case 'response': {
        const waiting = this.pending.get(message.id);
        if (!waiting) return { code: 'E_PROTOCOL', message: `response to unknown request ${message.id}` };
        this.pending.delete(message.id);
        clearTimeout(waiting.timer);
        if (!message.ok) {
          waiting.reject(new ProtocolError(message.error.code, message.error.message));
          return undefined;
        }
        const result = validateResult(waiting.method, message.result);
        if (result.ok) waiting.resolve(result.value);
        else waiting.reject(new ProtocolError(result.error.code, result.error.message));
        return undefined;
      }
      default: {
        const unreachable: never = message;
        return { code: 'E_PROTOCOL', message: `unhandled message ${JSON.stringify(unreachable)}` };
      }
    }
  }
}
