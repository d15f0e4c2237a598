/**
 * The Evidence Inspector webview panel. One panel per window; it is created on demand,
 * restored after a reload through the serializer, and talks to the webview only through the
 * typed protocol (HostEndpoint). Requests are answered by views/inspectorRequests.ts, which
 * honours file requests only for files of the current index.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ReplaySettings } from '../core/engine/replay';
import type { AskTrace } from '../contracts/trace';
import { PROTOCOL_VERSION, type PlaceholderView, type TraceSummary, type TrainingReport } from '../protocol/messages';
import { HostEndpoint } from '../protocol/rpc';
import { makeNonce, renderInspectorHtml } from './inspectorHtml';
import { inspectorRequestHandlers, type GoldMark } from './views/inspectorRequests';

export const inspectorViewType = 'canopy.inspector';

/** What the panel needs from the rest of the extension. */
export interface InspectorHost {
  currentView(): PlaceholderView;
  /** The shown answer's trace, repainted when the webview (re)connects. */
  currentTrace(): AskTrace | undefined;
  /** Absolute path of an indexed file, or undefined when the file is not in the index. */
  resolveIndexedFile(relPath: string): vscode.Uri | undefined;
  listTraces(): Promise<TraceSummary[]>;
  readTrace(name: string): Promise<AskTrace>;
  findTrace(id: string): Promise<AskTrace | undefined>;
  /** Replays, saves and shows the replay (the panel is told through showTrace's caller). */
  replay(trace: AskTrace, settings: ReplaySettings): Promise<AskTrace>;
  /** Stores a gold mark from the inspector (`gold/mark`). */
  markGold?(mark: GoldMark): Promise<{ annotationId: string; added: boolean }>;
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
    const resolve = (rel: string): vscode.Uri => {
      const uri = host.resolveIndexedFile(rel);
      if (!uri) throw new Error(`${rel} is not in the index`);
      return uri;
    };
    this.endpoint = new HostEndpoint(
      (message) => void webview.postMessage(message),
      inspectorRequestHandlers({
        currentView: () => host.currentView(),
        isIndexedFile: (rel) => host.resolveIndexedFile(rel) !== undefined,
        openSource: async (rel, r, preserveFocus) => {
          const start = new vscode.Position(Math.max(0, (r.startLine ?? 1) - 1), r.startColumn ?? 0);
          const end = new vscode.Position(Math.max(0, (r.endLine ?? r.startLine ?? 1) - 1), r.endColumn ?? r.startColumn ?? 0);
          const editor = await vscode.window.showTextDocument(resolve(rel), { selection: new vscode.Range(start, end), viewColumn: vscode.ViewColumn.One, preserveFocus });
          // The cursor at the region's start (a reversed selection; the option above loses the
          // direction), so a long region is shown and reported from its beginning.
          editor.selection = new vscode.Selection(end, start);
          editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        },
        readFile: (rel) => Promise.resolve(vscode.workspace.fs.readFile(resolve(rel))),
        listTraces: () => host.listTraces(),
        readTrace: (name) => host.readTrace(name),
        findTrace: (id) => host.findTrace(id),
        replay: async (trace, settings) => {
          const replayed = await host.replay(trace, settings);
          this.pendingBusy = undefined;
          return replayed;
        },
        ...(host.markGold ? { markGold: host.markGold } : {}),
      }),
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
            else if (this.pendingCompare) this.endpoint.notify('inspector/compare', this.pendingCompare);
            else {
              const trace = host.currentTrace();
              if (trace) this.endpoint.notify('inspector/showTrace', { trace });
              // The training report stays shown across reloads (the answer under it, for "Back").
              if (this.training) this.endpoint.notify('inspector/showTraining', { report: this.training });
              else if (trace && this.pendingReveal) this.endpoint.notify('inspector/reveal', this.pendingReveal);
            }
            this.pendingCompare = undefined;
            this.pendingReveal = undefined;
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
    this.training = undefined;
    if (this.ready) this.endpoint.notify('inspector/showView', { view: this.host.currentView() });
  }

  /** The training report shown (until an answer replaces it); re-sent after a webview reload. */
  private training: TrainingReport | undefined;

  /** Shows the node-adapter training report (after the handshake, if it is still loading). */
  showTraining(report: TrainingReport): void {
    this.training = report;
    this.pendingBusy = undefined;
    this.pendingCompare = undefined;
    if (this.ready) this.endpoint.notify('inspector/showTraining', { report });
  }

  /** Whether the training report is what the panel shows. */
  get showsTraining(): boolean {
    return this.training !== undefined;
  }

  /** Shows that a question is being answered (replacing any older answer). */
  busy(question: string): void {
    this.training = undefined;
    this.pendingBusy = question;
    if (this.ready) this.endpoint.notify('inspector/busy', { question });
  }

  showTrace(trace: AskTrace): void {
    this.training = undefined;
    this.pendingBusy = undefined;
    if (this.ready) this.endpoint.notify('inspector/showTrace', { trace });
    // Not ready yet: the handshake sends host.currentTrace().
  }

  private pendingReveal: { itemId: string; nodeId: string } | undefined;
  private pendingCompare: { base: AskTrace; other: AskTrace } | undefined;

  /** Selects a region of the shown trace in the webview (after the handshake, if it is still loading). */
  reveal(itemId: string, nodeId: string): void {
    if (this.training) {
      // The report replaced the answer in the webview: paint the answer again first.
      this.training = undefined;
      const trace = this.host.currentTrace();
      if (trace && this.ready) this.endpoint.notify('inspector/showTrace', { trace });
    }
    if (this.ready) this.endpoint.notify('inspector/reveal', { itemId, nodeId });
    else this.pendingReveal = { itemId, nodeId };
  }

  /** Shows `base` compared with `other`. */
  compare(base: AskTrace, other: AskTrace): void {
    this.training = undefined;
    this.pendingBusy = undefined;
    if (this.ready) this.endpoint.notify('inspector/compare', { base, other });
    else this.pendingCompare = { base, other };
  }

  /** Whether the webview has completed the handshake (notifications reach it). */
  get isReady(): boolean {
    return this.ready;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (InspectorPanel.current === this) InspectorPanel.current = undefined;
    this.panel.dispose();
    while (this.disposables.length > 0) this.disposables.pop()?.dispose();
  }
}
