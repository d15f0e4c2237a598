/**
 * Turns a stream of file-change notifications (the editor's file watcher) into incremental index
 * runs with bounded work: changes are debounced (`delayMs` of quiet), a steady stream still gets a
 * run every `maxWaitMs`, at most one run is in flight, and changes that arrive during a run cause
 * exactly one follow-up run after it — so the index always ends consistent with the files, however
 * long the burst, and a burst of N changes costs a few runs, not N.
 */

export interface ReindexSchedulerOptions {
  /** Quiet time after the last change before a run starts (default 2,000 ms). */
  delayMs?: number;
  /** Longest a change waits while changes keep coming (default 10 × delayMs). */
  maxWaitMs?: number;
  /** Called with a run's error; the scheduler keeps going. */
  onError?: (err: unknown) => void;
}

export class ReindexScheduler {
  private readonly delayMs: number;
  private readonly maxWaitMs: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  /** When the oldest change not yet covered by a run arrived (undefined: none pending). */
  private pendingSince: number | undefined;
  private disposed = false;
  /** Runs started so far. */
  runs = 0;
  /** Notifications received so far. */
  notifications = 0;

  constructor(
    private readonly run: () => Promise<unknown>,
    options: ReindexSchedulerOptions = {},
  ) {
    this.delayMs = options.delayMs ?? 2_000;
    this.maxWaitMs = options.maxWaitMs ?? 10 * this.delayMs;
    this.onError = options.onError ?? (() => undefined);
  }

  private readonly onError: (err: unknown) => void;

  /** A file changed. */
  notify(): void {
    if (this.disposed) return;
    this.notifications++;
    this.pendingSince ??= Date.now();
    if (this.running) return; // the run in flight schedules the follow-up when it ends
    clearTimeout(this.timer);
    const waited = Date.now() - this.pendingSince;
    this.timer = setTimeout(() => this.fire(), Math.max(0, Math.min(this.delayMs, this.maxWaitMs - waited)));
  }

  private fire(): void {
    this.timer = undefined;
    if (this.disposed || this.running || this.pendingSince === undefined) return;
    this.pendingSince = undefined; // changes from now on need another run
    this.runs++;
    this.running = this.run()
      .then(
        () => undefined,
        (err: unknown) => this.onError(err),
      )
      .finally(() => {
        this.running = undefined;
        if (this.pendingSince !== undefined && !this.disposed) this.timer = setTimeout(() => this.fire(), this.delayMs);
      });
  }

  /** Resolves when no run is in flight or scheduled (for tests and shutdown). */
  async idle(): Promise<void> {
    while (!this.disposed && (this.running || this.timer)) {
      if (this.running) await this.running;
      else await new Promise((r) => setTimeout(r, Math.min(50, this.delayMs)));
    }
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
