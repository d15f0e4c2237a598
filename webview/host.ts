/**
 * The webview's only way to reach the extension host: wraps acquireVsCodeApi() in the typed
 * protocol client. Tests provide their own acquireVsCodeApi before the bundle loads.
 */
import type { HostToWebviewMessage, WebviewToHostMessage } from '../src/protocol/messages';
import { type WebviewNotificationHandler, WebviewClient } from '../src/protocol/rpc';

interface VsCodeApi {
  postMessage(message: WebviewToHostMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export interface Host {
  client: WebviewClient;
  getState(): unknown;
  setState(state: unknown): void;
}

export function connectToHost(onNotification: WebviewNotificationHandler, onRejected: (message: string) => void): Host {
  const api = acquireVsCodeApi();
  const client = new WebviewClient((message) => api.postMessage(message), onNotification);
  window.addEventListener('message', (event: MessageEvent<HostToWebviewMessage>) => {
    // Performance entries for the benchmark: receiving (structured-clone read) and validating.
    const start = performance.now();
    const data = event.data;
    performance.measure('canopy:receive', { start });
    const rejected = client.receive(data);
    if (rejected) onRejected(rejected.message);
  });
  return { client, getState: () => api.getState(), setState: (s) => api.setState(s) };
}
