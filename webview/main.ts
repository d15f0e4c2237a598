/**
 * The inspector webview's entry point: connects to the host, completes the ready handshake,
 * and renders what the host sends. The last view is kept in the webview state so a reload
 * paints it at once, before the host answers.
 */
import './styles.css';
import { PROTOCOL_VERSION } from '../src/protocol/messages';
import { isPlaceholderView } from '../src/protocol/validate';
import { connectToHost } from './host';
import { renderError, renderPlaceholder } from './render';
import { renderBusy, renderTrace } from './traceView';
import type { TraceCitation } from '../src/core/trace/schema';

const root = document.getElementById('app');
if (!root) throw new Error('#app is missing from the inspector page');

const host = connectToHost(
  (message) => {
    switch (message.method) {
      case 'host/hello':
      case 'inspector/showView':
        renderPlaceholder(root, message.params.view);
        host.setState({ view: message.params.view });
        return;
      case 'inspector/busy':
        renderBusy(root, message.params.question);
        return;
      case 'inspector/showTrace':
        renderTrace(root, message.params.trace, openCitation);
        return;
      default: {
        const unreachable: never = message;
        renderError(root, `Unknown message from Canopy: ${JSON.stringify(unreachable)}`);
      }
    }
  },
  (problem) => {
    renderError(root, `Canopy sent a message this view does not understand: ${problem}`);
    host.client.notify('webview/error', { message: `rejected host message: ${problem}` });
  },
);

function openCitation(c: TraceCitation): void {
  const a = c.anchor;
  host.client
    .request('source/open', {
      file: c.file,
      ...(a.startLine !== undefined ? { startLine: a.startLine, startColumn: a.startColumn ?? 0 } : {}),
      ...(a.endLine !== undefined ? { endLine: a.endLine, endColumn: a.endColumn ?? 0 } : {}),
    })
    .catch((err: Error) => renderError(root!, `Could not open ${c.file}: ${err.message}`));
}

const saved = host.getState() as { view?: unknown } | undefined;
if (saved && isPlaceholderView(saved.view)) renderPlaceholder(root, saved.view);

host.client.notify('webview/ready', { protocolVersion: PROTOCOL_VERSION });
