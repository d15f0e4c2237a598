/**
 * The ChatModel for any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, LM Studio,
 * vLLM, llama.cpp server, …) through the `openai` package (design §8).
 *
 * The package's own retries and timeout are switched off and done here instead, so that the
 * behaviour is one documented, tested policy:
 *  - a request timeout is the longest silence allowed: until the first byte, and between chunks
 *    when streaming (a long answer that keeps streaming is not cut off);
 *  - a total time budget bounds the whole call, retries and their waits included;
 *  - retries with exponential backoff and jitter on 408/409/429/5xx, connection failures and
 *    timeouts, honouring `Retry-After` / `retry-after-ms`; never after text has been passed to
 *    `onDelta` (the caller would see it twice);
 *  - the response body is capped in bytes (as it is read, so a huge or endless body never sits
 *    in memory) and the answer in characters; passing either is an error, not a silent cut.
 * Errors are LlmError (E_LLM) naming the endpoint host and the status. The API key is handed in
 * by the caller (SecretStorage in the extension, an environment variable in the CLI), is sent
 * only in the Authorization header, and is redacted from every message this module produces.
 */
import OpenAI from 'openai';
import { CancelledError } from '../errors';
import { silentLogger, systemClock, type Clock, type Logger } from '../ports';
import { LlmError, redactSecrets, type ChatMessage, type ChatModel, type ChatOptions, type ChatResult, type ChatUsage, type LlmFailureKind } from './llm';

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
  /** Retries after the first request (default 3). */
  maxRetries?: number;
  /** First backoff delay; doubles per retry (default 500 ms). */
  retryBaseDelayMs?: number;
  /** Cap on a computed backoff delay (default 10 s). A server's Retry-After is honoured beyond it, within the total budget. */
  retryMaxDelayMs?: number;
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
  /** Jitter source in [0, 1); injectable so tests are deterministic. */
  random?: () => number;
  /** Waits between retries; injectable so tests can record delays instead of sleeping. Must reject when the signal fires. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

const defaults = {
  requestTimeoutMs: 60_000,
  totalTimeoutMs: 180_000,
  maxRetries: 3,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 10_000,
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

/** Why the attempt's own controller fired. */
type AbortWhy = 'cancel' | 'idle' | 'deadline';

class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response body passed ${limit} bytes`);
  }
}

/** One attempt's failure, before deciding whether to retry. */
interface Failure {
  kind: LlmFailureKind;
  retryable: boolean;
  detail: string;
  status?: number;
  retryAfterMs?: number;
}

export class OpenAiCompatibleChatModel implements ChatModel {
  readonly id: string;
  readonly remote: boolean;
  /** `host[:port]` of the endpoint: what messages name. */
  readonly host: string;
  private readonly baseUrl: string;
  private readonly o: Required<Pick<OpenAiCompatibleOptions, keyof typeof defaults>> & OpenAiCompatibleOptions;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;

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
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? abortableSleep;
  }

  async chat(messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    const signal = options.signal;
    if (signal?.aborted) throw new CancelledError();
    const started = this.clock.now();
    const deadline = started + this.o.totalTimeoutMs;
    const maxAttempts = 1 + Math.max(0, this.o.maxRetries);
    for (let attempt = 1; ; attempt++) {
      const progress = { chars: 0 };
      let failure: Failure;
      try {
        const result = await this.attempt(messages, options, deadline, progress);
        return { ...result, attempts: attempt, ms: this.clock.now() - started };
      } catch (err) {
        if (err instanceof CancelledError) throw err;
        if (err instanceof CallbackFailure) throw err.inner;
        failure = this.classify(err, progress.chars);
      }
      const tries = `${attempt} attempt${attempt === 1 ? '' : 's'}`;
      if (!failure.retryable || attempt >= maxAttempts) {
        const suffix = failure.retryable ? ` (gave up after ${tries})` : attempt > 1 ? ` (after ${tries})` : '';
        throw this.error(failure, `${failure.detail}${suffix}`, attempt);
      }
      const delay = failure.retryAfterMs ?? this.backoff(attempt);
      const left = deadline - this.clock.now();
      if (delay >= left) {
        const why = failure.retryAfterMs !== undefined ? `the server asked to retry after ${seconds(delay)}` : `a retry would start after ${seconds(delay)}`;
        throw this.error(failure, `${failure.detail}; ${why}, beyond the total time budget of ${seconds(this.o.totalTimeoutMs)} (after ${tries})`, attempt);
      }
      this.logger.log('warn', this.redact(`LLM ${this.host}: ${failure.detail}; retrying in ${seconds(delay)} (attempt ${attempt + 1} of ${maxAttempts})`));
      try {
        await this.sleep(delay, signal);
      } catch {
        throw new CancelledError();
      }
      if (signal?.aborted) throw new CancelledError();
    }
  }

  /** Exponential backoff with "equal jitter": half the delay fixed, half random, so retries of many clients spread out. */
  private backoff(attempt: number): number {
    const full = Math.min(this.o.retryMaxDelayMs, this.o.retryBaseDelayMs * 2 ** (attempt - 1));
    return Math.round(full / 2 + this.random() * (full / 2));
  }

  /** One request. Settles as soon as the caller's signal, the idle timer or the deadline fires. */
  private async attempt(
    messages: ChatMessage[],
    options: ChatOptions,
    deadline: number,
    progress: { chars: number },
  ): Promise<Omit<ChatResult, 'attempts' | 'ms'>> {
    const controller = new AbortController();
    let why: AbortWhy | undefined;
    const fire = (reason: AbortWhy) => {
      if (why) return;
      why = reason;
      controller.abort();
    };
    const onCallerAbort = () => fire('cancel');
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const remaining = Math.max(0, deadline - this.clock.now());
    const deadlineTimer = setTimeout(() => fire('deadline'), remaining);
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => fire('idle'), this.o.requestTimeoutMs);
    };
    touch();
    // Rejects the moment the controller fires, whatever the SDK is doing, so cancellation and
    // timeouts never wait on a socket.
    let stopWaiting: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => reject(this.abortError(why ?? 'cancel'));
      stopWaiting = () => controller.signal.removeEventListener('abort', onAbort);
      controller.signal.addEventListener('abort', onAbort, { once: true });
    });
    const work = this.request(messages, options, controller, touch, progress, () => why);
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
    return new AttemptTimeout(why);
  }

  private async request(
    messages: ChatMessage[],
    options: ChatOptions,
    controller: AbortController,
    touch: () => void,
    progress: { chars: number },
    why: () => AbortWhy | undefined,
  ): Promise<Omit<ChatResult, 'attempts' | 'ms'>> {
    const client = this.client(touch);
    const body: Record<string, unknown> = { model: this.o.model, messages: messages.map(wireMessage) };
    if (options.maxTokens !== undefined) body[this.o.tokenLimitField ?? 'max_tokens'] = options.maxTokens;
    if (options.temperature !== undefined) body.temperature = options.temperature;
    if (options.json && this.o.jsonResponseFormat) body.response_format = { type: 'json_object' };
    const requestOptions = { signal: controller.signal, maxRetries: 0 };
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
      progress.chars = text.length;
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
        progress.chars = text.length;
        emit(piece);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    // The SDK ends a stream quietly when it is aborted; the race in attempt() reports why.
    const stopped = why();
    if (stopped) throw this.abortError(stopped);
    // A server that ignores `stream: true` answers with plain JSON, which holds no SSE events:
    // that must not pass for an empty answer.
    if (events === 0) throw new ProtocolError('the server sent no stream events (does it support streaming? try turning streaming off)');
    return { text, model, finishReason, usage };
  }

  /** A client per attempt: its fetch wrapper reports bytes to this attempt's idle timer and enforces the size cap. */
  private client(touch: () => void): OpenAI {
    const limit = this.o.maxResponseBytes;
    const limitedFetch = async (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const res = await fetch(url, init);
      touch();
      if (!res.body) return res;
      let bytes = 0;
      const counted = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, ctl) {
            bytes += chunk.byteLength;
            touch();
            if (bytes > limit) ctl.error(new ResponseTooLargeError(limit));
            else ctl.enqueue(chunk);
          },
        }),
      );
      return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const key = this.o.apiKey;
    return new OpenAI({
      baseURL: this.baseUrl,
      // The SDK insists on some credential; without a key it gets a placeholder and the header is
      // dropped below, so a keyless local server sees no Authorization at all and the SDK never
      // falls back to reading OPENAI_API_KEY from the environment behind the caller's back.
      apiKey: key || 'no-key',
      defaultHeaders: key ? undefined : { Authorization: null },
      organization: null,
      project: null,
      maxRetries: 0,
      // Our own timers govern; this only has to never fire first.
      timeout: this.o.totalTimeoutMs + 60_000,
      logLevel: 'off',
      fetch: limitedFetch as unknown as typeof fetch,
    });
  }

  private classify(err: unknown, charsEmitted: number): Failure {
    const started = charsEmitted > 0;
    if (err instanceof AttemptTimeout) {
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
    if (err instanceof ProtocolError) return { kind: 'protocol', retryable: false, detail: err.message };
    if (err instanceof SyntaxError) {
      return { kind: 'protocol', retryable: false, detail: `the response is not valid chat-completions JSON — is the base URL an OpenAI-compatible /v1 endpoint?` };
    }
    if (err instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'timeout', retryable: !started, detail: 'timed out' };
    if (err instanceof OpenAI.APIConnectionError) {
      return { kind: 'connection', retryable: !started, detail: `could not connect (${transportCode(err)})` };
    }
    if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
      const status = err.status;
      const retryable = !started && (status === 408 || status === 409 || status === 429 || status >= 500);
      const hint = status === 401 || status === 403 ? ' — check the API key' : status === 404 ? ` — check the base URL and the model name "${this.o.model}"` : '';
      const server = serverMessage(err);
      return {
        kind: 'http',
        status,
        retryable,
        retryAfterMs: retryable ? retryAfterMs(err.headers) : undefined,
        detail: `HTTP ${status}${statusText(status)}${server ? `: ${server}` : ''}${hint}`,
      };
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

class AttemptTimeout extends Error {
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

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
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
