/**
 * The gold-annotation and adapter commands of the extension (design §10): open, edit and remove
 * a gold span from the Gold view, store a mark that came from the inspector, train the
 * node-encoder adapter with cancellable progress (checkpoint in workspace storage, before/after
 * report), and pick the active checkpoint — or an earlier one, which is the rollback.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { annotationsPath, AnnotationStore, contextFingerprint } from '../core/annotate/store';
import { CancelledError, describeError } from '../core/errors';
import { formatScoring } from '../core/app/scoringFit';
import { listCheckpoints } from '../core/train/checkpoint';
import { formatAskFit } from '../core/train/askFit';
import { formatBeforeAfter } from '../core/train/report';
import type { TrainRunReport } from '../core/train/run';
import { settingKeys } from '../core/config/settings';
import type { TrainingReport } from '../protocol/messages';
import { addGoldMark } from './goldMarks';
import { trainingReport } from './views/trainingReport';
import type { CanopySession } from './session';
import type { GoldEntry, GoldNode } from './views/goldModel';
import type { GoldMark } from './views/inspectorRequests';

const author = () => process.env.USER ?? process.env.USERNAME ?? 'unknown';

const isEntry = (n: unknown): n is GoldEntry => typeof n === 'object' && n !== null && (n as GoldNode).kind === 'annotation';

export interface GoldCommandDeps {
  session: CanopySession;
  log: vscode.LogOutputChannel;
  /** Refreshes the Gold view. */
  refresh(): void;
  /** Shows the training report in the inspector (opening it when closed). */
  showTraining(report: TrainingReport): Promise<void>;
  /** Whether the inspector shows the training report now (so a change of the active one updates it). */
  trainingShown(): boolean;
}

export function goldCommands(deps: GoldCommandDeps) {
  const { session, log } = deps;
  const store = () => {
    const folder = session.folder;
    if (!folder) throw new Error('open a folder first — annotations live in its .canopy folder');
    return new AnnotationStore(annotationsPath(folder.uri.fsPath));
  };
  const fail = (what: string) => (err: unknown) => {
    const { code, message } = describeError(err);
    log.error(`${what} failed: ${message} (${code})`);
    void vscode.window.showErrorMessage(`Canopy: ${what} failed — ${message}`);
  };
  /** Checkpoints of workspace storage and `<folder>/.canopy/adapters`, newest first. */
  const findCheckpoints = async () => {
    const folder = session.folder;
    const dirs = [session.adapterDir(), ...(folder ? [path.join(folder.uri.fsPath, '.canopy', 'adapters')] : [])];
    return (await Promise.all(dirs.map((d) => listCheckpoints(d)))).flat().sort((a, b) => b.checkpoint.createdAt.localeCompare(a.checkpoint.createdAt));
  };
  /** The active checkpoint setting as an absolute path ('' = the untrained encoder). */
  const activeCheckpoint = () => {
    const active = vscode.workspace.getConfiguration().get<string>(settingKeys.adapterCheckpoint) ?? '';
    return active ? path.resolve(session.folder?.uri.fsPath ?? '', active) : '';
  };
  /** The last run of this window: its split and preference counts are in no checkpoint. */
  let lastRun: TrainRunReport | undefined;
  /** The inspector's Training view: every checkpoint, the active one, the last run. */
  const showReport = async () => {
    await deps.showTraining(trainingReport(await findCheckpoints(), activeCheckpoint(), lastRun));
  };

  return {
    /** `gold/mark` from the inspector, through `inspectorRequests.ts`'s checks. */
    async markFromInspector(mark: GoldMark): Promise<{ annotationId: string; added: boolean }> {
      const folder = session.folder;
      if (!folder) throw new Error('open a folder first — annotations live in its .canopy folder');
      const { annotation, added } = await addGoldMark(folder.uri.fsPath, mark, author());
      log.info(`gold annotation ${annotation.id} (${mark.source}) for "${mark.question}" at ${annotation.file}`);
      deps.refresh();
      return { annotationId: annotation.id, added };
    },

    async open(arg?: unknown): Promise<void> {
      const folder = session.folder;
      if (!isEntry(arg) || !folder) return;
      const a = arg.anchor;
      const uri = vscode.Uri.joinPath(folder.uri, ...a.file.split('/'));
      if (a.startLine === undefined) {
        await vscode.commands.executeCommand('vscode.open', uri);
        return;
      }
      const range = new vscode.Range(a.startLine - 1, a.startColumn ?? 0, (a.endLine ?? a.startLine) - 1, a.endColumn ?? 0);
      const editor = await vscode.window.showTextDocument(uri, { selection: range, preview: true });
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    },

    async unmark(arg?: unknown): Promise<void> {
      if (!isEntry(arg)) return;
      const yes = 'Remove';
      const answer = await vscode.window.showWarningMessage(`Remove this gold span for “${arg.annotation.question}”?`, { modal: true, detail: arg.annotation.text.slice(0, 300) }, yes);
      if (answer !== yes) return;
      try {
        const removed = await store().remove(arg.annotation.id);
        if (!removed) void vscode.window.showWarningMessage('Canopy: that annotation was already gone.');
        log.info(`gold annotation ${arg.annotation.id} removed`);
        deps.refresh();
      } catch (err) {
        fail('removing the gold span')(err);
      }
    },

    async edit(arg?: unknown): Promise<void> {
      if (!isEntry(arg)) return;
      const question = 'Change the question…';
      const selection = 'Replace the span with the editor selection';
      const picked = await vscode.window.showQuickPick([question, selection], { title: 'Canopy: edit gold evidence' });
      try {
        if (picked === question) {
          const typed = await vscode.window.showInputBox({ title: 'Canopy: question', value: arg.annotation.question, ignoreFocusOut: true });
          if (!typed?.trim() || typed.trim() === arg.annotation.question) return;
          // A dataset id groups by id, not text: an edited question is a question of its own.
          await store().update(arg.annotation.id, { question: typed.trim(), questionId: undefined });
        } else if (picked === selection) {
          const editor = vscode.window.activeTextEditor;
          const folder = session.folder;
          if (!editor || editor.selection.isEmpty || !folder) {
            void vscode.window.showWarningMessage('Canopy: select the new gold text in an editor first.');
            return;
          }
          const doc = editor.document;
          const rel = vscode.workspace.asRelativePath(doc.uri, false).split('\\').join('/');
          const src = doc.getText();
          const sel = editor.selection;
          const start = doc.offsetAt(sel.start);
          const end = doc.offsetAt(sel.end);
          await store().update(arg.annotation.id, {
            anchor: { file: rel, charStart: start, charEnd: end, startLine: sel.start.line + 1, startColumn: sel.start.character, endLine: sel.end.line + 1, endColumn: sel.end.character },
            text: src.slice(start, end),
            context: contextFingerprint(src, start, end),
            time: new Date().toISOString(),
            author: author(),
          });
        } else return;
        deps.refresh();
      } catch (err) {
        fail('editing the gold span')(err);
      }
    },

    async train(): Promise<void> {
      let report: TrainRunReport | undefined;
      try {
        report = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Canopy: training the node adapter', cancellable: true },
          async (progress, token) => {
            const abort = new AbortController();
            const sub = token.onCancellationRequested(() => abort.abort());
            let last = 0;
            try {
              // The default recipe of `canopy train` (core DEFAULT_RECIPE): cross-validated selection.
              return await session.trainAdapter({
                signal: abort.signal,
                progress: {
                  report: ({ done, total, message }) => {
                    const pct = total > 0 ? (100 * done) / total : 0;
                    progress.report({ message: `${message ?? ''} ${done}/${total}`, increment: Math.max(0, pct - last) });
                    last = pct;
                  },
                },
              });
            } finally {
              sub.dispose();
            }
          },
        );
      } catch (err) {
        if (err instanceof CancelledError) {
          void vscode.window.showInformationMessage('Canopy: training cancelled; no checkpoint was written.');
          return;
        }
        fail('training the adapter')(err);
        return;
      }
      const lines = formatBeforeAfter(report.report);
      log.info(`adapter training: ${report.questions.train} train / ${report.questions.validation} validation / ${report.questions.heldOut} held-back questions`);
      for (const l of lines) log.info(`  ${l}`);
      if (report.ask) for (const l of formatAskFit(report.ask)) log.info(l);
      if (report.scoring) for (const l of formatScoring(report.scoring)) log.info(l);
      const ask = report.ask;
      if (ask) {
        // Issue 36: what the ask uses changes only when the fit to its configuration is better on
        // held-back questions; then the checkpoint (when the adapter takes part) is activated, and
        // the report says what was measured either way.
        lastRun = report;
        if (report.checkpoint) {
          log.info(`checkpoint: ${report.checkpoint.file}`);
          await setActive(report.checkpoint.file);
        } else if (report.checkpointSkipped) log.info(report.checkpointSkipped);
        await showReport().catch(fail('showing the training report'));
        const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
        const h = ask.heldBack;
        const figures = h ? ` Held back, the ask's configuration: decision accuracy ${pct(h.before.decisionAccuracy)} → ${pct(h.after.decisionAccuracy)}, gold recall ${pct(h.before.goldRecall)} → ${pct(h.after.goldRecall)}, evidence tokens ${h.before.evidenceTokens} → ${h.after.evidenceTokens}.` : '';
        const show = 'Show Log';
        const answer = await vscode.window.showInformationMessage(
          ask.adopted ? `Canopy: training adopted${report.checkpoint ? ` and activated adapter ${report.checkpoint.id}` : ''} — questions now use ${ask.describe.after}.${figures}` : `Canopy: training changed nothing questions use — ${ask.reason}.${figures}`,
          show,
        );
        if (answer === show) log.show(true);
        return;
      }
      if (!report.checkpoint) return;
      log.info(`checkpoint: ${report.checkpoint.file}`);
      // The before/after report in the inspector's Training view (every checkpoint, this one marked).
      lastRun = report;
      await showReport().catch(fail('showing the training report'));
      const d = report.report.delta;
      const use = 'Use This Adapter';
      const show = 'Show Log';
      const answer = await vscode.window.showInformationMessage(
        `Canopy: adapter ${report.checkpoint.id} trained. Held back: decision accuracy ${(100 * report.report.before.decisionAccuracy).toFixed(1)} → ${(100 * report.report.after.decisionAccuracy).toFixed(1)}%, gold recall ${(100 * report.report.before.goldRecall).toFixed(1)} → ${(100 * report.report.after.goldRecall).toFixed(1)}%, evidence tokens ${(-100 * d.tokenReduction).toFixed(1)}%.`,
        use,
        show,
      );
      if (answer === use) {
        await setActive(report.checkpoint.file);
        // Mark it active in the report, if the report is still what the inspector shows.
        if (deps.trainingShown()) await showReport().catch(fail('showing the training report'));
      }
      if (answer === show) log.show(true);
    },

    /** "Canopy: Show Training Report": the checkpoints' before/after figures in the inspector. */
    async showTrainingReport(): Promise<void> {
      try {
        await showReport();
      } catch (err) {
        fail('showing the training report')(err);
      }
    },

    async selectCheckpoint(): Promise<void> {
      const folder = session.folder;
      const found = await findCheckpoints();
      const active = vscode.workspace.getConfiguration().get<string>(settingKeys.adapterCheckpoint) ?? '';
      const pct = (x: unknown) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '?');
      type Pick = vscode.QuickPickItem & { file: string };
      const items: Pick[] = [
        { label: '$(circle-slash) None — the untrained encoder', file: '', ...(active === '' ? { description: 'active' } : {}) },
        ...found.map(({ file, checkpoint: c }) => {
          const r = (c.metrics.report ?? {}) as { before?: Record<string, unknown>; after?: Record<string, unknown> };
          return {
            label: c.id,
            description: `${c.createdAt.replace('T', ' ').slice(0, 16)}${path.resolve(folder?.uri.fsPath ?? '', active) === file ? ' · active' : ''}`,
            detail: `${c.trainedOn.questions} questions, ${c.trainedOn.pairs} pairs · held back: decision acc ${pct(r.before?.decisionAccuracy)} → ${pct(r.after?.decisionAccuracy)}, gold recall ${pct(r.before?.goldRecall)} → ${pct(r.after?.goldRecall)}`,
            file,
          };
        }),
      ];
      const picked = await vscode.window.showQuickPick(items, { title: 'Canopy: active node adapter (pick an earlier one to roll back)', matchOnDetail: true });
      if (!picked) return;
      await setActive(picked.file);
      if (deps.trainingShown()) await showReport().catch(fail('showing the training report'));
    },
  };

  async function setActive(file: string): Promise<void> {
    await vscode.workspace.getConfiguration().update(settingKeys.adapterCheckpoint, file, vscode.ConfigurationTarget.Workspace);
    void vscode.window.showInformationMessage(file ? `Canopy: questions now use the adapter ${path.basename(file, '.json')}.` : 'Canopy: questions now use the untrained encoder.');
  }
}
