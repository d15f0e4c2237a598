/**
 * The extension's entry point: wires the core services and VS Code with constructors (no
 * service locator, no singletons). Everything registered is pushed into context.subscriptions.
 * Settings are read afresh on every request, so a changed `canopy.*` setting applies to the next
 * question or index run without a reload.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AgentOperations } from '../core/agent/operations';
import { AdapterCheckpoints } from '../core/app/adapters';
import { AskService } from '../core/app/askService';
import { Embeddings } from '../core/app/embeddings';
import { IndexService } from '../core/app/indexService';
import { IndexStores } from '../core/app/indexStores';
import { ParseWorkers } from '../core/app/parseWorkers';
import { TraceStore } from '../core/app/traceStore';
import type { TraceSummary } from '../contracts/savedTrace';
import { TrainingService } from '../core/app/trainingService';
import type { CanopySettings } from '../core/config/settings';
import { userAdapterCheckpoint, userStore } from '../core/config/trust';
import { describeError } from '../core/errors';
import type { Logger } from '../core/ports';
import type { PlaceholderView } from '../protocol/messages';
import type { AskTrace } from '../contracts/trace';
import { registerAgentIntegrations } from './agentIntegrations';
import { markSelectionAsGold } from './annotations';
import { encoderFromSettings, readSettings } from './config';
import { EvidenceDecorations } from './decorations';
import { goldCommands } from './goldCommands';
import { InspectorController } from './inspectorController';
import { InspectorPanels, inspectorViewType } from './inspectorPanel';
import { apiKeySecret, chooseLlm } from './llmConfig';
import { Questions } from './questions';
import { CanopySession } from './session';
import { findRegion } from './views/evidenceRegions';
import { EvidenceProvider } from './views/evidenceView';
import { GoldProvider } from './views/goldView';
import { QuestionsProvider } from './views/questionsView';
import { answerBeforeTraining } from './trainedCompare';

/** The core's Logger over the Canopy output channel. */
function channelLogger(log: vscode.LogOutputChannel): Logger {
  return { log: (level, message) => log[level === 'trace' || level === 'debug' ? 'debug' : level](message) };
}

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Canopy', { log: true });
  const logger = channelLogger(log);
  const folder = vscode.workspace.workspaceFolders?.[0];
  const settings = () => readSettings(folder?.uri);
  const storage = (context.storageUri ?? context.globalStorageUri).fsPath;
  // The index lives in workspace storage, never inside the user's folder.
  const indexDir = path.join(storage, 'index');
  const root = folder?.uri.fsPath ?? storage;

  // ---- the core services ----
  // The index store for canopy.store (after Workspace Trust: an untrusted folder's settings cannot
  // send its documents to a database server): the local store in indexDir, or Postgres.
  const stores = new IndexStores(indexDir);
  let storeNote: string | undefined;
  let storeShown: string | undefined;
  const storeFor = (s: CanopySettings) => {
    const { value, note } = userStore(s.store, vscode.workspace.isTrusted);
    if (note && note !== storeNote) log.warn(note);
    storeNote = note;
    const store = stores.get(value);
    const shown = `${store.kind} ${store.location}`;
    if (shown !== storeShown) log.info(`index store: ${shown}`);
    storeShown = shown;
    return store;
  };
  let encoderNote: string | undefined;
  const embeddings = new Embeddings({
    // Read on every use, like the encoder: the node-vector cache is the current store's.
    store: () => storeFor(settings()),
    // Read on every use: a changed canopy.encoder.modelFolder (or trust) switches the encoder on the next request.
    encoder: () => {
      const { config, note } = encoderFromSettings(settings(), vscode.workspace.isTrusted);
      if (note && note !== encoderNote) log.warn(note);
      encoderNote = note;
      return config;
    },
    builtinModelDir: vscode.Uri.joinPath(context.extensionUri, 'models', 'use-lite').fsPath,
    baseDir: root,
    logger,
  });
  const parseWorkers = new ParseWorkers(logger);
  const index = new IndexService({ root, indexDir, embeddings, parseWorkers, storeFor, logger });
  const traces = new TraceStore(path.join(indexDir, 'traces'), logger);
  const asker = new AskService({ index, embeddings, adapters: new AdapterCheckpoints(root), logger });
  const training = new TrainingService({ root, embeddings, parseWorkers, index, logger });

  // ---- the window's state ----
  const session = new CanopySession({ folder, settings, index, traces, asker, training, adapterDir: path.join(storage, 'adapters'), log });
  const questions = new Questions(asker, traces, {
    settings,
    chooseLlm: (s) => chooseLlm(s, context.secrets, log),
    adapterCheckpoint: (s) => userAdapterCheckpoint(s.adapterCheckpoint, vscode.workspace.isTrusted),
    ensureIndex: () => session.ensureIndex(),
    logger,
  });
  // What language-model tools, @canopy and (through them) agents ask: the same services and trust
  // rules as the Ask command, but never cancelling it or taking over the inspector.
  const agent = new AgentOperations({
    asker,
    traces,
    settings,
    ensureIndex: () => session.ensureIndex(),
    adapterCheckpoint: (s) => userAdapterCheckpoint(s.adapterCheckpoint, vscode.workspace.isTrusted),
    logger,
  });
  const view = (): PlaceholderView => {
    const base = { title: 'Canopy Evidence Inspector' };
    if (session.isIndexing && !session.corpus) return { ...base, message: 'Indexing the workspace: its progress shows above. Questions asked meanwhile are answered when it is done.' };
    if (!session.corpus) return { ...base, message: 'The workspace has not been indexed yet. Run “Canopy: Index Workspace”, or ask a question to index it first.' };
    return { ...base, message: 'No question asked yet. Run “Canopy: Ask a Question”: the answer and the evidence kept or dropped for it appear here.', corpus: session.corpus };
  };
  const inspector = new InspectorController({ view, logger });
  /** The last answer of this window, also when the inspector has moved on (replays refer to it). */
  let lastAnswer: AskTrace | undefined;
  const resolveIndexedFile = (rel: string) => (folder && session.hasIndexedFile(rel) ? vscode.Uri.joinPath(folder.uri, rel) : undefined);
  const panels = new InspectorPanels(
    context.extensionUri,
    inspector,
    {
      currentView: view,
      resolveIndexedFile,
      listTraces: () => session.listTraces(),
      readTrace: (name) => session.readTrace(name),
      findTrace: async (id) => [inspector.answer, lastAnswer].find((t) => t?.id === id) ?? session.findSavedTrace(id),
      replay: async (trace, replaySettings) => {
        const replayed = await session.replay(trace, replaySettings);
        inspector.replayed(replayed);
        return replayed;
      },
      markGold: (mark) => gold.markFromInspector(mark),
    },
    log,
  );
  const showInspector = async () => {
    await session.loadExisting();
    panels.show();
  };

  // Native views and decorations follow the answer the inspector stands on.
  const questionsView = new QuestionsProvider(() => session.listTraces(), log);
  const goldView = new GoldProvider(() => session.folder, log);
  const gold = goldCommands({
    session,
    log,
    refresh: () => goldView.refresh(),
    showTraining: async (report) => {
      await showInspector();
      inspector.showTraining(report);
    },
    trainingShown: () => panels.isOpen && inspector.showsTraining,
  });
  const evidence = new EvidenceProvider();
  const decorations = new EvidenceDecorations(() => session.folder, log);
  const followAnswer = (trace: AskTrace | undefined) => {
    evidence.setTrace(trace);
    decorations.setTrace(trace);
  };

  // The session and the questions report what happened; the inspector and the views follow.
  const unsubscribes = [
    inspector.onDidChangeAnswer(followAnswer),
    // Index runs show their progress in the inspector (files, pages), and their end repaints its placeholder.
    ((sub) => () => sub.dispose())(session.onDidIndexProgress((p) => inspector.indexProgress(p))),
    questions.onEvent((e) => {
      inspector.onQuestion(e);
      if (e.type !== 'answered') return;
      lastAnswer = e.trace;
      session.historyChanged();
      // Asked again after training changed what compresses it: show what changed (issue 36).
      const answered = e.trace;
      void session
        .listTraces()
        .then((saved) => answerBeforeTraining(answered, saved, (name) => session.readTrace(name)))
        .then((before) => {
          if (before && inspector.answer?.id === answered.id) inspector.compare(before, answered);
        })
        .catch((err: unknown) => log.warn(`comparing with the answer before training failed: ${describeError(err).message}`));
      for (const w of e.warnings) {
        if (w.source === 'adapter') void vscode.window.showWarningMessage(`Canopy: the adapter checkpoint is not used — ${w.message}`);
        else if (w.source === 'retrieval' || w.source === 'reader') void vscode.window.showWarningMessage(`Canopy: ${w.message}`);
      }
    }),
  ];

  /** A saved trace named by a Questions item (or its file name). */
  const savedTrace = async (arg: unknown): Promise<AskTrace | undefined> => {
    const name = typeof arg === 'string' ? arg : (arg as TraceSummary | undefined)?.name;
    if (!name) return undefined;
    return session.readTrace(name);
  };
  /** The region a command names ({itemId, nodeId}) in the shown answer. */
  const regionArg = (arg: unknown) => {
    const a = arg as { itemId?: unknown; nodeId?: unknown } | undefined;
    const trace = inspector.answer;
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
    panels,
    { dispose: () => unsubscribes.forEach((u) => u()) },
    {
      dispose: () => {
        questions.cancel();
        void parseWorkers.close();
        void embeddings.dispose().finally(() => stores.close());
      },
    },
    // Language-model tools, @canopy, the MCP server definition, trace links and the trace export.
    ...registerAgentIntegrations(context, { agent, questions, session, settings, indexDir, log }),
    vscode.commands.registerCommand('canopy.openInspector', showInspector),
    vscode.commands.registerCommand('canopy.indexWorkspace', async () => {
      if (!session.folder) {
        void vscode.window.showWarningMessage('Canopy: open a folder first — there is nothing to index.');
        return;
      }
      try {
        const s = await session.index();
        if (!s) return;
        inspector.viewChanged();
        const stale = s.stale.length > 0 ? `; ${s.stale.length} no longer parse${s.stale.length === 1 ? 's' : ''} and ${s.stale.length === 1 ? 'its' : 'their'} last good version is served` : '';
        const errors = s.errors.length > 0 ? `, ${s.errors.length} with errors (see the Canopy log)${stale}` : '';
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
      panels.show();
      try {
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Canopy: answering', cancellable: true }, async (_progress, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          try {
            await questions.ask(question.trim(), abort.signal);
          } finally {
            sub.dispose();
          }
        });
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
    questionsView,
    evidence,
    decorations,
    vscode.window.createTreeView('canopy.questions', { treeDataProvider: questionsView }),
    vscode.window.createTreeView('canopy.evidence', { treeDataProvider: evidence, showCollapseAll: true }),
    session.onDidChangeHistory(() => questionsView.refresh()),
    session.onDidDeleteTrace((trace) => {
      inspector.traceDeleted(trace.id);
      if (lastAnswer?.id === trace.id) lastAnswer = undefined;
    }),
    vscode.commands.registerCommand('canopy.refreshQuestions', () => questionsView.refresh()),
    goldView,
    vscode.window.createTreeView('canopy.gold', { treeDataProvider: goldView, showCollapseAll: true }),
    vscode.commands.registerCommand('canopy.markGold', async () => {
      await markSelectionAsGold({ folder: () => session.folder, currentQuestion: () => inspector.answer?.question, log })();
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
        await showInspector();
        inspector.showTrace(trace);
      } catch (err) {
        fail('opening the trace')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.deleteTrace', async (arg?: unknown) => {
      const s = arg as TraceSummary | undefined;
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
        const base = inspector.answer;
        if (!other) return;
        if (!base) {
          void vscode.window.showInformationMessage('Canopy: open an answer first, then compare another with it.');
          return;
        }
        panels.show();
        inspector.compare(base, other);
      } catch (err) {
        fail('comparing traces')(err);
      }
    }),
    vscode.commands.registerCommand('canopy.openRegion', async (arg?: unknown) => {
      const r = regionArg(arg);
      if (!r) return;
      if (panels.isOpen) inspector.reveal(r.item.itemId, r.node.id);
      const uri = resolveIndexedFile(r.item.file);
      if (!uri || !r.range) return;
      const range = new vscode.Range(r.range.startLine, r.range.startColumn, r.range.endLine, r.range.endColumn);
      const editor = await vscode.window.showTextDocument(uri, { selection: range, viewColumn: panels.sourceColumn, preserveFocus: true });
      editor.selection = new vscode.Selection(range.end, range.start);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }),
    vscode.commands.registerCommand('canopy.revealRegion', async (arg?: unknown) => {
      const r = regionArg(arg);
      if (!r) return;
      await showInspector();
      inspector.reveal(r.item.itemId, r.node.id);
    }),
    vscode.commands.registerCommand('canopy.toggleDroppedRegions', () => {
      const on = !decorations.droppedShown;
      decorations.setShowDropped(on);
      evidence.setShowDropped(on);
      void vscode.window.showInformationMessage(on ? 'Canopy: dropped regions are shown.' : 'Canopy: only kept regions are shown.');
    }),
    vscode.window.registerWebviewPanelSerializer(inspectorViewType, {
      async deserializeWebviewPanel(panel) {
        await session.loadExisting();
        panels.revive(panel);
      },
    }),
  );
  session.watch();
  log.info('Canopy activated');
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
