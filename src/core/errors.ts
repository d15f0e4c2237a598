/**
 * One table of error codes for the whole core. Every error the core raises on purpose is a
 * CanopyError with a code from this table; cancellation is its own class so callers can tell
 * "the user stopped it" from "it failed".
 */

export const ErrorCodes = {
  badInput: 'E_BAD_INPUT',
  unsupportedFormat: 'E_UNSUPPORTED_FORMAT',
  fileTooLarge: 'E_FILE_TOO_LARGE',
  /** A file whose parsing ran past its per-file time limit (a hostile or pathological file). */
  timeLimit: 'E_TIME_LIMIT',
  /** A file whose parsing needed more memory than the per-file limit (canopy.maxParseMemoryMB); the parse worker was stopped. */
  memoryLimit: 'E_MEMORY_LIMIT',
  /** The disk is full, or the folder is read-only or not writable: nothing was written. */
  writeFailed: 'E_WRITE',
  parseFailed: 'E_PARSE_FAILED',
  /** A password-protected (encrypted) document that cannot be opened without its password. */
  encrypted: 'E_ENCRYPTED',
  /** Binary content (NUL bytes, control characters) in a file whose extension promises text. */
  binaryContent: 'E_BINARY',
  /** Text that is not valid in its encoding and was rejected rather than repaired. */
  invalidEncoding: 'E_ENCODING',
  notFound: 'E_NOT_FOUND',
  /** A server that cannot be reached: the connection was refused, timed out or its host is unknown (a database store). */
  unreachable: 'E_UNREACHABLE',
  indexCorrupt: 'E_INDEX_CORRUPT',
  indexVersion: 'E_INDEX_VERSION',
  encoderFailed: 'E_ENCODER',
  modelInvalid: 'E_MODEL_INVALID',
  downloadFailed: 'E_DOWNLOAD',
  llmFailed: 'E_LLM',
  protocol: 'E_PROTOCOL',
  forbidden: 'E_FORBIDDEN',
  internal: 'E_INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class CanopyError extends Error {
  readonly code: ErrorCode;
  /** The file the error is about, when there is one; always named in the message too. */
  readonly file: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { file?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CanopyError';
    this.code = code;
    this.file = options?.file;
  }
}

export class CancelledError extends Error {
  readonly code = 'E_CANCELLED' as const;
  constructor(message = 'Cancelled') {
    super(message);
    this.name = 'CancelledError';
  }
}

/** Throws CancelledError when the signal has fired; call between units of work. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError();
}

/** A short `{code, message}` for logs, the CLI and the webview protocol. */
export function describeError(err: unknown): { code: string; message: string } {
  if (err instanceof CanopyError || err instanceof CancelledError) return { code: err.code, message: err.message };
  // The same classes from another bundle (the CLI's research commands load as their own bundle).
  if (err instanceof Error && (err.name === 'CanopyError' || err.name === 'CancelledError')) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') return { code, message: err.message };
  }
  if (err instanceof Error) return { code: ErrorCodes.internal, message: err.message };
  return { code: ErrorCodes.internal, message: String(err) };
}
