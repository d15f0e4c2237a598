/**
 * The extension's entry point: wires the core to VS Code. Everything registered here is pushed
 * into context.subscriptions; no global singletons beyond what VS Code hands us.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import { discoverFiles, type Discovery } from '../core/ingest/discover';
import { type PlaceholderView } from '../protocol/messages';
import { readFilesExclude, readSettings } from './config';
import { type InspectorHost, InspectorPanel, inspectorViewType } from './inspectorPanel';

/** Per-window state: the corpus of the first workspace folder, as last indexed. */
class CorpusState {
  discovery: Discovery | undefined;

  view(): PlaceholderView {
    const base: PlaceholderView = {
      title: 'Canopy Evidence Inspector',
      message: this.discovery
        ? 'No question asked yet. Answers and the evidence kept or dropped for them will appear here.'
        : 'The workspace has not been indexed yet. Run “Canopy: Index Workspace”.',
    };
    if (!this.discovery) return base;
    const byFormat: Record<string, number> = {};
    for (const f of this.discovery.files) byFormat[f.format] = (byFormat[f.format] ?? 0) + 1;
    return { ...base, corpus: { files: this.discovery.files.length, byFormat, root: this.discovery.root } };
  }

  resolve(relPath: string): vscode.Uri | undefined {
    const hit = this.discovery?.files.find((f) => f.relPath === relPath);
    return hit ? vscode.Uri.file(hit.absPath) : undefined;
  }
}

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Canopy', { log: true });
  const corpus = new CorpusState();
  const host: InspectorHost = {
    currentView: () => corpus.view(),
    resolveIndexedFile: (rel) => corpus.resolve(rel),
    log,
  };

  context.subscriptions.push(
    log,
    vscode.commands.registerCommand('canopy.openInspector', () => {
      InspectorPanel.show(context.extensionUri, host);
    }),
    vscode.commands.registerCommand('canopy.indexWorkspace', () => indexWorkspace(corpus, log)),
    vscode.window.registerWebviewPanelSerializer(inspectorViewType, {
      async deserializeWebviewPanel(panel) {
        InspectorPanel.revive(panel, context.extensionUri, host);
      },
    }),
    { dispose: () => InspectorPanel.current?.dispose() },
  );
  log.info(`Canopy activated (${path.basename(context.extensionUri.fsPath)})`);
}

async function indexWorkspace(corpus: CorpusState, log: vscode.LogOutputChannel): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    void vscode.window.showWarningMessage('Canopy: open a folder first — there is nothing to index.');
    return;
  }
  const settings = readSettings(folder.uri);
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Canopy: indexing', cancellable: true },
      async (_progress, token) => {
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort());
        try {
          corpus.discovery = await discoverFiles(folder.uri.fsPath, {
            include: settings.include,
            exclude: [...settings.exclude, ...readFilesExclude(folder.uri)],
            maxFileSizeMB: settings.maxFileSizeMB,
            signal: abort.signal,
          });
        } finally {
          sub.dispose();
        }
      },
    );
    const d = corpus.discovery!;
    log.info(`indexed ${d.files.length} files under ${d.root}; ${d.skipped.length} skipped`);
    for (const s of d.skipped) log.warn(`skipped ${s.relPath}: ${s.reason}`);
    InspectorPanel.refresh();
    void vscode.window.showInformationMessage(`Canopy: ${d.files.length} files indexed, ${d.skipped.length} skipped.`);
  } catch (err) {
    const { code, message } = describeError(err);
    if (code === 'E_CANCELLED') return;
    log.error(`indexing failed: ${message} (${code})`);
    void vscode.window.showErrorMessage(`Canopy: indexing failed — ${message}`);
  }
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
