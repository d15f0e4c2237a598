/**
 * The Canopy state of one window that needs VS Code: indexing with a progress notification, the
 * file watcher that re-indexes incrementally, the set of indexed files the webview may open, and
 * the trace history (saved answers, replays, deletions). The core services it works through are
 * built in activate() and handed in; every request reads the settings afresh (`settings()`), so
 * nothing here is rebuilt when a setting changes.
 */
import * as vscode from 'vscode';
import type { AskService } from '../core/app/askService';
import type { IndexService } from '../core/app/indexService';
import { ReindexScheduler } from '../core/app/reindexScheduler';
import { traceRetention, type TraceStore } from '../core/app/traceStore';
import type { TraceSummary } from '../contracts/savedTrace';
import type { TrainingService, TrainRequest } from '../core/app/trainingService';
import { annotationsPath } from '../core/annotate/store';
import type { CanopySettings } from '../core/config/settings';
import type { ReplaySettings } from '../contracts/askSettings';
import { CancelledError, describeError } from '../core/errors';
import { namedOnce, type IndexSummary } from '../core/index/indexer';
import type { TrainRunReport } from '../core/train/run';
import type { AskTrace } from '../contracts/trace';
import type { IndexingProgress } from '../protocol/messages';
import { readFilesExclude } from './config';

export interface SessionDeps {
  /** The first workspace folder (a new first folder restarts the extension host). */
  folder: vscode.WorkspaceFolder | undefined;
  /** The settings as they are now (read on every request). */
  settings(): CanopySettings;
  index: IndexService;
  traces: TraceStore;
  asker: AskService;
  training: TrainingService;
  /** Where trained adapter checkpoints are written (workspace storage). */
  adapterDir: string;
  log: vscode.LogOutputChannel;
}

export class CanopySession implements vscode.Disposable {
  private indexing: Promise<IndexSummary | undefined> | undefined;
  private reindex: ReindexScheduler | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly historyEmitter = new vscode.EventEmitter<void>();
  /** Fires when saved traces were added or deleted. */
  readonly onDidChangeHistory = this.historyEmitter.event;
  private readonly deletedEmitter = new vscode.EventEmitter<AskTrace>();
  /** Fires with a saved trace that was deleted. */
  readonly onDidDeleteTrace = this.deletedEmitter.event;
  private readonly progressEmitter = new vscode.EventEmitter<IndexingProgress>();
  /** Fires with an index run's progress (every report), and once more with `running: false` when it ends. */
  readonly onDidIndexProgress = this.progressEmitter.event;
  /** The latest progress of the run in flight, and how many questions wait for it. */
  private progress: IndexingProgress | undefined;
  private waiting = 0;
  lastSummary: IndexSummary | undefined;
  private readonly log: vscode.LogOutputChannel;

  constructor(private readonly deps: SessionDeps) {
    this.log = deps.log;
  }

  get folder(): vscode.WorkspaceFolder | undefined {
    return this.deps.folder;
  }

  /** Where trained adapter checkpoints are written: the extension's workspace storage. */
  adapterDir(): string {
    return this.deps.adapterDir;
  }

  private requireFolder(what: string): vscode.WorkspaceFolder {
    const folder = this.folder;
    if (!folder) throw new Error(`open a folder first — ${what}`);
    return folder;
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
      const folder = this.requireFolder('there is nothing to index');
      const settings = this.deps.settings();
      const location = options.quiet ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification;
      try {
        const summary = await vscode.window.withProgress({ location, title: 'Canopy: indexing', cancellable: !options.quiet }, async (progress, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          let last = 0;
          try {
            return await this.deps.index.index(settings, {
              extraExclude: readFilesExclude(folder.uri),
              signal: abort.signal,
              progress: {
                report: ({ done, total, message, file, part }) => {
                  const pct = total > 0 ? (100 * done) / total : 0;
                  progress.report({ increment: pct - last, ...(message ? { message } : {}) });
                  last = pct;
                  this.reportProgress({ running: true, files: { done, total }, ...(file ? { file } : {}), ...(part ? { part } : {}) });
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
        for (const e of summary.errors) this.log.warn(`${namedOnce(e.file, e.reason)}${summary.stale.some((x) => x.file === e.file) ? '; its last good version stays indexed (stale)' : ''}`);
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
    this.reportProgress({ running: true, files: { done: 0, total: 0 } });
    this.indexing = run().finally(() => {
      this.indexing = undefined;
      const files = this.progress?.files ?? { done: 0, total: 0 };
      this.reportProgress({ running: false, files: { done: files.total, total: files.total } });
    });
    return this.indexing;
  }

  /** Whether an index run is in flight. */
  get isIndexing(): boolean {
    return this.indexing !== undefined;
  }

  private reportProgress(p: IndexingProgress): void {
    this.progress = p.running ? p : undefined;
    this.progressEmitter.fire(this.waiting > 0 && p.running ? { ...p, questionWaiting: true } : p);
  }

  private async refreshIndexedFiles(): Promise<void> {
    const corpus = await this.deps.index.corpus(this.deps.settings());
    this.indexedFiles = new Set(Object.keys(corpus.manifest.files));
    const byFormat: Record<string, number> = {};
    for (const entry of Object.values(corpus.manifest.files)) byFormat[entry.format] = (byFormat[entry.format] ?? 0) + 1;
    this.corpus = { files: this.indexedFiles.size, byFormat, root: corpus.manifest.root };
  }

  /** A summary of the live index for the inspector's placeholder. */
  corpus: { files: number; byFormat: Record<string, number>; root: string } | undefined;

  /** Opens the existing index (if any) so the inspector can resolve files before a new run. */
  async loadExisting(): Promise<boolean> {
    if (!this.folder) return false;
    try {
      await this.refreshIndexedFiles();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Makes sure there is an index to ask: a run in flight is waited for (the inspector shows its
   * progress and that a question waits), else the existing index, else a first run.
   */
  async ensureIndex(): Promise<void> {
    if (this.indexing) {
      this.waiting++;
      if (this.progress) this.reportProgress(this.progress);
      try {
        await this.indexing;
      } finally {
        this.waiting--;
      }
    }
    if (!(await this.loadExisting())) await this.index();
  }

  /** Trains the node-encoder adapter on the folder's gold annotations (the `canopy train` recipe). */
  async trainAdapter(options: Omit<TrainRequest, 'annotationsFile' | 'outDir'>): Promise<TrainRunReport> {
    const folder = this.requireFolder('annotations live in its .canopy folder');
    return this.deps.training.train(this.deps.settings(), { ...options, annotationsFile: annotationsPath(folder.uri.fsPath), outDir: this.deps.adapterDir });
  }

  // ---- the trace history ----

  /** A new answer was saved (the Questions view refreshes). */
  historyChanged(): void {
    this.historyEmitter.fire();
  }

  /** Saved traces, newest first (empty without a folder). */
  async listTraces(): Promise<TraceSummary[]> {
    if (!this.folder) return [];
    return this.deps.traces.list();
  }

  async readTrace(name: string): Promise<AskTrace> {
    return this.deps.traces.read(name);
  }

  async deleteTrace(name: string): Promise<void> {
    const trace = await this.deps.traces.read(name).catch(() => undefined);
    await this.deps.traces.delete(name);
    if (trace) this.deletedEmitter.fire(trace);
    this.historyEmitter.fire();
  }

  /** A saved trace by id. */
  async findSavedTrace(id: string): Promise<AskTrace | undefined> {
    if (!this.folder) return undefined;
    return this.deps.traces.find(id);
  }

  /** Replays a trace with other settings (no re-embedding) and saves the replay. */
  async replay(trace: AskTrace, settings: ReplaySettings): Promise<AskTrace> {
    await this.loadExisting();
    const current = this.deps.settings();
    const replayed = await this.deps.asker.replay(trace, settings, current);
    await this.deps.traces.save(replayed, traceRetention(current));
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
      if (!this.deps.settings().autoIndex || !this.lastSummary) return;
      if (uri.fsPath.startsWith(this.deps.index.indexDir)) return;
      this.reindex?.notify();
    };
    this.disposables.push(watcher, watcher.onDidChange(schedule), watcher.onDidCreate(schedule), watcher.onDidDelete(schedule));
  }

  dispose(): void {
    this.progressEmitter.dispose();
    this.historyEmitter.dispose();
    this.deletedEmitter.dispose();
    this.reindex?.dispose();
    while (this.disposables.length > 0) this.disposables.pop()?.dispose();
  }
}
