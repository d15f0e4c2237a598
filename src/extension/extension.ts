/**
 * The extension's entry point: wires the core to VS Code. Everything registered here is pushed
 * into context.subscriptions; per-window state lives in one CanopySession.
 */
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import type { PlaceholderView } from '../protocol/messages';
import { affectsIndex } from './config';
import { type InspectorHost, InspectorPanel, inspectorViewType } from './inspectorPanel';
import { apiKeySecret } from './llmConfig';
import { CanopySession } from './session';

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Canopy', { log: true });
  const session = new CanopySession(context, log);

  const view = (): PlaceholderView => {
    const base = { title: 'Canopy Evidence Inspector' };
    if (!session.corpus) return { ...base, message: 'The workspace has not been indexed yet. Run “Canopy: Index Workspace”, or ask a question to index it first.' };
    return { ...base, message: 'No question asked yet. Run “Canopy: Ask a Question”: the answer and the evidence kept or dropped for it appear here.', corpus: session.corpus };
  };
  const host: InspectorHost = {
    currentView: view,
    currentTrace: () => session.lastTrace,
    resolveIndexedFile: (rel) => (session.folder && session.hasIndexedFile(rel) ? vscode.Uri.joinPath(session.folder.uri, rel) : undefined),
    log,
  };
  const fail = (what: string) => (err: unknown) => {
    const { code, message } = describeError(err);
    log.error(`${what} failed: ${message} (${code})`);
    void vscode.window.showErrorMessage(`Canopy: ${what} failed — ${message}`);
  };

  context.subscriptions.push(
    log,
    session,
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
          (_progress, token) => session.ask(question.trim(), (trace) => InspectorPanel.current?.showTrace(trace), token),
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
