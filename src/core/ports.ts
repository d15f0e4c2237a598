/**
 * Ports: the small interfaces through which the pure core reaches the outside world. The
 * extension and the CLI implement them; tests use real implementations on temp folders or tiny
 * in-memory ones.
 */

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, message: string): void;
}

/** A logger that drops everything; for tests that do not look at logs. */
export const silentLogger: Logger = { log: () => undefined };

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Progress of a long task: `done` of `total` units, with an optional message. */
export interface ProgressSink {
  /**
   * `done` of `total` files (or steps); `file`: the file being indexed; `part`: how far within it
   * (a PDF's pages, the encoding of its sentences, rows and tables).
   */
  report(progress: { done: number; total: number; message?: string; file?: string; part?: { step: 'pages' | 'encoding'; done: number; total: number } }): void;
}
