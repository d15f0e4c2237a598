/**
 * What the inspector's views share: the model of the shown trace and the few actions that cross
 * views (select a node in the evidence tree, open a source range, show a PDF page, switch tab,
 * talk to the host). Views get this object from the Inspector and never reach each other.
 */
import type { Anchor } from '../src/contracts/region';
import type { HostRequestMap, HostRequestMethod } from '../src/protocol/messages';
import type { TraceModel } from './model';

export type TabId = 'evidence' | 'rounds' | 'graph' | 'topics' | 'pdf' | 'compare' | 'replay';

export const tabs: ReadonlyArray<{ id: TabId; label: string }> = [
  { id: 'evidence', label: 'Evidence' },
  { id: 'rounds', label: 'Rounds' },
  { id: 'graph', label: 'Graph' },
  { id: 'topics', label: 'Topics' },
  { id: 'pdf', label: 'PDF' },
  { id: 'compare', label: 'Compare' },
  { id: 'replay', label: 'Replay' },
];

/** Filters of the evidence tree, kept in the webview state. */
export interface TreeFilters {
  kept: boolean;
  dropped: boolean;
  other: boolean;
  /** '' = every modality. */
  modality: string;
  search: string;
}

export const defaultFilters: TreeFilters = { kept: true, dropped: true, other: true, modality: '', search: '' };

export interface InspectorContext {
  model: TraceModel;
  /** Shows the node in the evidence tree (switching tab), selects it and shows its details. */
  selectNode(nodeId: string, options?: { openSource?: boolean; preserveFocus?: boolean }): void;
  /** Opens a text anchor in the editor; PDF anchors show the PDF view instead. */
  openAnchor(anchor: Anchor, options?: { preserveFocus?: boolean }): void;
  showPdf(file: string, page: number, nodeId?: string): void;
  showTab(tab: TabId): void;
  /** Shows the Graph tab filtered to the MAGE controller's elements and steps for a region. */
  showControllerSteps(nodeId: string): void;
  request<M extends HostRequestMethod>(method: M, params: HostRequestMap[M]['params']): Promise<HostRequestMap[M]['result']>;
  /** Shows a non-fatal problem in the page (role=alert). */
  error(message: string): void;
  /** Persists UI state (tab, selection, filters) in the webview state. */
  saveUi(): void;
}
