/**
 * "Only the newest question may paint": each new run cancels the one before it, and a run's
 * result is delivered only if no newer run has started since. The extension's session uses one
 * of these for questions; anything that shows async results in one place can.
 */
import { CancelledError } from '../errors';

export class LatestOnly {
  private current: { abort: AbortController; seq: number } | undefined;
  private seq = 0;

  /**
   * Starts `work` with a signal that fires when a newer run starts (or `cancel()` is called).
   * Resolves to the work's result if this is still the newest run when it finishes, else to
   * undefined; cancellation of this run also resolves to undefined.
   */
  async run<T>(work: (signal: AbortSignal) => Promise<T>, outer?: AbortSignal): Promise<T | undefined> {
    this.current?.abort.abort();
    const mine = { abort: new AbortController(), seq: ++this.seq };
    this.current = mine;
    const onOuter = () => mine.abort.abort();
    outer?.addEventListener('abort', onOuter);
    try {
      const result = await work(mine.abort.signal);
      return this.current === mine && !mine.abort.signal.aborted ? result : undefined;
    } catch (err) {
      if (err instanceof CancelledError || mine.abort.signal.aborted) return undefined;
      throw err;
    } finally {
      outer?.removeEventListener('abort', onOuter);
      if (this.current === mine) this.current = undefined;
    }
  }

  cancel(): void {
    this.current?.abort.abort();
  }
}
