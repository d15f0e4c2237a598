/**
 * The inspector webview's entry point: connects to the host, completes the ready handshake,
 * and renders what the host sends — placeholder views, progress, traces — through the
 * Inspector. The last placeholder view and the inspector's UI state are kept in the webview
 * state, so a reload paints at once and reopens the same tab, node and filters.
 */
import './styles.css';
import './elements';
import { PROTOCOL_VERSION, PlaceholderView } from '../src/protocol/messages';
import { connectToHost } from './host';
import { Inspector, type UiState } from './inspector';
import { renderError, renderIndexing, renderPlaceholder } from './render';

const root = document.getElementById('app');
if (!root) throw new Error('#app is missing from the inspector page');

interface SavedState {
  view?: unknown;
  ui?: UiState;
}

let lastView: PlaceholderView | undefined;

function isUiState(v: unknown): v is UiState {
  if (!v || typeof v !== 'object') return false;
  const u = v as Record<string, unknown>;
  return typeof u.traceId === 'string' && typeof u.tab === 'string' && typeof u.filters === 'object' && u.filters !== null;
}

const host = connectToHost(
  (message) => {
    switch (message.method) {
      case 'host/hello':
      case 'inspector/showView':
        inspector.placeholder(message.params.view);
        lastView = message.params.view;
        renderPlaceholder(root, message.params.view);
        host.setState({ view: message.params.view });
        return;
      case 'inspector/busy':
        inspector.busy(message.params.question);
        return;
      case 'inspector/showTrace': {
        // A performance entry for the benchmark: the render itself, apart from message delivery.
        const start = performance.now();
        inspector.showTrace(message.params.trace);
        performance.measure('canopy:render', { start });
        return;
      }
      case 'inspector/reveal':
        if (!inspector.reveal(message.params.nodeId)) renderError(root, `That region is not part of the answer shown here.`);
        return;
      case 'inspector/compare':
        inspector.showTrace(message.params.base);
        inspector.compareWith(message.params.other);
        return;
      case 'inspector/showTraining':
        inspector.showTraining(message.params.report);
        return;
      case 'inspector/indexing':
        renderIndexing(root, message.params);
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

const saved = (host.getState() ?? {}) as SavedState;
const savedView = PlaceholderView.safeParse(saved.view);
if (savedView.success) lastView = savedView.data;

const inspector = new Inspector(
  root,
  {
    client: host.client,
    save: (ui) => host.setState(lastView ? { view: lastView, ...(ui ? { ui } : {}) } : ui ? { ui } : {}),
  },
  isUiState(saved.ui) ? saved.ui : undefined,
);

if (lastView) renderPlaceholder(root, lastView);

host.client.notify('webview/ready', { protocolVersion: PROTOCOL_VERSION });
