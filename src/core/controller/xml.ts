/**
 * The two XML renderings of the controller:
 *   renderStateXml     what the LLM evaluator sees each iteration: question, budget left, the
 *                      evidence state (active pages with their active and opened elements),
 *                      the last steps of the trace and the numbered candidate actions. Nodes are
 *                      described by page, type and summary, never by id: the model answers with
 *                      candidate indices.
 *   renderEvidenceXml  the final subgraph for the reader: the opened elements grouped by page,
 *                      each with its type, summary, page and bbox and the text CANOPY projection
 *                      kept of it (kept table rows as <row>, other kept text as one <text>).
 * Document text is untrusted: everything is escaped, and characters XML cannot carry are dropped.
 *
 * Canopy has no multimodal reader yet. A multimodal reader would get the page image attached to
 * each <page> and a crop of each <node>'s bbox on that page image (both are in PDF user space,
 * origin bottom-left); renderEvidenceXml marks the places in comments in its code and writes no
 * image references.
 */
import type { RegionNode } from '../model/region';
import type { Candidate } from './candidates';
import type { DocumentView } from './documentView';
import type { EvaluatorInput } from './evaluator';
import type { ControllerStep } from './trace';

// Control characters other than tab, LF and CR are not allowed in XML 1.0.
// eslint-disable-next-line no-control-regex
const invalidXmlChars = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function escapeXml(text: string): string {
  return text.replace(invalidXmlChars, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function attrs(values: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(values)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
}

const activePreviewChars = 200;

function clip(text: string, max: number): string {
  const t = text.replace(/[ \t]+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, Math.max(0, max - 1))}…`;
}

/** Whole PDF points: enough to locate a node on its page (the anchors keep the exact box). */
function bboxText(b: [number, number, number, number] | undefined): string | undefined {
  return b ? b.map((x) => Math.round(x)).join(' ') : undefined;
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

const readerSummaryChars = 80;

/**
 * The final subgraph for the reader: opened elements by page (page order), in reading order,
 * numbered `n` from 1 — the n-th node is `openedNodeIds[n − 1]`. Reader context is what the
 * controller saves, so the markup stays lean: a table's header is its summary and is not
 * repeated on each kept row; a summary that only repeats the start of the kept text is left
 * out; a node's page is the <page> it sits in; kept regions carry no boxes of their own (the
 * node's bbox locates them on the page).
 */
export function renderEvidenceXml(view: DocumentView, opened: RenderedNode[]): string {
  const byPage = new Map<number, RenderedNode[]>();
  for (const o of opened) {
    const n = view.node(o.nodeId);
    if (!n) continue;
    const list = byPage.get(n.page) ?? [];
    list.push(o);
    byPage.set(n.page, list);
  }
  const lines: string[] = [`<evidence_subgraph${attrs({ document: view.title || view.file })}>`];
  let index = 0;
  for (const page of [...byPage.keys()].sort((a, b) => a - b)) {
    const p = view.page(page);
    lines.push(`  <page${attrs({ number: page + 1, summary: p?.summary, virtual: p?.virtual ? true : undefined })}>`);
    // A multimodal reader would get the image of this page here.
    for (const o of byPage.get(page)!.sort((a, b) => view.readingOrder(a.nodeId) - view.readingOrder(b.nodeId))) {
      const n = view.node(o.nodeId)!;
      const rows = o.kept.length > 0 && o.kept.every((r) => r.kind === 'row');
      const texts = o.kept.map((r) => r.text.replace(/[ \t]+/g, ' ').trim());
      const first = (texts[0] ?? '').replace(/\s+/g, ' ');
      const summary = n.summary.replace(/\s+/g, ' ');
      const redundant = first.startsWith(summary.replace(/…$/, ''));
      lines.push(
        `    <node${attrs({ n: ++index, type: n.type, bbox: bboxText(n.bbox), summary: redundant ? undefined : clip(summary, readerSummaryChars) })}>`,
      );
      // ... and here the crop of the node's bbox from that page image.
      if (rows) for (const t of texts) lines.push(`      <row>${escapeXml(t)}</row>`);
      else lines.push(`      <text>${escapeXml(texts.join('\n'))}</text>`);
      lines.push('    </node>');
    }
    lines.push('  </page>');
  }
  lines.push('</evidence_subgraph>');
  return lines.join('\n');
}
