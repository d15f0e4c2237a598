/**
 * The extension's questions, free of `vscode` (so plain-Node tests drive the same path the
 * command does): at most one at a time — a new question cancels the old, and only the newest
 * answer is reported. Every question reads the settings afresh through its host (so a changed
 * `canopy.topK`, `controller.*`, `llm.routing`… applies to the next question without a reload),
 * chooses the LLM and the adapter checkpoint under Workspace Trust, asks the AskService, saves the
 * trace and tells its listeners what happened as events — started, answered, cancelled, failed —
 * so the inspector, the views and the export follow without being called back.
 */
import { LatestOnly } from '../core/app/latestOnly';
import type { AskService, AskWarning } from '../core/app/askService';
import { traceRetention, type TraceStore } from '../core/app/traceStore';
import type { CanopySettings } from '../core/config/settings';
import { describeError } from '../core/errors';
import type { ChatModel } from '../core/llm/llm';
import type { Logger } from '../core/ports';
import type { AskTrace } from '../contracts/trace';

export interface QuestionHost {
  /** The settings as they are now; called once per question. */
  settings(): CanopySettings;
  /** The LLM these settings ask for, after Workspace Trust; `note` says why there is none. */
  chooseLlm(settings: CanopySettings): Promise<{ model?: ChatModel; note?: string }>;
  /** The adapter checkpoint these settings name ('' = none), after Workspace Trust. */
  adapterCheckpoint(settings: CanopySettings): { value: string; note?: string };
  /** Makes sure the folder has an index (indexes it the first time). */
  ensureIndex(): Promise<void>;
  logger: Logger;
}

export type QuestionEvent =
  | { type: 'started'; id: number; question: string }
  | { type: 'answered'; id: number; question: string; trace: AskTrace; file: string; warnings: AskWarning[] }
  /** Cancelled by the user, or by a newer question. */
  | { type: 'cancelled'; id: number; question: string }
  | { type: 'failed'; id: number; question: string; error: { code: string; message: string } };

export type QuestionListener = (event: QuestionEvent) => void;

export class Questions {
  private readonly latest = new LatestOnly();
  private readonly listeners = new Set<QuestionListener>();
  private nextId = 1;
  /** The id of the question asked last. */
  private newest = 0;

  constructor(
    private readonly asker: AskService,
    private readonly traces: TraceStore,
    private readonly host: QuestionHost,
  ) {}

  /** Subscribes to question events; returns the unsubscribe function. */
  onEvent(listener: QuestionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Answers a question and resolves to its saved trace; undefined when it was cancelled (by
   * `signal`, `cancel()` or a newer question). A failure is reported as an event and rethrown.
   */
  async ask(question: string, signal?: AbortSignal): Promise<AskTrace | undefined> {
    const id = this.nextId++;
    this.newest = id;
    this.emit({ type: 'started', id, question });
    let outcome: { trace: AskTrace; file: string; warnings: AskWarning[] } | undefined;
    // Read once per question: the answer and its saved trace (with the retention) follow the same settings.
    let settings: CanopySettings | undefined;
    try {
      const answer = await this.latest.run(async (inner) => {
        await this.host.ensureIndex();
        settings = this.host.settings();
        const llm = await this.host.chooseLlm(settings);
        if (llm.note) this.host.logger.log('info', `LLM not used: ${llm.note}`);
        const adapter = this.host.adapterCheckpoint(settings);
        if (adapter.note) this.host.logger.log('warn', adapter.note);
        return this.asker.ask(question, settings, { signal: inner, adapter: adapter.value, ...(llm.model ? { llm: llm.model } : {}) });
      }, signal);
      if (answer) {
        for (const w of answer.warnings) this.host.logger.log('warn', `${w.source}: ${w.message}`);
        outcome = { ...answer, file: await this.traces.save(answer.trace, settings ? traceRetention(settings) : undefined) };
      }
    } catch (err) {
      this.emit({ type: 'failed', id, question, error: describeError(err) });
      throw err;
    }
    // A newer question that started while this one was saved owns the inspector: this one is saved, not shown.
    if (!outcome || this.newest !== id) {
      this.emit({ type: 'cancelled', id, question });
      return undefined;
    }
    this.emit({ type: 'answered', id, question, ...outcome });
    return outcome.trace;
  }

  /** Cancels the question in flight, if any. */
  cancel(): void {
    this.latest.cancel();
  }

  private emit(event: QuestionEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.host.logger.log('error', `a question listener failed on "${event.type}": ${describeError(err).message}`);
      }
    }
  }
}
