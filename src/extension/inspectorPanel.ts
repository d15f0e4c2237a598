/**
 * The Evidence Inspector webview panel. One panel per window; it is created on demand,
 * restored after a reload through the serializer, and talks to the webview only through the
 * typed protocol (HostEndpoint). Requests to open files are honoured only for files of the
 * current index.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { AskTrace } from '../core/trace/schema';
import { PROTOCOL_VERSION, type PlaceholderView } from '../protocol/messages';
import { HostEndpoint, ProtocolError } from '../protocol/rpc';
import { makeNonce, renderInspectorHtml } from './inspectorHtml';

export const inspectorViewType = 'canopy.inspector';

/** What the panel needs from the rest of the extension. */
export interface InspectorHost {
  currentView(): PlaceholderView;
  /** The last answer's trace, repainted when the webview (re)connects. */
  currentTrace(): AskTrace | undefined;
  /** Absolute path of an indexed file, or undefined when the file is not in the index. */
  resolveIndexedFile(relPath: string): vscode.Uri | undefined;
  log: vscode.LogOutputChannel;
}

export class InspectorPanel implements vscode.Disposable {
  static current: InspectorPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly endpoint: HostEndpoint;
  private ready = false;
  private disposed = false;

  /** Shows the panel, creating it when there is none. */
  static show(extensionUri: vscode.Uri, host: InspectorHost): InspectorPanel {
    if (InspectorPanel.current) {
      InspectorPanel.current.panel.reveal();
      return InspectorPanel.current;
    }
    const panel = vscode.window.createWebviewPanel(inspectorViewType, 'Canopy Evidence Inspector', vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')],
    });
    InspectorPanel.current = new InspectorPanel(panel, extensionUri, host);
    return InspectorPanel.current;
  }

  /** Re-attaches a panel VS Code restored after a reload. */
  static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, host: InspectorHost): void {
    InspectorPanel.current?.dispose();
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')] };
    InspectorPanel.current = new InspectorPanel(panel, extensionUri, host);
  }

  /** Pushes a new view to the open panel, if any. */
  static refresh(): void {
    InspectorPanel.current?.pushView();
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly host: InspectorHost,
  ) {
    const webview = panel.webview;
    this.endpoint = new HostEndpoint(
      (message) => void webview.postMessage(message),
      {
        'inspector/getView': async () => host.currentView(),
        'source/open': async (params) => {
          const uri = host.resolveIndexedFile(params.file);
          if (!uri) throw new ProtocolError('E_FORBIDDEN', `${params.file} is not a file of the Canopy index`);
          const start = new vscode.Position(Math.max(0, (params.startLine ?? 1) - 1), params.startColumn ?? 0);
          const end = new vscode.Position(Math.max(0, (params.endLine ?? params.startLine ?? 1) - 1), params.endColumn ?? params.startColumn ?? 0);
          await vscode.window.showTextDocument(uri, { selection: new vscode.Range(start, end), viewColumn: vscode.ViewColumn.One });
          return { opened: true };
        },
      },
      (message) => {
        switch (message.method) {
          case 'webview/ready':
            if (message.params.protocolVersion !== PROTOCOL_VERSION) {
              host.log.warn(`inspector webview speaks protocol ${message.params.protocolVersion}, host ${PROTOCOL_VERSION}`);
            }
            this.ready = true;
            this.endpoint.notify('host/hello', { protocolVersion: PROTOCOL_VERSION, view: host.currentView() });
            host.log.info(`inspector handshake complete (protocol ${PROTOCOL_VERSION})`);
            if (this.pendingBusy) this.endpoint.notify('inspector/busy', { question: this.pendingBusy });
            else {
              const trace = host.currentTrace();
              if (trace) this.endpoint.notify('inspector/showTrace', { trace });
            }
            return;
          case 'webview/error':
            host.log.error(`inspector webview: ${message.params.message}`);
            return;
          default: {
            const unreachable: never = message;
            host.log.error(`unhandled webview notification ${JSON.stringify(unreachable)}`);
          }
        }
      },
      (error) => host.log.warn(`rejected a message from the inspector webview: ${error.message}`),
    );

    webview.html = renderInspectorHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce((n) => randomBytes(n)),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.css')).toString(),
    });
    this.disposables.push(
      webview.onDidReceiveMessage((raw: unknown) => void this.endpoint.receive(raw)),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  private pendingBusy: string | undefined;

  private pushView(): void {
    if (this.ready) this.endpoint.notify('inspector/showView', { view: this.host.currentView() });
  }

  /** Shows that a question is being answered (replacing any older answer). */
  busy(question: string): void {
    this.pendingBusy = question;
    if (this.ready) this.endpoint.notify('inspector/busy', { question });
  }

  showTrace(trace: AskTrace): void {
    this.pendingBusy = undefined;
    if (this.ready) this.endpoint.notify('inspector/showTrace', { trace });
    // Not ready yet: the handshake sends host.currentTrace().
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (InspectorPanel.current === this) InspectorPanel.current = undefined;
    this.panel.dispose();
    while (this.disposables.length > 0) this.disposables.pop()?.dispose();
  }
}
