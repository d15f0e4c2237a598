/**
 * The extension's entry point: wires the core to VS Code. Everything registered here is pushed
 * into context.subscriptions; per-window state lives in one CanopySession.
 */
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import type { PlaceholderView } from '../protocol/messages';
import { affectsIndex } from './config';
import type { SavedTraceSummary } from '../core/app/workspace';
import type { AskTrace } from '../contracts/trace';
import { EvidenceDecorations } from './decorations';
import { type InspectorHost, InspectorPanel, inspectorViewType } from './inspectorPanel';
import { apiKeySecret } from './llmConfig';
import { CanopySession } from './session';
import { findRegion } from './views/evidenceRegions';
import { EvidenceProvider } from './views/evidenceView';
import { QuestionsProvider } from './views/questionsView';
import { markSelectionAsGold } from './annotations';
import { goldCommands } from './goldCommands';
import { GoldProvider } from './views/goldView';
import { registerAgentIntegrations } from './agentIntegrations';

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Canopy', { log: true });
  const session = new CanopySession(context, log);
  // Language-model tools, @canopy, the MCP server definition, trace links and the trace export.
  const agents = registerAgentIntegrations(context, session, log);

  const view = (): PlaceholderView => {
    const base = { title: 'Canopy Evidence Inspector' };
    if (!session.corpus) return { ...base, message: 'The workspace has not been indexed yet. Run “Canopy: Index Workspace”, or ask a question to index it first.' };
    return { ...base, message: 'No question asked yet. Run “Canopy: Ask a Question”: the answer and the evidence kept or dropped for it appear here.', corpus: session.corpus };
  };
  const host: InspectorHost = {
    currentView: view,
    currentTrace: () => session.shownTrace,
    resolveIndexedFile: (rel) => (session.folder && session.hasIndexedFile(rel) ? vscode.Uri.joinPath(session.folder.uri, rel) : undefined),
    listTraces: () => session.listTraces(),
    readTrace: (name) => session.readTrace(name),
    findTrace: (id) => session.findTrace(id),
    replay: (trace, settings) => session.replay(trace, settings),
    markGold: (mark) => gold.markFromInspector(mark),
    log,
  };

  // Native views and decorations follow the trace the inspector shows.
  const questions = new QuestionsProvider(() => session.listTraces(), log);
  const goldView = new GoldProvider(() => session.folder, log);
  const gold = goldCommands({
    session,
    log,
    refresh: () => goldView.refresh(),
    showTraining: async (report) => {
      await session.loadExisting();
      InspectorPanel.show(context.extensionUri, host).showTraining(report);
    },
    trainingShown: () => InspectorPanel.current?.showsTraining ?? false,
  });
  const evidence = new EvidenceProvider();
  const decorations = new EvidenceDecorations(() => session.folder, log);
  const followShown = (trace: AskTrace | undefined) => {
    evidence.setTrace(trace);
    decorations.setTrace(trace);
  };
  /** A saved trace named by a Questions item (or its file name). */
  const savedTrace = async (arg: unknown): Promise<AskTrace | undefined> => {
    const name = typeof arg === 'string' ? arg : (arg as SavedTraceSummary | undefined)?.name;
    if (!name) return undefined;
    return session.readTrace(name);
  };
  /** The region a command names ({itemId, nodeId}) in the shown trace. */
  const regionArg = (arg: unknown) => {
    const a = arg as { itemId?: unknown; nodeId?: unknown } | undefined;
    const trace = session.shownTrace;
    if (!trace || typeof a?.nodeId !== 'string') return undefined;
    return findRegion(trace, a.nodeId);
  };
  const fail = (what: string) => (err: unknown) => {
    const { code, message } = describeError(err);
    log.error(`${what} failed: ${message} (${code})`);
    void vscode.window.showErrorMessage(`Canopy: ${what} failed — ${message}`);
  };

  context.subscriptions.push(
    log,
    session,
    ...agents.disposables,
    vscode.commands.registerCommand('canopy.openInspector', async () => {
      await session.loadExisting();
      InspectorPanel.show(context.extensionUri, host);
    }),
    vscode.commands.registerCommand('canopy.indexWorkspace', async () => {
      if (!session.folder) {
        void vscode.window.showWarningMessage('Canopy: open a folder first — there is nothing to index.');
        return;
      }
      try {
        const s = await session.index();
        if (!s) return;
        InspectorPanel.refresh();
        const errors = s.errors.length > 0 ? `, ${s.errors.length} with errors (see the Canopy log)` : '';
        void vscode.window.showInformationMessage(`Canopy: ${s.files} files indexed (${s.parsed} parsed, ${s.reused} unchanged)${errors}.`);
      } catch (err) {
        fail('indexing')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.ask', async (preset?: unknown) => {
      if (!session.folder) {
        void vscode.window.showWarningMessage('Canopy: open a folder first — there is nothing to ask about.');
        return;
      }
      const question =
        typeof preset === 'string' && preset.trim()
          ? preset.trim()
          : await vscode.window.showInputBox({ title: 'Canopy: Ask a Question', prompt: 'A question about the documents of this workspace', ignoreFocusOut: true });
      if (!question?.trim()) return;
      const panel = InspectorPanel.show(context.extensionUri, host);
      panel.busy(question.trim());
      try {
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Canopy: answering', cancellable: true },
          (_progress, token) =>
            session.ask(
              question.trim(),
              (trace) => {
                session.answered(trace);
                InspectorPanel.current?.showTrace(trace);
                agents.exportTrace(trace);
              },
              token,
            ),
        );
      } catch (err) {
        fail('answering')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.setLlmApiKey', async () => {
      const key = await vscode.window.showInputBox({ title: 'Canopy: LLM API key', prompt: 'Stored in VS Code SecretStorage, never in settings or traces. Leave empty to remove it.', password: true, ignoreFocusOut: true });
      if (key === undefined) return;
      if (key.trim()) await context.secrets.store(apiKeySecret, key.trim());
      else await context.secrets.delete(apiKeySecret);
      void vscode.window.showInformationMessage(key.trim() ? 'Canopy: API key stored.' : 'Canopy: API key removed.');
    }),
    questions,
    evidence,
    decorations,
    vscode.window.createTreeView('canopy.questions', { treeDataProvider: questions }),
    vscode.window.createTreeView('canopy.evidence', { treeDataProvider: evidence, showCollapseAll: true }),
    session.onDidChangeShownTrace(followShown),
    session.onDidChangeHistory(() => questions.refresh()),
    vscode.commands.registerCommand('canopy.refreshQuestions', () => questions.refresh()),
    goldView,
    vscode.window.createTreeView('canopy.gold', { treeDataProvider: goldView, showCollapseAll: true }),
    vscode.commands.registerCommand('canopy.markGold', async () => {
      await markSelectionAsGold({ folder: () => session.folder, currentQuestion: () => session.shownTrace?.question, log })();
      goldView.refresh();
    }),
    vscode.commands.registerCommand('canopy.openGold', (arg?: unknown) => gold.open(arg)),
    vscode.commands.registerCommand('canopy.unmarkGold', (arg?: unknown) => gold.unmark(arg)),
    vscode.commands.registerCommand('canopy.editGold', (arg?: unknown) => gold.edit(arg)),
    vscode.commands.registerCommand('canopy.refreshGold', () => goldView.refresh()),
    vscode.commands.registerCommand('canopy.trainAdapter', () => gold.train()),
    vscode.commands.registerCommand('canopy.selectAdapter', () => gold.selectCheckpoint()),
    vscode.commands.registerCommand('canopy.showTrainingReport', () => gold.showTrainingReport()),
    vscode.commands.registerCommand('canopy.openTrace', async (arg?: unknown) => {
      try {
        const trace = await savedTrace(arg);
        if (!trace) return;
        await session.loadExisting();
        session.show(trace);
        InspectorPanel.show(context.extensionUri, host).showTrace(trace);
      } catch (err) {
        fail('opening the trace')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.deleteTrace', async (arg?: unknown) => {
      const s = arg as SavedTraceSummary | undefined;
      if (!s?.name) return;
      const yes = 'Delete';
      const answer = await vscode.window.showWarningMessage(`Delete the saved answer to “${s.question}”?`, { modal: true }, yes);
      if (answer !== yes) return;
      try {
        await session.deleteTrace(s.name);
      } catch (err) {
        fail('deleting the trace')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.compareWithShown', async (arg?: unknown) => {
      try {
        const other = await savedTrace(arg);
        const base = session.shownTrace;
        if (!other) return;
        if (!base) {
          void vscode.window.showInformationMessage('Canopy: open an answer first, then compare another with it.');
          return;
        }
        InspectorPanel.show(context.extensionUri, host).compare(base, other);
      } catch (err) {
        fail('comparing traces')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.openRegion', async (arg?: unknown) => {
      const r = regionArg(arg);
      if (!r) return;
      InspectorPanel.current?.reveal(r.item.itemId, r.node.id);
      const uri = host.resolveIndexedFile(r.item.file);
      if (!uri || !r.range) return;
      const range = new vscode.Range(r.range.startLine, r.range.startColumn, r.range.endLine, r.range.endColumn);
      const editor = await vscode.window.showTextDocument(uri, { selection: range, viewColumn: vscode.ViewColumn.One, preserveFocus: true });
      editor.selection = new vscode.Selection(range.end, range.start);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }),
    vscode.commands.registerCommand('canopy.revealRegion', async (arg?: unknown) => {
      const r = regionArg(arg);
      if (!r) return;
      await session.loadExisting();
      InspectorPanel.show(context.extensionUri, host).reveal(r.item.itemId, r.node.id);
    }),
    vscode.commands.registerCommand('canopy.toggleDroppedRegions', () => {
      const on = !decorations.droppedShown;
      decorations.setShowDropped(on);
      evidence.setShowDropped(on);
      void vscode.window.showInformationMessage(on ? 'Canopy: dropped regions are shown.' : 'Canopy: only kept regions are shown.');
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsIndex(e)) void session.reset();
    }),
    vscode.window.registerWebviewPanelSerializer(inspectorViewType, {
      async deserializeWebviewPanel(panel) {
        await session.loadExisting();
        InspectorPanel.revive(panel, context.extensionUri, host);
      },
    }),
    { dispose: () => InspectorPanel.current?.dispose() },
  );
  session.watch();
  log.info('Canopy activated');
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
