/**
 * The Evidence Inspector webview panel: at most one per window, created on demand and restored
 * after a reload through the serializer. It only carries messages: requests from the webview go
 * to views/inspectorRequests.ts (which honours file requests only for files of the current
 * index), notifications go to the InspectorController, and the controller's notifications are
 * posted to the webview. What the panel shows lives in the controller, not here.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { HostEndpoint } from '../protocol/rpc';
import type { InspectorController } from './inspectorController';
import { makeNonce, renderInspectorHtml } from './inspectorHtml';
import { inspectorRequestHandlers, type InspectorRequestHost } from './views/inspectorRequests';

export const inspectorViewType = 'canopy.inspector';

/** What the panel needs beyond the controller: the request handlers' host, minus the editor actions it supplies itself. */
export type InspectorPanelHost = Omit<InspectorRequestHost, 'openSource' | 'readFile' | 'isIndexedFile'> & {
  /** Absolute location of an indexed file, or undefined when the file is not in the index. */
  resolveIndexedFile(relPath: string): vscode.Uri | undefined;
};

/** The window's inspector panel, if open: created by `show`, re-attached by `revive`. */
export class InspectorPanels implements vscode.Disposable {
  private panel: InspectorPanel | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: InspectorController,
    private readonly host: InspectorPanelHost,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Whether a panel is open. */
  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /**
   * The editor column a source opens in: the first one, unless the panel sits there — then the
   * second, so that opening a citation or a region never hides (and so unloads) the inspector.
   */
  get sourceColumn(): vscode.ViewColumn {
    return sourceColumnBeside(this.panel?.viewColumn);
  }

  /** Shows the panel, creating it when there is none. */
  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const webviewPanel = vscode.window.createWebviewPanel(inspectorViewType, 'Canopy Evidence Inspector', vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')],
    });
    this.open(webviewPanel);
  }

  /** Re-attaches a panel VS Code restored after a reload. */
  revive(webviewPanel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    webviewPanel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')] };
    this.open(webviewPanel);
  }

  private open(webviewPanel: vscode.WebviewPanel): void {
    const panel = new InspectorPanel(webviewPanel, this.extensionUri, this.controller, this.host, this.log, () => {
      if (this.panel === panel) this.panel = undefined;
    });
    this.panel = panel;
  }

  dispose(): void {
    this.panel?.dispose();
    this.panel = undefined;
  }
}

/** The first editor column, or the second when the inspector is in the first. */
export function sourceColumnBeside(panelColumn: vscode.ViewColumn | undefined): vscode.ViewColumn {
  return panelColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
}

class InspectorPanel implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private disposed = false;

  constructor(
    private readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    controller: InspectorController,
    host: InspectorPanelHost,
    log: vscode.LogOutputChannel,
    private readonly onDisposed: () => void,
  ) {
    const webview = panel.webview;
    const resolve = (rel: string): vscode.Uri => {
      const uri = host.resolveIndexedFile(rel);
      if (!uri) throw new Error(`${rel} is not in the index`);
      return uri;
    };
    const endpoint = new HostEndpoint(
      (message) => void webview.postMessage(message),
      inspectorRequestHandlers({
        ...host,
        isIndexedFile: (rel) => host.resolveIndexedFile(rel) !== undefined,
        openSource: async (rel, r, preserveFocus) => {
          const start = new vscode.Position(Math.max(0, (r.startLine ?? 1) - 1), r.startColumn ?? 0);
          const end = new vscode.Position(Math.max(0, (r.endLine ?? r.startLine ?? 1) - 1), r.endColumn ?? r.startColumn ?? 0);
          const editor = await vscode.window.showTextDocument(resolve(rel), { selection: new vscode.Range(start, end), viewColumn: sourceColumnBeside(panel.viewColumn), preserveFocus });
          // The cursor at the region's start (a reversed selection; the option above loses the
          // direction), so a long region is shown and reported from its beginning.
          editor.selection = new vscode.Selection(end, start);
          editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        },
        readFile: (rel) => Promise.resolve(vscode.workspace.fs.readFile(resolve(rel))),
      }),
      (message) => controller.receive(message),
      (error) => log.warn(`rejected a message from the inspector webview: ${error.message}`),
    );
    const detach = controller.attach((message) => void webview.postMessage(message));

    webview.html = renderInspectorHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce((n) => randomBytes(n)),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.css')).toString(),
    });
    this.disposables.push(
      { dispose: detach },
      webview.onDidReceiveMessage((raw: unknown) => void endpoint.receive(raw)),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  reveal(): void {
    this.panel.reveal();
  }

  get viewColumn(): vscode.ViewColumn | undefined {
    return this.panel.viewColumn;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.onDisposed();
    this.panel.dispose();
    while (this.disposables.length > 0) this.disposables.pop()?.dispose();
  }
}
