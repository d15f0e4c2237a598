/**
 * The Evidence Inspector for one shown trace: the question, the answer with its mode and
 * citation chips, token totals, and tabs for the evidence hierarchy, the round timeline, the
 * controller graph, the topic compass, the PDF view, compare and replay. Tabs other than the
 * first are built when first opened, so a big trace paints its first view at once. UI state
 * (tab, selected node, filters) is kept in the webview state and restored for the same trace.
 */
import type { Anchor } from '../src/contracts/region';
import type { AskTrace, TraceCitation } from '../src/contracts/trace';
import type { PlaceholderView, TrainingReport } from '../src/protocol/messages';
import type { WebviewClient } from '../src/protocol/rpc';
import { type InspectorContext, type TabId, type TreeFilters, defaultFilters, tabs } from './context';
import { button, ce, el, fmtInt } from './dom';
import { TraceModel, placeLabel } from './model';
import { plainText } from './text';
import { stopReasonText } from './views/critic';
import { renderJudgment } from './views/judgment';
import { renderError } from './render';
import { CompareView } from './views/compare';
import { EvidenceTreeView } from './views/evidenceTree';
import { GraphView } from './views/graph';
import { PdfView } from './views/pdf';
import { renderReplay } from './views/replay';
import { renderRounds } from './views/rounds';
import { renderTopics } from './views/topics';
import { renderTraining } from './views/training';

export interface UiState {
  traceId: string;
  tab: TabId;
  nodeId?: string;
  filters: TreeFilters;
}

export interface InspectorHostApi {
  client: WebviewClient;
  /** Saves the webview state: the last placeholder view and the inspector's UI state. */
  save(ui: UiState | undefined): void;
}

export function citationLabel(c: TraceCitation): string {
  return placeLabel(c.anchor);
}

function settingsLine(t: AskTrace): string {
  const s = t.settings;
  const c = s.compressor;
  const gates = c.name === 'canopy' ? [c.itemGate !== undefined ? `item gate ${c.itemGate}` : '', c.items !== undefined ? `rank gate ${c.items}${c.minItems !== undefined ? `, at least ${c.minItems} items` : ''}${c.wholeBelow !== undefined ? `, whole ≤ ${c.wholeBelow} chars` : ''}${c.glimpse ? `, glimpse ${c.glimpse} leaf${c.glimpse === 1 ? '' : 'ves'} of dropped items` : ''}` : ''].filter((x) => x) : [];
  const comp = c.name === 'flat' ? `flat m=${c.m}` : c.name === 'threshold' ? `threshold ${c.threshold}` : gates.length > 0 ? `canopy, ${gates.join(', ')}` : c.name;
  return `k=${s.topK} · B=${s.branchingFactor} · rounds ≤ ${s.maxRounds} · compressor ${comp} · critic ${s.critic}`;
}

export class Inspector {
  private model: TraceModel | undefined;
  private evidence: EvidenceTreeView | undefined;
  private pdf: PdfView | undefined;
  private compare: CompareView | undefined;
  private graph: GraphView | undefined;
  private tabsEl: (HTMLElement & { selectedIndex: number }) | undefined;
  private readonly panels = new Map<TabId, HTMLElement>();
  private readonly built = new Set<TabId>();
  private ui: UiState | undefined;
  /** The trace shown before this one (a replay's original), for "compare with the original". */
  private previous: AskTrace | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: InspectorHostApi,
    private saved: UiState | undefined,
  ) {}

  get trace(): AskTrace | undefined {
    return this.model?.trace;
  }

  /** Leaves the trace view (a placeholder or a busy view replaces it). */
  clear(): void {
    this.evidence?.dispose();
    this.model = undefined;
    this.evidence = undefined;
    this.pdf = undefined;
    this.compare = undefined;
    this.graph = undefined;
    this.panels.clear();
    this.built.clear();
  }

  busy(question: string): void {
    this.clear();
    this.lastTrace = undefined;
    const header = el('header', { class: 'canopy-header' }, el('h1', {}, question));
    this.root.replaceChildren(
      header,
      el('div', { class: 'canopy-busy' }, ce('vscode-progress-ring', { 'aria-label': 'Answering' }), el('p', { class: 'canopy-status', role: 'status' }, 'Answering…')),
    );
    this.root.dataset.state = 'busy';
  }

  /** The trace shown last, for "Back to the answer" from the Training view. */
  private lastTrace: AskTrace | undefined;

  /**
   * Shows the node-adapter training report in place of the answer; a button returns to the
   * answer shown before, if there was one.
   */
  showTraining(report: TrainingReport): void {
    const trace = this.model?.trace ?? this.lastTrace;
    // Back to the answer reopens the same tab, node and filters.
    if (this.ui) this.saved = { ...this.ui, filters: { ...(this.evidence?.filters ?? this.ui.filters) }, ...(this.evidence?.selected ? { nodeId: this.evidence.selected } : {}) };
    this.clear();
    this.lastTrace = trace;
    const back = trace ? button('‹ Back to the answer', () => this.showTrace(trace), { class: 'canopy-link canopy-training-back' }) : undefined;
    this.root.replaceChildren(...renderTraining(report, back));
    this.root.dataset.state = 'training';
    delete this.root.dataset.tab;
    delete this.root.dataset.traceId;
  }

  showTrace(trace: AskTrace, options: { previous?: AskTrace } = {}): void {
    this.clear();
    this.lastTrace = trace;
    this.previous = options.previous;
    const model = new TraceModel(trace);
    this.model = model;
    const restore = this.saved && this.saved.traceId === trace.id ? this.saved : undefined;
    this.ui = { traceId: trace.id, tab: restore?.tab ?? 'evidence', filters: { ...defaultFilters, ...(restore?.filters ?? {}) }, ...(restore?.nodeId ? { nodeId: restore.nodeId } : {}) };
    this.saved = undefined;

    const ctx: InspectorContext = {
      model,
      selectNode: (nodeId, opts = {}) => {
        this.showTab('evidence');
        this.evidence?.reveal(nodeId, !opts.preserveFocus);
        const ref = model.ref(nodeId);
        if (opts.openSource && ref) this.openAnchor(ref.node.anchor, opts.preserveFocus ?? false);
      },
      openAnchor: (anchor, opts = {}) => this.openAnchor(anchor, opts.preserveFocus ?? false),
      showPdf: (file, page, nodeId) => {
        this.showTab('pdf');
        this.pdf?.show(file, page, nodeId);
      },
      showTab: (tab) => this.showTab(tab),
      showControllerSteps: (nodeId) => {
        this.showTab('graph');
        this.graph?.focusRegion(nodeId);
      },
      request: (method, params) => this.host.client.request(method, params),
      error: (message) => renderError(this.root, message),
      saveUi: () => this.saveUi(),
    };
    this.ctx = ctx;

    const header = el('header', { class: 'canopy-header' }, el('h1', {}, trace.question));
    const badges = el('div', { class: 'canopy-badges' });
    badges.append(ce('vscode-badge', { class: `canopy-mode-badge mode-${trace.answer.mode}` }, trace.answer.mode === 'llm' ? 'LLM' : 'Extractive'));
    if (trace.replay) badges.append(ce('vscode-badge', { class: 'canopy-replay-badge' }, 'Replay'));
    badges.append(el('span', { class: 'canopy-muted' }, `${trace.createdAt.replace('T', ' ').slice(0, 19)} · ${settingsLine(trace)}`));
    header.append(badges);

    const answer = el('section', { class: 'canopy-answer', 'aria-label': 'Answer' });
    const mode = trace.answer.mode === 'llm' ? `LLM reader${trace.answer.model ? ` (${trace.answer.model})` : ''}` : 'Extractive reader — no LLM configured';
    answer.append(el('p', { class: 'canopy-mode' }, mode));
    // The question's language, when the English-only rules did not run for it: said where the answer is read.
    const lang = trace.language;
    if (lang && (!lang.englishRules || lang.note)) {
      answer.append(
        el(
          'p',
          { class: 'canopy-language-note', role: 'note' },
          el('strong', {}, `Language: ${lang.question === 'und' ? 'undetermined' : lang.question}. `),
          lang.englishRules ? '' : 'The English-only rules and features were switched off for this question. ',
          lang.note ?? '',
        ),
      );
    }
    answer.append(el('p', { class: 'canopy-answer-text' }, plainText(trace.answer.text)));
    const chips = el('ul', { class: 'canopy-citations', 'aria-label': 'Citations' });
    for (const c of trace.answer.citations) {
      const chip = button(`[${c.marker}] ${citationLabel(c)}`, () => this.openCitation(c), { class: 'canopy-citation', title: c.text });
      const show = button('Show region', () => ctx.selectNode(c.nodeId), { class: 'canopy-link canopy-citation-node', 'aria-label': `Show region of citation ${c.marker} in the evidence tree` });
      const li = el('li', { 'data-marker': String(c.marker) }, chip);
      if (c.stale) li.append(el('span', { class: 'canopy-stale', title: 'The file changed and no longer parses: this quote comes from its last good version' }, 'stale'));
      if (model.ref(c.nodeId)) li.append(show);
      if (c.context) li.append(el('span', { class: 'canopy-quote-context' }, c.context));
      if (c.judgment) {
        const why = el('details', { class: 'canopy-why-quote' }, el('summary', {}, `Why this quote (${c.judgment.probability.toFixed(2)})`), renderJudgment(c.judgment, 'Why this quote', 'the learned reader’s probability that this region answers the question'));
        li.append(why);
      }
      chips.append(li);
    }
    answer.append(chips);
    for (const note of trace.answer.notes ?? []) answer.append(el('p', { class: 'canopy-note', role: 'note' }, note));

    const t = trace.totals;
    const saved = t.uncompressedTokens > 0 ? Math.round(100 * (1 - t.evidenceTokens / t.uncompressedTokens)) : 0;
    const totals = el(
      'p',
      { class: 'canopy-totals' },
      `${fmtInt(t.evidenceTokens)} of ${fmtInt(t.uncompressedTokens)} evidence tokens kept (${saved}% fewer) · ${t.items} items · ${t.keptRegions} regions · ` +
        `${trace.rounds.length} round(s), stop: ${trace.stop.reason} · reader input ${fmtInt(trace.readerInput.tokens)} tokens${trace.readerInput.truncated ? ' (cut at the cap)' : ''}`,
    );

    const parts: Array<HTMLElement> = [header];
    if (trace.replay) {
      const r = trace.replay;
      const changed = Object.entries(r.changed).map(([k, v]) => `${k} = ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
      const banner = el(
        'div',
        { class: 'canopy-replay-banner', role: 'note' },
        el('strong', {}, 'Replay '),
        `of ${r.of}${changed.length ? ` with ${changed.join(', ')}` : ' with the recorded settings'}. ${r.notes.join('; ')}`,
      );
      if (trace.stop.reason === 'replay-diverged') banner.append(el('p', { class: 'canopy-replay-diverged' }, `Stopped early: ${stopReasonText['replay-diverged']}.`));
      const original = this.previous;
      if (original && original.id === r.of) banner.append(' ', button('Compare with the original', () => this.compareWith(original), { class: 'canopy-link canopy-compare-original' }));
      parts.push(banner);
    }
    parts.push(answer, totals, this.buildTabs());
    this.root.replaceChildren(...parts);
    this.root.dataset.state = 'trace';
    this.root.dataset.traceId = trace.id;
    this.showTab(this.ui.tab);
    if (this.ui.nodeId && model.ref(this.ui.nodeId) && this.ui.tab === 'evidence') this.evidence?.reveal(this.ui.nodeId, false);
    this.saveUi();
  }

  private ctx: InspectorContext | undefined;

  private buildTabs(): HTMLElement {
    const tabsEl = ce('vscode-tabs', { class: 'canopy-tabs', panel: true }) as HTMLElement & { selectedIndex: number };
    for (const t of tabs) {
      tabsEl.append(ce('vscode-tab-header', { slot: 'header', 'data-tab': t.id }, t.label));
    }
    for (const t of tabs) {
      const panel = ce('vscode-tab-panel', { 'data-tab': t.id, class: `canopy-panel canopy-panel-${t.id}` });
      this.panels.set(t.id, panel);
      tabsEl.append(panel);
    }
    tabsEl.addEventListener('vsc-tabs-select', (ev) => {
      const i = (ev as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
      const tab = tabs[i]?.id;
      if (tab) this.showTab(tab);
    });
    this.tabsEl = tabsEl;
    return tabsEl;
  }

  showTab(tab: TabId): void {
    if (!this.ctx || !this.tabsEl || !this.ui) return;
    const index = tabs.findIndex((t) => t.id === tab);
    if (this.tabsEl.selectedIndex !== index) this.tabsEl.selectedIndex = index;
    this.ensurePanel(tab);
    if (tab === 'graph') requestAnimationFrame(() => this.graph?.shown());
    this.root.dataset.tab = tab;
    this.ui.tab = tab;
    this.saveUi();
  }

  private ensurePanel(tab: TabId): void {
    const ctx = this.ctx;
    const panel = this.panels.get(tab);
    if (!ctx || !panel || this.built.has(tab)) return;
    this.built.add(tab);
    switch (tab) {
      case 'evidence':
        this.evidence = new EvidenceTreeView(ctx, this.ui!.filters);
        panel.append(this.evidence.element);
        return;
      case 'rounds':
        panel.append(renderRounds(ctx));
        return;
      case 'graph':
        this.graph = new GraphView(ctx);
        panel.append(this.graph.element);
        return;
      case 'topics':
        panel.append(renderTopics(ctx));
        return;
      case 'pdf':
        this.pdf = new PdfView(ctx);
        panel.append(this.pdf.element);
        this.pdf.start();
        return;
      case 'compare':
        this.compare = new CompareView(ctx);
        panel.append(this.compare.element);
        void this.compare.start();
        return;
      case 'replay':
        panel.append(renderReplay(ctx, (original, replayed) => this.showTrace(replayed, { previous: original })));
        return;
      default: {
        const unreachable: never = tab;
        throw new Error(`unknown tab ${String(unreachable)}`);
      }
    }
  }

  /** Selects a node of the shown trace (from the host's Evidence view). */
  reveal(nodeId: string): boolean {
    if (!this.model?.ref(nodeId) || !this.ctx) return false;
    this.ctx.selectNode(nodeId);
    return true;
  }

  compareWith(other: AskTrace): void {
    this.showTab('compare');
    this.compare?.compareWith(other);
  }

  private openCitation(c: TraceCitation): void {
    this.openAnchor(c.anchor, false, c.file, c.nodeId);
  }

  /** Text anchors open in the editor through the host; PDF anchors show their page here. */
  private openAnchor(anchor: Anchor, preserveFocus: boolean, file = anchor.file, nodeId?: string): void {
    if (anchor.page !== undefined && file.toLowerCase().endsWith('.pdf')) {
      this.showTab('pdf');
      this.pdf?.show(file, anchor.page, nodeId);
      return;
    }
    this.host.client
      .request('source/open', {
        file,
        ...(anchor.startLine !== undefined ? { startLine: anchor.startLine, startColumn: anchor.startColumn ?? 0 } : {}),
        ...(anchor.endLine !== undefined ? { endLine: anchor.endLine, endColumn: anchor.endColumn ?? 0 } : {}),
        ...(preserveFocus ? { preserveFocus: true } : {}),
      })
      .catch((err: Error) => renderError(this.root, `Could not open ${file}: ${err.message}`));
  }

  private saveUi(): void {
    if (!this.ui) return;
    const ui: UiState = { ...this.ui, filters: { ...(this.evidence?.filters ?? this.ui.filters) } };
    const selected = this.evidence?.selected;
    if (selected) ui.nodeId = selected;
    this.ui = ui;
    this.host.save(ui);
  }

  /** For a placeholder view: forget the trace, keep nothing of its UI state. */
  placeholder(_view: PlaceholderView): void {
    this.clear();
    this.lastTrace = undefined;
  }
}
