/**
 * The two XML renderings of the controller:
 *   renderStateXml     what the LLM evaluator sees each iteration: question, budget left, the
 *                      evidence state (active pages with their active and opened elements),
 *                      the last steps of the trace and the numbered candidate actions. Nodes are
 *                      described by page, type and summary, never by id: the model answers with
 *                      candidate indices.
 *   renderEvidenceXml  the final subgraph for the reader: the opened elements grouped by page,
 *                      each with its type, summary, page and bbox and the text CANOPY projection
 *                      kept of it, every kept region numbered for citation (the renderer is
 *                      read/evidenceXml.ts, shared with the reader input).
 * Document text is untrusted: everything is escaped, and characters XML cannot carry are dropped.
 */
import type { RegionNode } from '../../contracts/region';
import { escapeXml, renderSubgraphXml, xmlAttrs as attrs, type SubgraphElement, type SubgraphEntry } from '../read/evidenceXml';
import type { Candidate } from './candidates';
import type { DocumentView } from './documentView';
import type { EvaluatorInput } from './evaluator';
import type { ControllerStep } from './trace';

const activePreviewChars = 200;

function clip(text: string, max: number): string {
  const t = text.replace(/[ \t]+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, Math.max(0, max - 1))}…`;
}

function describeAction(step: ControllerStep, view: DocumentView): Record<string, string | number | boolean | undefined> {
  const a = step.action;
  switch (a.type) {
    case 'ACTIVATE_PAGE':
      return { target: `page ${a.page + 1}`, source: a.source };
    case 'ACTIVATE_NODE':
      return { target: view.label(a.nodeId, 70), source: a.source };
    case 'OPEN_NODE':
      return { target: view.label(a.nodeId, 70) };
    case 'FOLLOW_RELATION':
      return { target: view.label(a.to, 70), relation: a.relation, from: view.label(a.from, 50) };
    case 'SEARCH_EVIDENCE':
      return { query: a.query, found: step.results?.length };
    case 'PRUNE_NODE':
      return { target: view.label(a.nodeId, 70), reason: a.reason };
    case 'STOP':
      return { reason: a.reason };
  }
}

function candidateXml(c: Candidate, view: DocumentView): string {
  const a = c.action;
  const node = view.node(c.targetId);
  const base = { index: c.index, action: a.type, page: c.page + 1 };
  let extra: Record<string, string | number | undefined> = {};
  switch (a.type) {
    case 'ACTIVATE_PAGE':
      extra = { source: a.source, ...(c.via ? { via: `${view.node(c.via)?.type ?? 'element'} on that page` } : {}) };
      break;
    case 'ACTIVATE_NODE':
      extra = { type: node?.type, source: a.source };
      break;
    case 'OPEN_NODE':
      extra = { type: node?.type, size_chars: node?.text.length };
      break;
    case 'FOLLOW_RELATION':
      extra = { type: node?.type, relation: a.relation, from: view.label(a.from, 60) };
      break;
    case 'PRUNE_NODE':
      extra = { type: node?.type };
      break;
  }
  return `    <candidate${attrs({ ...base, ...extra })}>${escapeXml(c.preview)}</candidate>`;
}

/** The LLM evaluator's view of one iteration; `shown` are the candidates listed (all, or a capped subset). */
export function renderStateXml(input: EvaluatorInput, shown: Candidate[]): string {
  const { view, state, options, budgetLeft } = input;
  const lines: string[] = [];
  lines.push(`<controller_state${attrs({ iteration: input.iteration, iterations_total: options.maxIterations })}>`);
  lines.push(`  <question>${escapeXml(input.question)}</question>`);
  lines.push(
    `  <budget${attrs({
      iterations_left: budgetLeft.iterations,
      activations_left_this_iteration: budgetLeft.activationsThisIteration,
      opened_nodes_left: budgetLeft.openedNodes,
      searches_left: budgetLeft.searches,
    })}/>`,
  );
  lines.push(`  <evidence${attrs({ document: view.title || view.file, pages_in_document: view.pages.length })}>`);
  const activePages = state.activePages();
  if (activePages.length === 0) lines.push('    <none/>');
  for (const pageId of activePages) {
    const page = view.node(pageId)!;
    lines.push(`    <page${attrs({ number: page.page + 1, state: 'active', summary: page.summary })}>`);
    for (const e of view.elementsOn(pageId)) {
      const s = state.stateOf(e.id);
      if (s === 'opened') {
        lines.push(`      <node${attrs({ type: e.type, state: s, summary: e.summary })}><text>${escapeXml(clip(e.text, options.maxTextCharsShown))}</text></node>`);
      } else if (s === 'active') {
        // Active: in working memory, not yet given to the reader — a short preview only.
        lines.push(`      <node${attrs({ type: e.type, state: s, summary: e.summary })}><preview>${escapeXml(clip(e.text, activePreviewChars))}</preview></node>`);
      }
    }
    lines.push('    </page>');
  }
  lines.push('  </evidence>');
  const prunedPages = view.pages.filter((p) => state.stateOf(p.id) === 'pruned').map((p) => p.page + 1);
  const prunedElements = view.elements.filter((e) => state.stateOf(e.id) === 'pruned').length;
  if (prunedPages.length > 0 || prunedElements > 0) lines.push(`  <pruned${attrs({ pages: prunedPages.join(', '), elements: prunedElements })}/>`);
  if (state.queries.length > 0) lines.push(`  <searches>${state.queries.map((q) => `<query>${escapeXml(q)}</query>`).join('')}</searches>`);
  lines.push('  <recent_trace>');
  if (input.recentSteps.length === 0) lines.push('    <none/>');
  for (const s of input.recentSteps) {
    lines.push(
      `    <step${attrs({
        n: s.step + 1,
        iteration: s.iteration,
        action: s.action.type,
        ...describeAction(s, view),
        valid: s.valid,
        error: s.error,
        utility: s.utility,
      })}/>`,
    );
  }
  lines.push('  </recent_trace>');
  lines.push(`  <candidates${attrs({ count: input.candidates.length, shown: shown.length })}>`);
  if (shown.length === 0) lines.push('    <none/>');
  for (const c of shown) lines.push(candidateXml(c, view));
  lines.push('  </candidates>');
  lines.push('</controller_state>');
  return lines.join('\n');
}

/** One opened element as the reader gets it: the element and the regions kept of it. */
export interface RenderedNode {
  nodeId: string;
  kept: RegionNode[];
}

/** Where an element sits, as the reader's XML describes it. */
export function subgraphElement(view: DocumentView, nodeId: string): SubgraphElement | undefined {
  const n = view.node(nodeId);
  if (!n) return undefined;
  const p = view.page(n.page);
  // The graph's page summary is "Page N: <first heading or line>"; the XML gives the number itself.
  const pageSummary = p?.summary.replace(/^Page \d+(?::\s*)?/, '').trim();
  const leadIn = view.leadIn(nodeId)?.text.replace(/\s+/g, ' ').trim();
  return {
    document: view.title || view.file,
    graphNodeId: nodeId,
    type: n.type,
    summary: n.summary,
    page: n.page,
    ...(pageSummary ? { pageSummary } : {}),
    ...(p?.virtual ? { virtualPage: true } : {}),
    ...(n.bbox ? { bbox: n.bbox } : {}),
    order: view.readingOrder(nodeId),
    ...(leadIn ? { leadIn } : {}),
  };
}

/**
 * The final subgraph as the reader gets it (read/evidenceXml.ts), kept regions numbered from 1
 * in page and reading order. In the reader input the numbers continue those of the blocks
 * before it; this rendering is the trace's record of the subgraph and its token count.
 */
export function renderEvidenceXml(view: DocumentView, opened: RenderedNode[]): string {
  const entries: Omit<SubgraphEntry, 'n'>[] = [];
  for (const o of opened) {
    const element = subgraphElement(view, o.nodeId);
    if (element) for (const node of o.kept) entries.push({ element, node });
  }
  entries.sort((a, b) => a.element.page - b.element.page || a.element.order - b.element.order);
  return renderSubgraphXml(view.file, entries.map((e, i) => ({ ...e, n: i + 1 })));
}
