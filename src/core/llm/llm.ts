/**
 * The LLM port (design §8): one small, provider-neutral chat interface that the critic, the
 * reader and the router call, implemented by the OpenAI-compatible provider in the core and by
 * the VS Code Language Model API adapter in the extension. Streaming is an `onDelta` callback
 * (the caller gets text pieces as they arrive and the whole text at the end); cancellation is an
 * AbortSignal that settles the call promptly with CancelledError.
 *
 * `remote` says whether the model sends text off this machine. Callers enforce workspace trust
 * with it: in an untrusted workspace document text must not go to a remote model
 * (`assertModelAllowed`).
 */
import { CancelledError, CanopyError, ErrorCodes } from '../errors';

export type ChatRole = 'system' | 'user' | 'assistant';

/** An image sent with a message (a multimodal model): the model sees `label` right before it. */
export interface ChatImage {
  label: string;
  mime: 'image/png' | 'image/jpeg';
  data: Uint8Array;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** Images after the text (user messages; only for models whose `acceptsImages` is not false). */
  images?: ChatImage[];
}

export interface ChatOptions {
  signal?: AbortSignal;
  maxTokens?: number;
  temperature?: number;
  /** The caller wants one JSON object back. Providers that can constrain output do; callers still parse defensively. */
  json?: boolean;
  /** Text pieces in arrival order; their concatenation is the result's `text`. */
  onDelta?: (text: string) => void;
}

export interface ChatUsage {
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
}

export interface ChatResult {
  text: string;
  /** The model that answered, as the provider names it (no credentials). */
  model: string;
  /** e.g. 'stop', or 'length' when the answer hit the token limit and is cut short. */
  finishReason?: string;
  usage?: ChatUsage;
  /** Requests made, retries included. */
  attempts: number;
  ms: number;
}

export interface ChatModel {
  /** Stable, credential-free name for traces and logs, e.g. `openai-compatible:gpt-4o-mini@api.openai.com`. */
  readonly id: string;
  /** True when prompts (and so document text) leave this machine. */
  readonly remote: boolean;
  /** False when the model cannot take images; undefined: it takes them if the model behind it does (OpenAI-compatible). */
  readonly acceptsImages?: boolean;
  chat(messages: ChatMessage[], options?: ChatOptions): Promise<ChatResult>;
}

/** What went wrong, so callers (critic fallback, UI) can say it in a word. */
export type LlmFailureKind =
  | 'http' // the endpoint answered with an error status
  | 'timeout' // no data within the request timeout
  | 'budget' // the total time budget (retries included) ran out
  | 'connection' // refused, reset, DNS, TLS …
  | 'protocol' // not a chat-completions answer (invalid JSON, malformed SSE, no choices)
  | 'size' // the answer passed the response size limit and was cut off
  | 'refused' // the provider declined (no permission, blocked, model not found)
  | 'config'; // bad settings (base URL, model)

/** A failed LLM call. The message names the endpoint host and the status, never a credential. */
export class LlmError extends CanopyError {
  readonly kind: LlmFailureKind;
  readonly status: number | undefined;
  readonly attempts: number;

  constructor(kind: LlmFailureKind, message: string, options: { status?: number; attempts?: number } = {}) {
    super(ErrorCodes.llmFailed, message);
    this.name = 'LlmError';
    this.kind = kind;
    this.status = options.status;
    this.attempts = options.attempts ?? 1;
  }
}

/**
 * Throws E_FORBIDDEN when a remote model would receive document text from an untrusted
 * workspace. Local models (loopback endpoints) stay allowed.
 */
export function assertModelAllowed(model: ChatModel, workspaceTrusted: boolean): void {
  if (model.remote && !workspaceTrusted) {
    throw new CanopyError(
      ErrorCodes.forbidden,
      `The LLM ${model.id} is remote and this workspace is not trusted, so no document text is sent to it. Trust the workspace or use a local model.`,
    );
  }
}

/** Replaces every occurrence of each secret by `[redacted]`; a last guard on text that leaves the provider. */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const s of secrets) {
    // Very short "keys" (placeholders like "x") would shred ordinary text and protect nothing.
    if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  }
  return out;
}

/** A chat call under a time limit: the result, or why it failed (the user's cancel is not a failure: it throws). */
export type BoundedChat = { ok: true; result: ChatResult } | { ok: false; timedOut: boolean; error: string };

/**
 * Calls `model.chat` and aborts it after `timeoutMs` — the one time-limit wiring of the critic,
 * the router and the controller's evaluator, which each fall back in their own way. A user's
 * cancel (`signal`) throws CancelledError; a timeout or any other failure is returned, never
 * thrown, with `timedOut` telling the two apart.
 */
export async function chatWithin(model: ChatModel, messages: ChatMessage[], options: Omit<ChatOptions, 'signal'>, timeoutMs: number, signal?: AbortSignal): Promise<BoundedChat> {
  if (signal?.aborted) throw new CancelledError();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return { ok: true, result: await model.chat(messages, { ...options, signal: controller.signal }) };
  } catch (err) {
    if (signal?.aborted) throw new CancelledError();
    return { ok: false, timedOut, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
