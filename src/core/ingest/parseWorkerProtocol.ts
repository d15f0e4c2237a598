/**
 * The messages between ParsePool (parsePool.ts) and its parse worker (parseWorker.ts): plain
 * structured-clone data. Kept apart from the worker entry so the pool never imports (and runs)
 * the worker's start-up code.
 */
import type { ParseOptions, ParseProgress, ParsedDocument } from './parsedDocument';

/** ParseOptions minus what cannot cross a thread: the signal (the pool terminates instead), the encoder and the progress callback (both proxied by messages). */
export type WorkerParseOptions = Omit<ParseOptions, 'signal' | 'embed' | 'onProgress'>;

export interface SerializedError {
  name: string;
  code?: string;
  message: string;
  file?: string;
}

export type ToWorker =
  | { type: 'parse'; id: number; file: string; bytes: Uint8Array; options: WorkerParseOptions; embed: boolean; progress?: boolean }
  | { type: 'embedResult'; callId: number; vectors: Float32Array[] }
  | { type: 'embedError'; callId: number; error: SerializedError };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'embed'; id: number; callId: number; texts: string[] }
  | { type: 'progress'; id: number; progress: ParseProgress }
  | { type: 'done'; id: number; doc: ParsedDocument }
  | { type: 'failed'; id: number; error: SerializedError };

export function serializeError(err: unknown): SerializedError {
  if (err instanceof Error) {
    const e = err as Error & { code?: unknown; file?: unknown };
    return {
      name: e.name,
      message: e.message,
      ...(typeof e.code === 'string' ? { code: e.code } : {}),
      ...(typeof e.file === 'string' ? { file: e.file } : {}),
    };
  }
  return { name: 'Error', message: String(err) };
}
