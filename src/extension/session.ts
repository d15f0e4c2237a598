/**
 * The Canopy state of one window: a CanopyWorkspace over the first workspace folder with its
 * index in the extension's workspace storage, the current question (at most one: a new one
 * cancels the old, and only the newest may paint), the last trace, and the file watcher that
 * re-indexes incrementally.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LatestOnly } from '../core/app/latestOnly';
import { ReindexScheduler } from '../core/app/reindexScheduler';
import { CanopyWorkspace } from '../core/app/workspace';
import { CancelledError, describeError } from '../core/errors';
import { namedOnce, type IndexSummary } from '../core/index/indexer';
import type { AskTrace } from '../contracts/trace';
import type { ReplaySettings } from '../core/engine/replay';
import type { SavedTraceSummary } from '../core/app/workspace';
import { readFilesExclude, readSettings } from './config';
import { chooseLlm } from './llmConfig';
import { userAdapterCheckpoint, userEncoderFolder } from '../core/config/trust';
import { annotationsPath } from '../core/annotate/store';
import type { TrainRunOptions, TrainRunReport } from '../core/train/run';

export class CanopySession implements vscode.Disposable {
  private workspace: CanopyWorkspace | undefined;
  private indexing: Promise<IndexSummary | undefined> | undefined;
  /** At most one question at a time: a new one cancels the old, and only the newest paints. */
  private readonly questions = new LatestOnly();
  private reindex: ReindexScheduler | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  lastSummary: IndexSummary | undefined;
  lastTrace: AskTrace | undefined;
  lastTraceFile: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {}

  get folder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
  }

  /** Storage for this workspace's index (never inside the user's folder). */
  private indexDir(): string {
    const base = this.context.storageUri ?? this.context.globalStorageUri;
    return path.join(base.fsPath, 'index');
  }

  /** (Re)creates the core workspace from the current settings. */
  private current(): CanopyWorkspace {
    const folder = this.folder;
    if (!folder) throw new Error('open a folder first — there is nothing to index');
    if (!this.workspace) {
      const settings = readSettings(folder.uri);
      const { value: userModel, note } = userEncoderFolder(settings.encoderModelFolder, vscode.workspace.isTrusted);
      if (note) this.log.warn(note);
      this.workspace = new CanopyWorkspace({
        root: folder.uri.fsPath,
        indexDir: this.indexDir(),
        settings,
        encoder: userModel ? { kind: 'onnx-folder', path: userModel } : { kind: 'builtin' },
        builtinModelDir: vscode.Uri.joinPath(this.context.extensionUri, 'models', 'use-lite').fsPath,
        extraExclude: readFilesExclude(folder.uri),
        logger: { log: (level, message) => this.log[level === 'trace' || level === 'debug' ? 'debug' : level](message) },
      });
    }
    return this.workspace;
  }

  /** Settings that shape the index changed: rebuild the core workspace on next use. */
  async reset(): Promise<void> {
    const old = this.workspace;
    this.workspace = undefined;
    await old?.dispose();
  }

  private indexedFiles = new Set<string>();

  /** Whether a workspace-relative path is a file of the current index (the webview may open only those). */
  hasIndexedFile(relPath: string): boolean {
    return this.indexedFiles.has(relPath);
  }

  /** Indexes with a cancellable progress notification; concurrent calls share one run. */
  async index(options: { quiet?: boolean } = {}): Promise<IndexSummary | undefined> {
    if (this.indexing) return this.indexing;
    const run = async (): Promise<IndexSummary | undefined> => {
      const ws = this.current();
      const location = options.quiet ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification;
      try {
        const summary = await vscode.window.withProgress({ location, title: 'Canopy: indexing', cancellable: !options.quiet }, async (progress, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          let last = 0;
          try {
            return await ws.index({
              signal: abort.signal,
              progress: {
                report: ({ done, total, message }) => {
                  const pct = total > 0 ? (100 * done) / total : 0;
                  progress.report({ increment: pct - last, ...(message ? { message } : {}) });
                  last = pct;
                },
              },
            });
          } finally {
            sub.dispose();
          }
        });
        this.lastSummary = summary;
        await this.refreshIndexedFiles();
        this.log.info(`indexed ${summary.files} files (${summary.parsed} parsed, ${summary.reused} unchanged, ${summary.removed} removed), ${summary.items} items, ${summary.nodes} nodes in ${summary.seconds.toFixed(1)} s`);
        if (summary.rebuilt) this.log.warn(summary.rebuilt);
        for (const e of summary.errors) this.log.warn(namedOnce(e.file, e.reason));
        for (const w of summary.warnings) this.log.info(namedOnce(w.file, w.message));
        for (const s of summary.skipped) this.log.info(`skipped ${s.file}: ${s.reason}`);
        return summary;
      } catch (err) {
        if (err instanceof CancelledError) {
          this.log.info('indexing cancelled; the previous index is unchanged');
          return undefined;
        }
        throw err;
      }
    };
    this.indexing = run().finally(() => {
      this.indexing = undefined;
    });
    return this.indexing;
  }

  private async refreshIndexedFiles(): Promise<void> {
    const corpus = await this.current().openIndex();
    this.indexedFiles = new Set(Object.keys(corpus.manifest.files));
    const byFormat: Record<string, number> = {};
    for (const entry of Object.values(corpus.manifest.files)) byFormat[entry.format] = (byFormat[entry.format] ?? 0) + 1;
    this.corpus = { files: this.indexedFiles.size, byFormat, root: corpus.manifest.root };
  }

  /** A summary of the live index for the inspector's placeholder. */
  corpus: { files: number; byFormat: Record<string, number>; root: string } | undefined;

  /** Opens the existing index (if any) so the inspector can resolve files before a new run. */
  async loadExisting(): Promise<boolean> {
    try {
      await this.refreshIndexedFiles();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Answers a question. A newer question cancels this one; `paint` is called only if this is
   * still the newest question when the answer is ready.
   */
  async ask(question: string, paint: (trace: AskTrace) => void, token?: vscode.CancellationToken): Promise<AskTrace | undefined> {
    const outer = new AbortController();
    const sub = token?.onCancellationRequested(() => outer.abort());
    try {
      const trace = await this.questions.run(async (signal) => {
        if (!(await this.loadExisting())) await this.index();
        const folder = this.folder!;
        const settings = readSettings(folder.uri);
        const llm = await chooseLlm(settings, this.context.secrets, this.log);
        if (llm.note) this.log.info(`LLM not used: ${llm.note}`);
        const adapter = userAdapterCheckpoint(settings.adapterCheckpoint, vscode.workspace.isTrusted);
        if (adapter.note) this.log.warn(adapter.note);
        const trace = await this.current().ask(question, { signal, adapter: adapter.value, ...(llm.model ? { llm: llm.model } : {}) });
        const problem = this.current().adapterProblem;
        if (problem) void vscode.window.showWarningMessage(`Canopy: the adapter checkpoint is not used — ${problem}`);
        return trace;
      }, outer.signal);
      if (!trace) return undefined; // cancelled, or a newer question owns the panel
      this.lastTrace = trace;
      this.lastTraceFile = await this.current().saveTrace(trace);
      paint(trace);
      return trace;
    } finally {
      sub?.dispose();
    }
  }

  // ---- the shown trace and the trace history (the inspector, the views and the decorations) ----

  private readonly shownEmitter = new vscode.EventEmitter<AskTrace | undefined>();
  /** Fires when the trace the inspector shows changes (a new answer, a reopened or replayed one). */
  readonly onDidChangeShownTrace = this.shownEmitter.event;
  private readonly historyEmitter = new vscode.EventEmitter<void>();
  /** Fires when saved traces were added or deleted. */
  readonly onDidChangeHistory = this.historyEmitter.event;
  private shown: AskTrace | undefined;

  /** The trace the inspector shows (the last answer unless another was reopened or replayed). */
  get shownTrace(): AskTrace | undefined {
    return this.shown ?? this.lastTrace;
  }

  show(trace: AskTrace | undefined): void {
    this.shown = trace;
    this.shownEmitter.fire(trace);
  }

  /** A new answer was saved: it is shown, and the history changed. */
  answered(trace: AskTrace): void {
    this.show(trace);
    this.historyEmitter.fire();
  }

  /** Saved traces, newest first (empty before the first question). */
  /** Where trained adapter checkpoints are written: the extension's workspace storage. */
  adapterDir(): string {
    const base = this.context.storageUri ?? this.context.globalStorageUri;
    return path.join(base.fsPath, 'adapters');
  }

  /** Trains the node-encoder adapter on the folder's gold annotations (the `canopy train` recipe). */
  async trainAdapter(options: Omit<TrainRunOptions, 'root' | 'embed' | 'encoderId' | 'dim' | 'tokens' | 'logger' | 'annotationsFile' | 'outDir'>): Promise<TrainRunReport> {
    const folder = this.folder;
    if (!folder) throw new Error('open a folder first — annotations live in its .canopy folder');
    return this.current().trainAdapter({ ...options, annotationsFile: annotationsPath(folder.uri.fsPath), outDir: this.adapterDir() });
  }

  async listTraces(): Promise<SavedTraceSummary[]> {
    if (!this.folder) return [];
    return this.current().listTraces();
  }

  async readTrace(name: string): Promise<AskTrace> {
    return this.current().readTrace(name);
  }

  async deleteTrace(name: string): Promise<void> {
    const trace = await this.current().readTrace(name).catch(() => undefined);
    await this.current().deleteTrace(name);
    if (trace && this.shownTrace?.id === trace.id) this.show(undefined);
    if (trace && this.lastTrace?.id === trace.id) this.lastTrace = undefined;
    this.historyEmitter.fire();
  }

  /** A trace by id: the shown or last one, else a saved one. */
  async findTrace(id: string): Promise<AskTrace | undefined> {
    for (const t of [this.shown, this.lastTrace]) if (t?.id === id) return t;
    for (const s of await this.listTraces()) if (s.id === id) return this.readTrace(s.name);
    return undefined;
  }

  /** Replays a trace with other settings (no re-embedding), saves and shows the replay. */
  async replay(trace: AskTrace, settings: ReplaySettings): Promise<AskTrace> {
    await this.loadExisting();
    const replayed = await this.current().replay(trace, settings);
    await this.current().saveTrace(replayed);
    this.show(replayed);
    this.historyEmitter.fire();
    return replayed;
  }

  /** Re-index a few seconds after files change (debounced), when canopy.autoIndex is on. */
  watch(): void {
    const folder = this.folder;
    if (!folder) return;
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '**/*'));
    // Debounced, at most one run in flight, one follow-up for changes made during a run, and a run
    // at least every 20 s while changes keep coming (core/app/reindexScheduler.ts, tested with a
    // burst of 1,000 changes).
    this.reindex = new ReindexScheduler(() => this.index({ quiet: true }), {
      delayMs: 2000,
      onError: (err) => this.log.error(`re-indexing failed: ${describeError(err).message}`),
    });
    const schedule = (uri: vscode.Uri) => {
      if (!readSettings(folder.uri).autoIndex || !this.lastSummary) return;
      if (uri.fsPath.startsWith(this.indexDir())) return;
      this.reindex?.notify();
    };
    this.disposables.push(watcher, watcher.onDidChange(schedule), watcher.onDidCreate(schedule), watcher.onDidDelete(schedule));
  }

  dispose(): void {
    this.shownEmitter.dispose();
    this.historyEmitter.dispose();
    this.reindex?.dispose();
    this.questions.cancel();
    while (this.disposables.length > 0) this.disposables.pop()?.dispose();
    void this.workspace?.dispose();
  }
}
