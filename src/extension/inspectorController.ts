/**
 * What the Evidence Inspector shows, in one place and free of `vscode` (unit-tested in plain
 * Node): a single state value — the placeholder, a question being answered, a failed question,
 * an answer, a comparison, or the training report — changed only by the methods below, and
 * painted into the webview as protocol notifications.
 *
 * The webview may not be listening: it is still loading, or VS Code reloaded it (a hidden panel
 * is rebuilt when shown again). So nothing is queued up while it is away; when it says
 * `webview/ready`, the outbox is flushed: `host/hello`, then what the *current* state paints,
 * then one-shot requests made meanwhile (a region to reveal). A question that was cancelled or
 * failed is therefore never shown as still running after a reload, and a cancelled question
 * gives the panel back to the answer it replaced; a failed one says why.
 *
 * The answer the rest of the extension follows (the Evidence view, the decorations, commands
 * that act on "the shown answer") is derived from the state and announced on change.
 */
import type { AskTrace } from '../contracts/trace';
import type { Logger } from '../core/ports';
import type { QuestionEvent } from './questions';
import { PROTOCOL_VERSION, type HostNotificationMap, type IndexingProgress, type NotificationMessage, type PlaceholderView, type TrainingReport, type WebviewNotificationMap } from '../protocol/messages';

/** Progress of an index run reaches the webview at most this often (its start and end always). */
export const INDEXING_INTERVAL_MS = 200;

export type InspectorState =
  | { kind: 'placeholder' }
  /** `under`: the answer shown before, given back when the question is cancelled. */
  | { kind: 'busy'; questionId: number; question: string; under?: AskTrace }
  | { kind: 'failed'; question: string; message: string; under?: AskTrace }
  | { kind: 'answer'; trace: AskTrace }
  | { kind: 'compare'; base: AskTrace; other: AskTrace }
  /** `trace`: the answer under the report ("Back to the answer"). */
  | { kind: 'training'; report: TrainingReport; trace?: AskTrace };

export type WebviewNotification = NotificationMessage<WebviewNotificationMap>;

/** The answer a state stands on (what the Evidence view and region commands act on). */
export function answerOf(state: InspectorState): AskTrace | undefined {
  switch (state.kind) {
    case 'placeholder':
      return undefined;
    case 'busy':
    case 'failed':
      return state.under;
    case 'answer':
      return state.trace;
    case 'compare':
      return state.base;
    case 'training':
      return state.trace;
    default: {
      const unreachable: never = state;
      return unreachable;
    }
  }
}

function notify<M extends keyof WebviewNotificationMap>(method: M, params: WebviewNotificationMap[M]): WebviewNotification {
  return { kind: 'notify', method, params } as WebviewNotification;
}

export interface InspectorControllerDeps {
  /** The placeholder view as it is now (the corpus summary changes with the index). */
  view(): PlaceholderView;
  logger: Logger;
  /** The clock that paces progress notifications (default Date.now). */
  now?: () => number;
}

export class InspectorController {
  private current: InspectorState = { kind: 'placeholder' };
  /** The open webview's door, and whether it has said `webview/ready` since it was attached. */
  private webview: { post: (message: WebviewNotification) => void; ready: boolean } | undefined;
  /** One-shot notifications made while the webview was not ready, sent after the state on ready. */
  private outbox: WebviewNotification[] = [];
  private readonly answerListeners = new Set<(trace: AskTrace | undefined) => void>();
  /** The index run in progress, if any (painted over whatever the state shows). */
  private indexing: IndexingProgress | undefined;
  private indexingSentAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: InspectorControllerDeps) {}

  get state(): InspectorState {
    return this.current;
  }

  /** The answer the inspector stands on (see `answerOf`). */
  get answer(): AskTrace | undefined {
    return answerOf(this.current);
  }

  /** Whether the training report is what the inspector shows. */
  get showsTraining(): boolean {
    return this.current.kind === 'training';
  }

  /** Listens for changes of `answer`; returns the unsubscribe function. */
  onDidChangeAnswer(listener: (trace: AskTrace | undefined) => void): () => void {
    this.answerListeners.add(listener);
    return () => this.answerListeners.delete(listener);
  }

  // ---- the webview ----

  /** A new webview (a panel created or restored); it is painted when it says ready. Returns the detach function. */
  attach(post: (message: WebviewNotification) => void): () => void {
    const webview = { post, ready: false };
    this.webview = webview;
    this.outbox = [];
    return () => {
      if (this.webview === webview) this.webview = undefined;
    };
  }

  /** A notification from the webview (validated by the protocol endpoint). */
  receive(message: NotificationMessage<HostNotificationMap>): void {
    switch (message.method) {
      case 'webview/ready':
        if (message.params.protocolVersion !== PROTOCOL_VERSION) {
          this.deps.logger.log('warn', `inspector webview speaks protocol ${message.params.protocolVersion}, host ${PROTOCOL_VERSION}`);
        }
        this.ready();
        this.deps.logger.log('info', `inspector handshake complete (protocol ${PROTOCOL_VERSION})`);
        return;
      case 'webview/error':
        this.deps.logger.log('error', `inspector webview: ${message.params.message}`);
        return;
      default: {
        const unreachable: never = message;
        this.deps.logger.log('error', `unhandled webview notification ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** The webview (re)loaded: the outbox — hello, the current state, then one-shots — is flushed. */
  private ready(): void {
    const webview = this.webview;
    if (!webview) return;
    webview.ready = true;
    const outbox = [
      notify('host/hello', { protocolVersion: PROTOCOL_VERSION, view: this.deps.view() }),
      ...this.paint(this.current, true),
      ...this.outbox,
      // An index run still going shows its progress in the reloaded webview too.
      ...(this.indexing ? [notify('inspector/indexing', this.indexing)] : []),
    ];
    this.outbox = [];
    for (const message of outbox) webview.post(message);
  }

  // ---- index runs (from the session's progress) ----

  /**
   * An index run's progress: posted at its start, its end and at most every INDEXING_INTERVAL_MS
   * between (a PDF reports every page); a webview that loads meanwhile gets the latest. Its end
   * repaints the placeholder, whose corpus summary it changed.
   */
  indexProgress(progress: IndexingProgress): void {
    const now = (this.deps.now ?? Date.now)();
    const edge = !this.indexing || !progress.running || progress.questionWaiting !== this.indexing.questionWaiting;
    this.indexing = progress.running ? progress : undefined;
    if (!edge && now - this.indexingSentAt < INDEXING_INTERVAL_MS) return;
    this.indexingSentAt = now;
    this.send(notify('inspector/indexing', progress), false);
    if (!progress.running) this.viewChanged();
  }

  // ---- questions (from the session's events) ----

  /** Follows the questions (questions.ts): busy while one runs, then its answer, or back / a failure notice. */
  onQuestion(event: QuestionEvent): void {
    switch (event.type) {
      case 'started':
        return this.questionStarted(event.id, event.question);
      case 'answered':
        return this.questionAnswered(event.trace);
      case 'cancelled':
        return this.questionCancelled(event.id);
      case 'failed':
        return this.questionFailed(event.id, event.error.message);
      default: {
        const unreachable: never = event;
        this.deps.logger.log('error', `unhandled question event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  questionStarted(questionId: number, question: string): void {
    const under = this.answer;
    this.set({ kind: 'busy', questionId, question, ...(under ? { under } : {}) });
  }

  /** The newest question's answer replaces whatever is shown. */
  questionAnswered(trace: AskTrace): void {
    this.set({ kind: 'answer', trace });
  }

  /** A cancelled question gives the panel back to the answer it replaced (or the placeholder). */
  questionCancelled(questionId: number): void {
    const s = this.current;
    if (s.kind !== 'busy' || s.questionId !== questionId) return;
    this.set(s.under ? { kind: 'answer', trace: s.under } : { kind: 'placeholder' });
  }

  /** A failed question: the panel says so (the answer under it stays the one the views follow). */
  questionFailed(questionId: number, message: string): void {
    const s = this.current;
    if (s.kind !== 'busy' || s.questionId !== questionId) return;
    this.set({ kind: 'failed', question: s.question, message, ...(s.under ? { under: s.under } : {}) });
  }

  // ---- commands ----

  /** Shows an answer (a reopened or replayed trace). */
  showTrace(trace: AskTrace): void {
    this.set({ kind: 'answer', trace });
  }

  /** The webview replayed the shown answer and shows the replay itself: it becomes the answer, nothing is repainted. */
  replayed(trace: AskTrace): void {
    this.set({ kind: 'answer', trace }, false);
  }

  /** Shows `base` compared with `other`. */
  compare(base: AskTrace, other: AskTrace): void {
    this.set({ kind: 'compare', base, other });
  }

  /** Shows the node-adapter training report over the current answer. */
  showTraining(report: TrainingReport): void {
    const trace = this.answer;
    this.set({ kind: 'training', report, ...(trace ? { trace } : {}) });
  }

  /**
   * Selects a region of the current answer. The training report or a failure notice gives way to
   * the answer first; while a question is being answered there is nothing to select in.
   */
  reveal(itemId: string, nodeId: string): boolean {
    const s = this.current;
    const trace = answerOf(s);
    if (s.kind === 'busy' || !trace) return false;
    if (s.kind === 'training' || s.kind === 'failed') this.set({ kind: 'answer', trace });
    this.send(notify('inspector/reveal', { itemId, nodeId }), true);
    return true;
  }

  /** The placeholder's content changed (a new index): repainted if the placeholder is shown. */
  viewChanged(): void {
    if (this.current.kind === 'placeholder') this.send(notify('inspector/showView', { view: this.deps.view() }), false);
  }

  /** A saved trace was deleted: if it is the answer shown, the placeholder replaces it. */
  traceDeleted(traceId: string): void {
    const s = this.current;
    if (answerOf(s)?.id !== traceId && !(s.kind === 'compare' && s.other.id === traceId)) return;
    if (s.kind === 'busy') this.set({ kind: 'busy', questionId: s.questionId, question: s.question });
    else if (s.kind === 'failed') this.set({ kind: 'failed', question: s.question, message: s.message });
    else if (s.kind === 'compare' && s.base.id !== traceId) this.set({ kind: 'answer', trace: s.base });
    else this.set({ kind: 'placeholder' });
  }

  // ---- internals ----

  private set(next: InspectorState, paint = true): void {
    const before = this.answer;
    this.current = next;
    // One-shots made for the state before (a reveal in an older answer) mean nothing now.
    this.outbox = [];
    if (paint && this.webview?.ready) for (const message of this.paint(next, false)) this.webview.post(message);
    const after = this.answer;
    if (after !== before) for (const listener of [...this.answerListeners]) listener(after);
  }

  /** Posts now when the webview is ready; else a one-shot waits in the outbox (or is dropped). */
  private send(message: WebviewNotification, keepUntilReady: boolean): void {
    if (this.webview?.ready) this.webview.post(message);
    else if (keepUntilReady) this.outbox.push(message);
  }

  /**
   * The notifications that paint a state: into a webview that just loaded (`fresh`, after
   * `host/hello`, which carries the placeholder), or over what the webview showed before.
   */
  private paint(s: InspectorState, fresh: boolean): WebviewNotification[] {
    switch (s.kind) {
      case 'placeholder':
        return fresh ? [] : [notify('inspector/showView', { view: this.deps.view() })];
      case 'busy':
        return [notify('inspector/busy', { question: s.question })];
      case 'failed': {
        const view = this.deps.view();
        return [notify('inspector/showView', { view: { ...view, message: `“${s.question}” could not be answered: ${s.message}` } })];
      }
      case 'answer':
        return [notify('inspector/showTrace', { trace: s.trace })];
      case 'compare':
        return [notify('inspector/compare', { base: s.base, other: s.other })];
      case 'training':
        // A fresh webview gets the answer under the report first, so "Back to the answer" has it.
        return [...(fresh && s.trace ? [notify('inspector/showTrace', { trace: s.trace })] : []), notify('inspector/showTraining', { report: s.report })];
      default: {
        const unreachable: never = s;
        return unreachable;
      }
    }
  }
}
