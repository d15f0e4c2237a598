/**
 * Parses files in worker threads with a per-file memory limit and a hard time limit, so one
 * hostile file can neither exhaust the host's heap nor hold the indexer forever.
 *
 * - Memory: each worker runs with `resourceLimits.maxOldGenerationSizeMb` = `maxMemoryMB`
 *   (`canopy.maxParseMemoryMB`). A parse that needs more ends its worker
 *   (ERR_WORKER_OUT_OF_MEMORY) and fails with `E_MEMORY_LIMIT` naming the file and the limit.
 * - Time: the parser's own time limit still applies inside the worker (a PDF keeps the pages read
 *   before it, other formats fail with `E_TIME_LIMIT`). A parser that never returns to its event
 *   loop (a synchronous loop) cannot check it, so the pool terminates the worker at
 *   `hardTimeLimitMs(timeLimitMs)` of worker time (time spent waiting for the encoder excluded)
 *   and fails the file with `E_TIME_LIMIT`.
 * - Cancellation terminates the worker at once (`CancelledError`).
 * - A worker that dies (killed, crashed) fails only the file it was parsing (`E_PARSE_FAILED`);
 *   the next file gets a fresh worker.
 * Workers are started on demand, reused across files and index runs, and stopped after
 * `idleMs` without work (an idle worker never keeps the process alive). A worker parses one
 * file at a time, except small files given with `share`: up to SHARED_TASKS of them may wait in
 * one worker, so it goes from one to the next without waiting for the calling thread; they fail
 * together if the worker dies, and the caller parses each again alone.
 *
 * The document comes back by structured clone; the graph's semantic edges need the encoder,
 * which stays in the calling thread: the worker asks for vectors with `embed` messages. Progress
 * inside the file (pages read, leaves encoded) comes back as `progress` messages to the caller's
 * `onProgress`.
 * If a worker cannot start at all (missing bundle, a runtime without worker threads) the pool
 * logs why and parses in-process — without the memory limit — and tries workers again a minute later.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CanopyError, CancelledError, ErrorCodes, type ErrorCode, throwIfCancelled } from '../errors';
import { type Logger, silentLogger } from '../ports';
import { formatForPath } from './documentFormat';
import type * as ParseFileModule from './parseFile';
import type { ParseOptions, ParsedDocument } from './parsedDocument';
import { type FromWorker, serializeError, type SerializedError, type ToWorker, type WorkerParseOptions } from './parseWorkerProtocol';

/**
 * The parsers (every format's library), required on the first in-process parse or parse run: a
 * process that only asks questions (`canopy ask`) never loads them, and the workers load their own.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsers = () => require('./parseFile') as typeof ParseFileModule;

/** The `canopy.maxParseMemoryMB` default. */
export const defaultParseMemoryMB = 1024;

/** Workers a pool may run at once by default: one per spare core, 1 to 4. */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** When the pool stops a parser that ignores its own time limit: the limit plus a quarter (at least 2 s). */
export function hardTimeLimitMs(timeLimitMs: number): number {
  return timeLimitMs + Math.max(2_000, Math.round(timeLimitMs / 4));
}

/**
 * Where the worker entry lives: beside the bundle (dist/parseWorker.js), or, run from source,
 * this folder's source under tsx — unless CANOPY_TEST_PARSE_WORKER names a worker bundle.
 * `npm test` (scripts/test.mjs) sets it to the dist/parseWorker.js its build step has just made
 * from this source: a worker that loads the parse stack through tsx costs about 0.6 s more CPU
 * to start than the bundle, and the test suite starts dozens. The variable is read only when
 * running from source; a shipped bundle always uses its own worker.
 */
export function defaultWorkerFile(): string {
  if (!__filename.endsWith('.ts')) return path.join(__dirname, 'parseWorker.js');
  return process.env.CANOPY_TEST_PARSE_WORKER || path.join(__dirname, 'parseWorker.ts');
}

export interface ParsePoolOptions {
  /** Heap limit of each worker (V8 old generation), MB. Default 1024. */
  maxMemoryMB?: number;
  /** Workers at most (default `defaultPoolSize()`). The indexer keeps each busy (one file each, or up to SHARED_TASKS small files). */
  size?: number;
  logger?: Logger;
  /** An idle worker is stopped after this long (default 30 s). */
  idleMs?: number;
  /** Hard-kill grace on top of the time limit (default: `hardTimeLimitMs`). */
  hardKillGraceMs?: number;
  /** The worker entry (default `defaultWorkerFile()`); a `.ts` file is loaded through tsx. */
  workerFile?: string;
  /** Tests only: a module the worker loads before its first message (it may hook the messages). */
  preload?: string;
  /** A worker that has not started after this long counts as unable to start (default 30 s). */
  startTimeoutMs?: number;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  /** Parses given to this worker and not finished. */
  tasks: number;
  /** Its tasks are small files that may share it (`parse(…, share)`). */
  shared: boolean;
  dead: boolean;
  closing: boolean;
  idleTimer: NodeJS.Timeout | undefined;
}

class WorkerStartError extends Error {}

const RETRY_AFTER_MS = 60_000;

/**
 * Small files a worker may hold at once when they share it (`parse(…, share)`). They fail
 * together if the worker dies (memory, time limit, crash); the caller parses each of them
 * again alone, so the file that caused it fails alone (the indexer does: core/index/indexer.ts).
 */
export const SHARED_TASKS = 8;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export class ParsePool {
  readonly maxMemoryMB: number;
  readonly size: number;
  private readonly log: Logger;
  private readonly idleMs: number;
  private readonly workerFile: string;
  private readonly options: ParsePoolOptions;
  private slots: Slot[] = [];
  private waiting: Array<() => void> = [];
  private unavailableUntil = 0;
  private nextId = 0;
  /** What happened so far (for tests, benchmarks and logs). */
  readonly counters = { workersStarted: 0, inWorker: 0, inProcess: 0, memoryLimit: 0, hardTimeLimit: 0, crashed: 0 };

  constructor(options: ParsePoolOptions = {}) {
    this.options = options;
    this.maxMemoryMB = options.maxMemoryMB ?? defaultParseMemoryMB;
    this.size = Math.max(1, Math.floor(options.size ?? defaultPoolSize()));
    this.log = options.logger ?? silentLogger;
    this.idleMs = options.idleMs ?? 30_000;
    this.workerFile = options.workerFile ?? defaultWorkerFile();
  }

  /** `parseFile` in a worker: the same document, or the same errors, plus E_MEMORY_LIMIT and a hard time limit. */
  async parse(relPath: string, bytes: Uint8Array, options: ParseOptions = {}, share = false): Promise<ParsedDocument> {
    throwIfCancelled(options.signal);
    if (Date.now() < this.unavailableUntil) return this.inProcess(relPath, bytes, options);
    let slot: Slot | undefined;
    try {
      slot = await this.acquire(options.signal, share);
      await slot.ready;
    } catch (err) {
      if (!(err instanceof WorkerStartError)) throw err;
      if (slot) {
        slot.tasks--;
        this.discard(slot);
      }
      this.unavailableUntil = Date.now() + RETRY_AFTER_MS;
      const reason = err instanceof Error ? err.message : String(err);
      this.log.log('warn', `parse worker could not start (${reason}); parsing in this process WITHOUT the per-file memory limit (canopy.maxParseMemoryMB) — trying a worker again in ${RETRY_AFTER_MS / 1000} s`);
      return this.inProcess(relPath, bytes, options);
    }
    return this.run(slot, relPath.replace(/\\/g, '/'), bytes, options);
  }

  /** Stops every worker; a parse in flight fails with CancelledError. The pool can be used again. */
  async close(): Promise<void> {
    const slots = this.slots;
    this.slots = [];
    await Promise.all(
      slots.map((s) => {
        s.closing = true;
        s.dead = true;
        if (s.idleTimer) clearTimeout(s.idleTimer);
        return s.worker.terminate().catch(() => undefined);
      }),
    );
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Workers alive now (busy or idle). */
  get workers(): number {
    return this.slots.length;
  }

  private inProcess(relPath: string, bytes: Uint8Array, options: ParseOptions): Promise<ParsedDocument> {
    this.counters.inProcess++;
    return parsers().parseFile(relPath, bytes, options);
  }

  private async acquire(signal: AbortSignal | undefined, share: boolean): Promise<Slot> {
    for (;;) {
      throwIfCancelled(signal);
      const idle = this.slots.find((s) => s.tasks === 0 && !s.dead);
      if (idle) {
        if (idle.idleTimer) clearTimeout(idle.idleTimer);
        idle.idleTimer = undefined;
        idle.tasks = 1;
        idle.shared = share;
        idle.worker.ref();
        return idle;
      }
      // A small file joins a worker parsing other small files: it is parsed as soon as they are,
      // without waiting for this thread to hand it over (which waits for the encoder's batch).
      const open = share ? this.slots.find((s) => s.shared && s.tasks < SHARED_TASKS && !s.dead) : undefined;
      if (open) {
        open.tasks++;
        return open;
      }
      if (this.slots.length < this.size) {
        const slot = this.spawn();
        slot.tasks = 1;
        slot.shared = share;
        this.slots.push(slot);
        return slot;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          this.waiting = this.waiting.filter((w) => w !== wake); // its turn goes to the next caller
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  private release(slot: Slot): void {
    slot.tasks--;
    if (slot.tasks > 0) {
      if (slot.dead) this.discard(slot);
      else this.waiting.shift()?.();
      return;
    }
    slot.shared = false;
    if (slot.dead) this.discard(slot);
    else {
      slot.worker.unref();
      slot.idleTimer = setTimeout(() => {
        slot.dead = true;
        this.discard(slot);
        void slot.worker.terminate();
      }, this.idleMs);
      slot.idleTimer.unref();
    }
    this.waiting.shift()?.();
  }

  private discard(slot: Slot): void {
    slot.dead = true;
    this.slots = this.slots.filter((s) => s !== slot);
    if (slot.tasks === 0) this.waiting.shift()?.();
  }

  private spawn(): Slot {
    const resourceLimits = { maxOldGenerationSizeMb: this.maxMemoryMB };
    const workerData = this.options.preload ? { preload: this.options.preload } : {};
    let worker: Worker;
    try {
      if (this.workerFile.endsWith('.ts')) {
        // From source (tests, tsx): the worker loads tsx's CommonJS hook, then the entry.
        const tsx = createRequire(__filename).resolve('tsx/cjs');
        worker = new Worker(`require(${JSON.stringify(tsx)}); require(${JSON.stringify(this.workerFile)});`, { eval: true, resourceLimits, workerData });
      } else {
        worker = new Worker(this.workerFile, { resourceLimits, workerData, execArgv: [] });
      }
    } catch (err) {
      throw new WorkerStartError(err instanceof Error ? err.message : String(err));
    }
    this.counters.workersStarted++;
    const slot: Slot = { worker, ready: Promise.resolve(), tasks: 0, shared: false, dead: false, closing: false, idleTimer: undefined };
    slot.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        void worker.terminate();
        reject(new WorkerStartError(`no answer within ${seconds(this.options.startTimeoutMs ?? 30_000)}`));
      }, this.options.startTimeoutMs ?? 30_000);
      const onMessage = (msg: FromWorker) => {
        if (msg.type !== 'ready') return;
        cleanup();
        resolve();
      };
      const onError = (err: Error) => {
        cleanup();
        reject(new WorkerStartError(err.message));
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new WorkerStartError(`the worker exited with code ${code} while starting`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
    slot.ready.catch(() => undefined);
    // Always listening, so an 'error' never goes unhandled; a dead worker leaves the pool.
    worker.on('error', () => {
      slot.dead = true;
    });
    worker.on('exit', () => {
      slot.dead = true;
      if (slot.idleTimer) clearTimeout(slot.idleTimer);
      if (slot.tasks === 0) this.discard(slot);
    });
    return slot;
  }

  private run(slot: Slot, file: string, bytes: Uint8Array, options: ParseOptions): Promise<ParsedDocument> {
    const id = this.nextId++;
    const worker = slot.worker;
    const format = formatForPath(file) ?? 'file';
    const timeLimitMs = options.timeLimitMs ?? parsers().defaultParseOptions.timeLimitMs;
    const hardMs = this.options.hardKillGraceMs !== undefined ? timeLimitMs + this.options.hardKillGraceMs : hardTimeLimitMs(timeLimitMs);
    const { signal, embed, onProgress, ...rest } = options;
    const workerOptions: WorkerParseOptions = rest;
    // A copy the worker owns (transferred, not cloned twice); the caller's buffer stays usable.
    const copy = new Uint8Array(bytes);
    const started = Date.now();

    return new Promise<ParsedDocument>((resolve, reject) => {
      let settled = false;
      let embedsOut = 0;
      let activeMs = 0;
      let activeSince = Date.now();
      let timer: NodeJS.Timeout | undefined;

      const arm = () => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(onTimer, Math.max(0, hardMs - activeMs - (Date.now() - activeSince)));
      };
      const onTimer = () => {
        if (settled || embedsOut > 0) return; // re-armed when the encoder answers
        const used = activeMs + (Date.now() - activeSince);
        if (used < hardMs) return arm();
        this.counters.hardTimeLimit++;
        kill(
          new CanopyError(
            ErrorCodes.timeLimit,
            `${file}: parsing (${format}) did not finish within the per-file time limit of ${seconds(timeLimitMs)}; its parser was stopped after ${seconds(used)}; not indexed.`,
            { file },
          ),
        );
      };
      const finish = (err: unknown, doc?: ParsedDocument) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        worker.off('messageerror', onMessageError);
        signal?.removeEventListener('abort', onAbort);
        this.release(slot);
        if (err) reject(err);
        else {
          this.counters.inWorker++;
          resolve(doc!);
        }
      };
      const kill = (err: unknown) => {
        slot.dead = true;
        void worker.terminate();
        finish(err);
      };
      const onMessage = (msg: FromWorker) => {
        if (settled || msg.type === 'ready' || msg.id !== id) return;
        if (msg.type === 'done') return finish(undefined, msg.doc);
        if (msg.type === 'failed') return finish(deserializeError(msg.error, file, format));
        if (msg.type === 'progress') {
          // A progress sink that throws is the host's bug, not this file's failure.
          try {
            onProgress?.(msg.progress);
          } catch {
            // ignored
          }
          return;
        }
        // 'embed': the encoder lives in this thread; its time is not the parser's.
        if (!embed) return worker.postMessage({ type: 'embedError', callId: msg.callId, error: { name: 'Error', message: 'no encoder' } } satisfies ToWorker);
        if (embedsOut++ === 0) activeMs += Date.now() - activeSince;
        embed(msg.texts)
          .then(
            (vectors): { reply: ToWorker; transfer: ArrayBuffer[] } => {
              // Compact copies: a cached vector may be a view into a larger buffer, which a clone would copy whole.
              const own = vectors.map((v) => v.slice());
              return { reply: { type: 'embedResult', callId: msg.callId, vectors: own }, transfer: own.map((v) => v.buffer as ArrayBuffer) };
            },
            (err: unknown) => ({ reply: { type: 'embedError', callId: msg.callId, error: serializeError(err) } as ToWorker, transfer: [] }),
          )
          .then(({ reply, transfer }) => {
            if (settled) return;
            if (--embedsOut === 0) {
              activeSince = Date.now();
              arm();
            }
            worker.postMessage(reply, transfer);
          })
          .catch(() => undefined);
      };
      const onError = (err: Error & { code?: string }) => {
        slot.dead = true;
        if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          this.counters.memoryLimit++;
          return finish(
            new CanopyError(
              ErrorCodes.memoryLimit,
              `${file}: parsing (${format}) needed more than the per-file memory limit of ${this.maxMemoryMB} MB (canopy.maxParseMemoryMB); its parser was stopped after ${seconds(Date.now() - started)}; not indexed.`,
              { file, cause: err },
            ),
          );
        }
        this.counters.crashed++;
        finish(new CanopyError(ErrorCodes.parseFailed, `${file}: the parser stopped unexpectedly (${err.message}); not indexed.`, { file, cause: err }));
      };
      const onExit = (code: number) => {
        slot.dead = true;
        if (slot.closing) return finish(new CancelledError('Parsing stopped: the parse workers were closed'));
        this.counters.crashed++;
        finish(new CanopyError(ErrorCodes.parseFailed, `${file}: the parser stopped unexpectedly (its worker thread exited with code ${code}); not indexed.`, { file }));
      };
      const onAbort = () => kill(new CancelledError());
      const onMessageError = (err: Error) =>
        kill(new CanopyError(ErrorCodes.parseFailed, `${file}: the parsed document could not be received from its worker (${err.message}); not indexed.`, { file, cause: err }));

      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.on('messageerror', onMessageError);
      if (signal) {
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
      }
      worker.postMessage({ type: 'parse', id, file, bytes: copy, options: workerOptions, embed: embed !== undefined, progress: onProgress !== undefined } satisfies ToWorker, [copy.buffer]);
      arm();
    });
  }
}

function deserializeError(e: SerializedError, file: string, format: string): Error {
  if (e.name === 'CancelledError') return new CancelledError(e.message);
  if (e.name === 'CanopyError' && e.code && (Object.values(ErrorCodes) as string[]).includes(e.code)) {
    return new CanopyError(e.code as ErrorCode, e.message, e.file !== undefined ? { file: e.file } : {});
  }
  return new CanopyError(ErrorCodes.parseFailed, `${file}: could not be parsed as ${format} (${e.message}).`, { file });
}
