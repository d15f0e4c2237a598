/**
 * The ChatModel for any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, LM Studio,
 * vLLM, llama.cpp server, …) through the `openai` package (design §8).
 *
 * Retries are the package's own: 408/409/429/5xx, connection failures and timeouts before an
 * answer starts (but not a refused connection: nothing listens there, and the call fails at once),
 * exponential backoff with jitter, `retry-after-ms` / `Retry-After` honoured up to a
 * minute (`maxRetries`). A request, once its answer streams, is never retried by the package, so
 * text passed to `onDelta` is never sent twice. What the package lacks is added around it:
 *  - a request timeout that is the longest silence allowed: the package's timeout until the
 *    response starts, then between chunks (a long answer that keeps streaming is not cut off);
 *  - a total time budget over the whole call, the package's retries and waits included; a
 *    `Retry-After` beyond what is left of it fails at once, saying so, instead of waiting;
 *  - the response body capped in bytes (as it is read, so a huge or endless body never sits in
 *    memory) and the answer in characters; passing either is an error, not a silent cut;
 *  - every retry logged, and errors that name the endpoint and the status.
 * Errors are LlmError (E_LLM) naming the endpoint host and the status. The API key is handed in
 * by the caller (SecretStorage in the extension, an environment variable in the CLI), is sent
 * only in the Authorization header, and is redacted from every message this module produces.
 */
import type OpenAI from 'openai';
import { CancelledError } from '../errors';
import { silentLogger, systemClock, type Clock, type Logger } from '../ports';
import { LlmError, redactSecrets, type ChatMessage, type ChatModel, type ChatOptions, type ChatResult, type ChatUsage, type LlmFailureKind } from './llm';

/**
 * The `openai` package, loaded at the first call rather than with this module: it is some 230
 * modules, and every `canopy` command, the extension and the tests import this file whether or
 * not an LLM is configured.
 */
let openAi: typeof OpenAI | undefined;
function openAiClass(): typeof OpenAI {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  openAi ??= (require('openai') as typeof import('openai')).default;
  return openAi;
}

export interface OpenAiCompatibleOptions {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  /** Absent or empty for local servers that need none: then no Authorization header is sent. */
  apiKey?: string;
  /** Longest silence from the server: until the first byte, and between streamed chunks (default 60 s). */
  requestTimeoutMs?: number;
  /** Bound on the whole call, retries and waits included (default 180 s). */
  totalTimeoutMs?: number;
  /** Retries after the first request, by the `openai` package (default 3). */
  maxRetries?: number;
  /** Cap on the raw response body (default 16 MiB). */
  maxResponseBytes?: number;
  /** Cap on the answer text (default 200,000 characters). */
  maxResponseChars?: number;
  /** Stream the answer with SSE (default true). */
  stream?: boolean;
  /** Overrides the guess from the host (loopback hosts are local, everything else remote). */
  remote?: boolean;
  /** `max_completion_tokens` for OpenAI's reasoning models, which reject `max_tokens` (default `max_tokens`). */
  tokenLimitField?: 'max_tokens' | 'max_completion_tokens';
  /** Send `response_format: {type: 'json_object'}` when a caller asks for JSON (default false: not every server accepts it). */
  jsonResponseFormat?: boolean;
  logger?: Logger;
  clock?: Clock;
}

const defaults = {
  requestTimeoutMs: 60_000,
  totalTimeoutMs: 180_000,
  maxRetries: 3,
  maxResponseBytes: 16 * 1024 * 1024,
  maxResponseChars: 200_000,
};

/** The CLI's key: `CANOPY_LLM_API_KEY`, else `OPENAI_API_KEY`; undefined when neither is set. */
export function apiKeyFromEnv(env: Record<string, string | undefined>): string | undefined {
  const key = env.CANOPY_LLM_API_KEY || env.OPENAI_API_KEY;
  return key ? key : undefined;
}

/** True for hosts that never leave the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Why the call's own controller fired. */
type AbortWhy = 'cancel' | 'idle' | 'deadline' | 'refused';

/**
 * The server refused the connection (ECONNREFUSED): nothing listens at that address, which a
 * retry seconds later rarely changes (an Ollama or LM Studio that is not running), so the call
 * fails at once instead of waiting through the package's retries.
 */
class ConnectionRefused extends Error {
  constructor(readonly code: string) {
    super('connection refused');
  }
}

class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response body passed ${limit} bytes`);
  }
}

/** A call's failure, as the error message will describe it. */
interface Failure {
  kind: LlmFailureKind;
  /** Whether the package retries this failure (then, when it is the last one, it gave up). */
  retryable: boolean;
  detail: string;
  status?: number;
}

/** What one call saw, filled in by its fetch wrapper as the package's attempts go by. */
interface CallState {
  /** Requests sent (the first and the package's retries). */
  attempts: number;
  /** Characters passed to `onDelta`. */
  chars: number;
  /** A `Retry-After` (ms) the call refused to wait for: it lay beyond the total time budget. */
  refusedRetryAfterMs?: number;
}

const RETRYABLE_STATUS = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

export class OpenAiCompatibleChatModel implements ChatModel {
  readonly id: string;
  readonly remote: boolean;
  /** `host[:port]` of the endpoint: what messages name. */
  readonly host: string;
  private readonly baseUrl: string;
  private readonly o: Required<Pick<OpenAiCompatibleOptions, keyof typeof defaults>> & OpenAiCompatibleOptions;
  private readonly logger: Logger;
  private readonly clock: Clock;

  constructor(options: OpenAiCompatibleOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new LlmError('config', `The LLM base URL is not a valid URL: ${JSON.stringify(redactSecrets(options.baseUrl, [options.apiKey]).slice(0, 200))}.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new LlmError('config', `The LLM base URL must start with http:// or https:// (got ${url.protocol}).`);
    }
    if (!options.model.trim()) throw new LlmError('config', `No LLM model is configured for ${url.host}.`);
    // Credentials in the URL would travel into logs and traces with it: refuse them, name no part.
    if (url.username || url.password) throw new LlmError('config', `The LLM base URL for ${url.hostname} must not contain credentials; configure the API key instead.`);
    this.host = url.host;
    this.baseUrl = url.toString().replace(/\/+$/, '');
    this.o = { ...defaults, ...stripUndefined(options) };
    this.remote = options.remote ?? !isLoopbackHost(url.hostname);
    this.id = `openai-compatible:${options.model}@${url.host}`;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
  }

  async chat(messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    if (options.signal?.aborted) throw new CancelledError();
    const started = this.clock.now();
    const state: CallState = { attempts: 0, chars: 0 };
    try {
      const result = await this.call(messages, options, started + this.o.totalTimeoutMs, state);
      return { ...result, attempts: state.attempts, ms: this.clock.now() - started };
    } catch (err) {
      if (err instanceof CancelledError) throw err;
      if (err instanceof CallbackFailure) throw err.inner;
      const failure = this.classify(err, state.chars);
      const n = Math.max(1, state.attempts);
      const tries = `${n} attempt${n === 1 ? '' : 's'}`;
      if (state.refusedRetryAfterMs !== undefined) {
        throw this.error(failure, `${failure.detail}; the server asked to retry after ${seconds(state.refusedRetryAfterMs)}, beyond the total time budget of ${seconds(this.o.totalTimeoutMs)} (after ${tries})`, n);
      }
      const suffix = failure.retryable ? ` (gave up after ${tries})` : n > 1 ? ` (after ${tries})` : '';
      throw this.error(failure, `${failure.detail}${suffix}`, n);
    }
  }

  /** The whole call, the package's retries included. Settles as soon as the caller's signal, the idle timer or the deadline fires. */
  private async call(messages: ChatMessage[], options: ChatOptions, deadline: number, state: CallState): Promise<Omit<ChatResult, 'attempts' | 'ms'>> {
    const controller = new AbortController();
    let why: AbortWhy | undefined;
    const fire = (reason: AbortWhy) => {
      if (why) return;
      why = reason;
      controller.abort();
    };
    const onCallerAbort = () => fire('cancel');
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const deadlineTimer = setTimeout(() => fire('deadline'), Math.max(0, deadline - this.clock.now()));
    // The idle timer runs once a response has started (until then the package's timeout governs,
    // and the package retries): it is re-armed by every chunk of the body.
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const idle = {
      arm: () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => fire('idle'), this.o.requestTimeoutMs);
      },
      touch: () => {
        if (idleTimer !== undefined) idle.arm();
      },
    };
    // Rejects the moment the controller fires, whatever the package is doing (a retry wait
    // included), so cancellation and timeouts never wait on a socket or a timer.
    let stopWaiting: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => reject(this.abortError(why ?? 'cancel'));
      stopWaiting = () => controller.signal.removeEventListener('abort', onAbort);
      controller.signal.addEventListener('abort', onAbort, { once: true });
    });
    const work = this.request(messages, options, controller, idle, state, deadline, () => why, () => fire('refused'));
    work.catch(() => undefined); // the loser of the race may reject later; nobody listens then
    try {
      return await Promise.race([work, aborted]);
    } finally {
      stopWaiting?.();
      clearTimeout(deadlineTimer);
      clearTimeout(idleTimer);
      options.signal?.removeEventListener('abort', onCallerAbort);
      controller.abort(); // release the socket if the request is still open
    }
  }

  private abortError(why: AbortWhy): Error {
    if (why === 'cancel') return new CancelledError();
    if (why === 'refused') return new ConnectionRefused('ECONNREFUSED');
    return new CallTimeout(why);
  }

  private async request(
    messages: ChatMessage[],
    options: ChatOptions,
    controller: AbortController,
    idle: { arm(): void; touch(): void },
    state: CallState,
    deadline: number,
    why: () => AbortWhy | undefined,
    refused: () => void,
  ): Promise<Omit<ChatResult, 'attempts' | 'ms'>> {
    const client = this.client(idle, state, deadline, why, refused);
    const body: Record<string, unknown> = { model: this.o.model, messages: messages.map(wireMessage) };
    if (options.maxTokens !== undefined) body[this.o.tokenLimitField ?? 'max_tokens'] = options.maxTokens;
    if (options.temperature !== undefined) body.temperature = options.temperature;
    if (options.json && this.o.jsonResponseFormat) body.response_format = { type: 'json_object' };
    const requestOptions = { signal: controller.signal };
    const stream = this.o.stream ?? true;
    // A throwing callback is the caller's bug, not a transport failure: it must not be retried.
    const emit = (piece: string) => {
      try {
        options.onDelta?.(piece);
      } catch (err) {
        throw new CallbackFailure(err);
      }
    };
    const checkChars = (n: number) => {
      if (n > this.o.maxResponseChars) throw new AnswerTooLongError(this.o.maxResponseChars);
    };

    if (!stream) {
      const completion = (await client.chat.completions.create(
        body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        requestOptions,
      )) as OpenAI.Chat.ChatCompletion;
      const choice = completion?.choices?.[0];
      if (!choice || typeof choice.message !== 'object' || choice.message === null) throw new ProtocolError('the response has no choices — is the base URL an OpenAI-compatible /v1 endpoint?');
      const text = typeof choice.message.content === 'string' ? choice.message.content : '';
      checkChars(text.length);
      state.chars = text.length;
      if (text) emit(text);
      return { text, model: completion.model || this.o.model, finishReason: choice.finish_reason ?? undefined, usage: usageOf(completion.usage) };
    }

    const chunks = (await client.chat.completions.create(
      { ...body, stream: true } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
      requestOptions,
    )) as AsyncIterable<OpenAI.Chat.ChatCompletionChunk>;
    let text = '';
    let model = this.o.model;
    let finishReason: string | undefined;
    let usage: ChatUsage | undefined;
    let events = 0;
    for await (const chunk of chunks) {
      if (why()) break;
      events++;
      if (chunk.model) model = chunk.model;
      if (chunk.usage) usage = usageOf(chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const piece = typeof choice.delta?.content === 'string' ? choice.delta.content : '';
      if (piece) {
        checkChars(text.length + piece.length);
        text += piece;
        state.chars = text.length;
        emit(piece);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    // The package ends a stream quietly when it is aborted; the race in call() reports why.
    const stopped = why();
    if (stopped) throw this.abortError(stopped);
    // A server that ignores `stream: true` answers with plain JSON, which holds no SSE events:
    // that must not pass for an empty answer.
    if (events === 0) throw new ProtocolError('the server sent no stream events (does it support streaming? try turning streaming off)');
    return { text, model, finishReason, usage };
  }

  /**
   * A client for one call. Its fetch wrapper sees every attempt the package makes: it counts
   * them, logs the ones the package will retry, refuses a `Retry-After` beyond the budget (by the
   * package's own `x-should-retry: false`), arms the idle timer once an answer starts and caps
   * the body's size.
   */
  private client(idle: { arm(): void; touch(): void }, state: CallState, deadline: number, why: () => AbortWhy | undefined, refused: () => void): OpenAI {
    const limit = this.o.maxResponseBytes;
    const maxRetries = Math.max(0, this.o.maxRetries);
    const retrying = (detail: string) => this.logger.log('warn', this.redact(`LLM ${this.host}: ${detail}; retrying (attempt ${state.attempts + 1} of ${maxRetries + 1})`));
    const limitedFetch = async (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      state.attempts++;
      const willRetry = state.attempts <= maxRetries;
      let res: Response;
      try {
        res = await fetch(url, init);
      } catch (err) {
        // Nothing listens there: fail now rather than through the package's retries (ConnectionRefused).
        if (!isAbort(err) && transportCode(err) === 'ECONNREFUSED') {
          refused();
          throw err;
        }
        // The package retries connection failures and its own timeouts, not our aborts.
        if (willRetry && !why()) retrying(isAbort(err) ? `timed out: no response within ${seconds(this.o.requestTimeoutMs)}` : `could not connect (${transportCode(err)})`);
        throw err;
      }
      let headers = res.headers;
      if (!res.ok && RETRYABLE_STATUS(res.status) && res.headers.get('x-should-retry') !== 'false' && willRetry) {
        const wait = retryAfterMs(res.headers);
        if (wait !== undefined && wait >= deadline - this.clock.now()) {
          state.refusedRetryAfterMs = wait;
          headers = new Headers(res.headers);
          headers.set('x-should-retry', 'false');
        } else retrying(`HTTP ${res.status}${statusText(res.status)}`);
      }
      if (res.ok) idle.arm();
      if (!res.body) return headers === res.headers ? res : new Response(null, { status: res.status, statusText: res.statusText, headers });
      let bytes = 0;
      const counted = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, ctl) {
            bytes += chunk.byteLength;
            idle.touch();
            if (bytes > limit) ctl.error(new ResponseTooLargeError(limit));
            else ctl.enqueue(chunk);
          },
        }),
      );
      return new Response(counted, { status: res.status, statusText: res.statusText, headers });
    };
    const key = this.o.apiKey;
    return new (openAiClass())({
      baseURL: this.baseUrl,
      // The SDK insists on some credential; without a key it gets a placeholder and the header is
      // dropped below, so a keyless local server sees no Authorization at all and the SDK never
      // falls back to reading OPENAI_API_KEY from the environment behind the caller's back.
      apiKey: key || 'no-key',
      defaultHeaders: key ? undefined : { Authorization: null },
      organization: null,
      project: null,
      maxRetries,
      // The package's timeout bounds each attempt until its response starts; the idle timer takes over then.
      timeout: this.o.requestTimeoutMs,
      logLevel: 'off',
      fetch: limitedFetch as unknown as typeof fetch,
    });
  }

  private classify(err: unknown, charsEmitted: number): Failure {
    const started = charsEmitted > 0;
    if (err instanceof CallTimeout) {
      return err.why === 'deadline'
        ? { kind: 'budget', retryable: false, detail: `did not finish within the total time budget of ${seconds(this.o.totalTimeoutMs)}` }
        : {
            kind: 'timeout',
            retryable: !started,
            detail: started
              ? `the stream stalled: no data for ${seconds(this.o.requestTimeoutMs)} after ${charsEmitted} characters`
              : `timed out: no response within ${seconds(this.o.requestTimeoutMs)}`,
          };
    }
    if (err instanceof ResponseTooLargeError) {
      return { kind: 'size', retryable: false, detail: `the response passed the size limit of ${err.limit} bytes and was cut off` };
    }
    if (err instanceof AnswerTooLongError) {
      return { kind: 'size', retryable: false, detail: `the answer passed the limit of ${err.limit} characters and was cut off` };
    }
    if (err instanceof ConnectionRefused) {
      return { kind: 'connection', retryable: false, detail: `could not connect (${err.code}): nothing is listening at ${this.host} — is the server running?` };
    }
    if (err instanceof ProtocolError) return { kind: 'protocol', retryable: false, detail: err.message };
    if (err instanceof SyntaxError) {
      return { kind: 'protocol', retryable: false, detail: `the response is not valid chat-completions JSON — is the base URL an OpenAI-compatible /v1 endpoint?` };
    }
    const OpenAI = openAiClass();
    if (err instanceof OpenAI.APIConnectionTimeoutError) {
      return { kind: 'timeout', retryable: !started, detail: `timed out: no response within ${seconds(this.o.requestTimeoutMs)}` };
    }
    if (err instanceof OpenAI.APIConnectionError) {
      return { kind: 'connection', retryable: !started, detail: `could not connect (${transportCode(err)})` };
    }
    if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
      const status = err.status;
      const retryable = !started && RETRYABLE_STATUS(status);
      const hint = status === 401 || status === 403 ? ' — check the API key' : status === 404 ? ` — check the base URL and the model name "${this.o.model}"` : '';
      const server = serverMessage(err);
      return { kind: 'http', status, retryable, detail: `HTTP ${status}${statusText(status)}${server ? `: ${server}` : ''}${hint}` };
    }
    if (err instanceof OpenAI.APIError) {
      // An error event inside an SSE stream (no status): the server gave up mid-answer.
      const server = serverMessage(err);
      return { kind: 'http', retryable: false, detail: `the server reported an error mid-stream${server ? `: ${server}` : ''}` };
    }
    // undici's "terminated" / "other side closed" / ECONNRESET while the body streams.
    const code = transportCode(err);
    const transport = err instanceof TypeError && (/terminated|fetch failed|network|socket/i.test(err.message) || err.cause !== undefined);
    if (transport || /ECONNRESET|EPIPE|UND_ERR_SOCKET|other side closed/i.test(code)) {
      return {
        kind: 'connection',
        retryable: !started,
        detail: started ? `the connection was lost mid-stream after ${charsEmitted} characters (${code})` : `the connection was lost (${code})`,
      };
    }
    return { kind: 'protocol', retryable: false, detail: `unexpected failure: ${err instanceof Error ? err.message : String(err)}` };
  }

  private error(failure: Failure, detail: string, attempts: number): LlmError {
    const sentence = /[.?!]$/.test(detail) ? detail : `${detail}.`;
    return new LlmError(failure.kind, this.redact(`LLM request to ${this.host} failed: ${sentence}`), { status: failure.status, attempts });
  }

  private redact(text: string): string {
    return redactSecrets(text, [this.o.apiKey]);
  }
}

class CallTimeout extends Error {
  constructor(readonly why: 'idle' | 'deadline') {
    super(why);
  }
}

class AnswerTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`answer passed ${limit} characters`);
  }
}

class ProtocolError extends Error {}

class CallbackFailure extends Error {
  constructor(readonly inner: unknown) {
    super('onDelta threw');
  }
}

function usageOf(u: OpenAI.CompletionUsage | null | undefined): ChatUsage | undefined {
  if (!u) return undefined;
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: u.total_tokens };
}

/** `retry-after-ms` (non-standard, OpenAI sends it), else `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = headers.get('retry-after');
  if (!ra) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.round(Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

function serverMessage(err: InstanceType<typeof OpenAI.APIError>): string {
  const body = err.error as unknown;
  let msg = '';
  if (body && typeof body === 'object' && 'message' in body && typeof (body as { message: unknown }).message === 'string') {
    msg = (body as { message: string }).message;
  } else if (typeof body === 'string') msg = body;
  msg = msg.replace(/\s+/g, ' ').trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg;
}

function statusText(status: number): string {
  const names: Record<number, string> = {
    400: ' Bad Request',
    401: ' Unauthorized',
    403: ' Forbidden',
    404: ' Not Found',
    408: ' Request Timeout',
    409: ' Conflict',
    413: ' Payload Too Large',
    429: ' Too Many Requests',
    500: ' Internal Server Error',
    502: ' Bad Gateway',
    503: ' Service Unavailable',
    504: ' Gateway Timeout',
  };
  return names[status] ?? '';
}

/** The innermost transport error code (ECONNREFUSED, UND_ERR_SOCKET …), else the innermost message, for messages. */
function transportCode(err: unknown): string {
  let code = '';
  let message = '';
  let e: unknown = err;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 6; depth++) {
    const o = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof o.code === 'string' && o.code) code = o.code;
    if (typeof o.message === 'string' && o.message) message = o.message;
    e = o.cause;
  }
  return (code || message || 'unknown error').slice(0, 120);
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${+(ms / 1000).toFixed(1)} s`;
}

function isAbort(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError';
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** A message as the OpenAI chat API takes it: plain text, or text and labelled images as content parts. */
function wireMessage(m: ChatMessage): Record<string, unknown> {
  if (!m.images?.length) return { role: m.role, content: m.content };
  const parts: Array<Record<string, unknown>> = [{ type: 'text', text: m.content }];
  for (const image of m.images) {
    parts.push({ type: 'text', text: `${image.label}:` });
    parts.push({ type: 'image_url', image_url: { url: `data:${image.mime};base64,${Buffer.from(image.data).toString('base64')}` } });
  }
  return { role: m.role, content: parts };
}
