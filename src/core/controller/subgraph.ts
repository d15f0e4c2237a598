/**
 * The controller's one entry point for the ask pipeline: question + parsed long document →
 * the evidence subgraph. Page-level grounding picks the entry pages, the controller runs under
 * its budgets (rule evaluator, or the LLM one when a ChatModel is given), and every opened
 * element is compressed by CANOPY projection (design §5) before it reaches the reader. The
 * result holds the kept regions — real RegionNodes with their parse-time anchors, ready for
 * `buildReaderInput` and citations — the XML rendering for the reader, and the ControllerTrace.
 */
import { scoreNodes, type NodeAdapter } from '../compress/nodeScorer';
import { nodeVectors } from '../encode/nodeVectors';
import { projectItem } from '../compress/projection';
import { routeQuestion } from '../compress/router';
import type { TokenCounter } from '../compress/tokens';
import { throwIfCancelled } from '../errors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { ChatModel } from '../llm/llm';
import type { Anchor, RegionNode } from '../../contracts/region';
import { systemClock, type Clock } from '../ports';
import type { SubgraphElement } from '../read/evidenceXml';
import type { EvidenceRegion } from '../read/reader';
import type { Tracer } from '../trace/tracer';
import { runController } from './controller';
import { DocumentView } from './documentView';
import type { ControllerEvaluator } from './evaluator';
import { fits } from '../profiles/profiles';
import { GROUNDING_WEIGHTS, groundPages, overviewParagraphs, statementPages } from './grounding';
import { LlmEvaluator } from './llmEvaluator';
import { budgetsOf, resolveControllerOptions, type ControllerOptions } from './options';
import { RelevanceModel, type RelevanceDeps } from './relevance';
import { RuleEvaluator } from './ruleEvaluator';
import {
  CONTROLLER_TRACE_KIND,
  CONTROLLER_TRACE_VERSION,
  type ControllerTrace,
  type GroundedPage,
  type OpenedEvidence,
  type SubgraphEdge,
  type SubgraphNode,
} from './trace';
import { renderEvidenceXml, subgraphElement } from './xml';

export interface EvidenceSubgraphDeps extends RelevanceDeps {
  /** Counts evidence tokens (the reader's tokenizer where known, else cl100k_base). */
  tokens: TokenCounter;
  /** With a model the evaluator is the LLM prompt; without one, the deterministic rule. */
  llm?: ChatModel;
  /** Overrides the evaluator chosen from `llm` (tests, experiments). */
  evaluator?: ControllerEvaluator;
  adapter?: NodeAdapter;
  tracer?: Tracer;
  clock?: Clock;
  /**
   * The page spans (0-based, inclusive) of this document's items that retrieval returned for the
   * question, best first. The best-grounded page of each becomes an entry page too (after
   * grounding's own), so a page the retriever found is a candidate even where page grounding
   * ranks it low.
   */
  retrievedSpans?: ReadonlyArray<{ page: number; pageEnd: number }>;
  /**
   * Whether the statements the question names or implies are opened in iteration 0 (grounding.ts
   * `statementPages`; default true). The controller stage turns it off for a filing of another
   * company than the one the question names.
   */
  openStatements?: boolean;
}

/**
 * Entry pages from retrieval: for each retrieved span (best first), its best-grounded page with
 * text, unless grounding's own entry pages hold it already; at most `max`.
 */
export function retrievedEntryPages(grounding: readonly GroundedPage[], spans: ReadonlyArray<{ page: number; pageEnd: number }>, initialPages: number, max: number): Array<{ page: number; span: number }> {
  const own = new Set(grounding.filter((g) => g.fused > 0).slice(0, initialPages).map((g) => g.page));
  const out: Array<{ page: number; span: number }> = [];
  spans.forEach((span, i) => {
    if (out.length >= max) return;
    const best = grounding.find((g) => g.fused > 0 && g.page >= span.page && g.page <= span.pageEnd);
    if (best && !own.has(best.page) && !out.some((o) => o.page === best.page)) out.push({ page: best.page, span: i });
  });
  return out;
}

/** A kept region of an opened element, as the reader input takes it (rendered in the subgraph XML), plus where it came from. */
export interface ControllerRegion extends EvidenceRegion {
  element: SubgraphElement;
  /** The opened graph element the region lies in (its id is the element's region id). */
  graphNodeId: string;
  /** 0-based page. */
  page: number;
  anchor: Anchor;
}

export interface EvidenceSubgraph {
  /** Kept regions of the opened elements, in document order (page, then reading order). */
  regions: ControllerRegion[];
  /** The opened elements (graph ids = region ids), in reading order. */
  openedNodeIds: string[];
  /** The subgraph rendered for the reader (xml.ts). */
  xml: string;
  /** Tokens of the kept regions' text (header + text for table rows, as the reader input counts them). */
  tokens: number;
  trace: ControllerTrace;
}

function regionText(node: RegionNode): string {
  return node.header ? `${node.header}\n${node.text}` : node.text;
}

export async function buildEvidenceSubgraph(
  question: string,
  doc: Pick<ParsedDocument, 'file' | 'title' | 'items' | 'pages' | 'graph'>,
  deps: EvidenceSubgraphDeps,
  options: Partial<ControllerOptions> = {},
  signal?: AbortSignal,
): Promise<EvidenceSubgraph> {
  const clock = deps.clock ?? systemClock;
  const started = clock.now();
  const opts = resolveControllerOptions(options);
  const view = await DocumentView.of(doc);
  throwIfCancelled(signal);
  const relevance = await RelevanceModel.create(question, view, deps, signal);
  const grounding = groundPages(view, relevance);
  const evaluator: ControllerEvaluator = deps.evaluator ?? (deps.llm ? new LlmEvaluator(deps.llm) : new RuleEvaluator());
  deps.tracer?.emit('controller/start', { file: view.file, pages: view.pages.length, elements: view.elements.length, evaluator: evaluator.kind });

  const retrievedEntries = retrievedEntryPages(grounding, deps.retrievedSpans ?? [], opts.initialPages, opts.initialPages);
  // The statement pages and the business overview are the filings profile's: only for a document that fits it.
  const filing = doc.items.some((it) => fits(it.traits, 'filing'));
  const statements = deps.openStatements === false || !filing ? [] : statementPages(view, question, grounding);
  const overview = filing ? overviewParagraphs(view, question) : undefined;
  const run = await runController(
    question,
    view,
    relevance,
    grounding,
    opts,
    { embedQuery: deps.embedQuery, evaluator, retrievedEntries, statementPages: statements, ...(overview ? { overview } : {}), ...(deps.tracer ? { tracer: deps.tracer } : {}) },
    signal,
  );

  // CANOPY projection inside every opened element.
  const keepTablesWhole = opts.keepTablesWhole ?? routeQuestion(question).aggregate;
  const openedIds = run.state.elementsIn('opened');
  // The tables of a statement the question asks about are read whole: the answer is one of their
  // lines, and the line that names the metric scores no better against the question than its neighbours.
  // So are the elements the controller opened to be read whole (a table with its lead-in, the business overview's paragraphs).
  const statementTables = new Set([...statements.flatMap((s) => s.tableIds), ...run.readWhole]);
  const regions: ControllerRegion[] = [];
  const opened: OpenedEvidence[] = [];
  const rendered: Array<{ nodeId: string; kept: RegionNode[] }> = [];
  for (const id of openedIds) {
    throwIfCancelled(signal);
    const node = view.node(id)!;
    const region = node.regionId ? view.region(node.regionId) : undefined;
    if (!region) continue;
    const item = node.itemId ? view.item(node.itemId) : undefined;
    const element = subgraphElement(view, id)!;
    let kept: RegionNode[] = [region];
    let scores = new Map<string, number>();
    if (opts.project && !(run.readWhole.has(id) && node.type !== 'table')) {
      const vectors = await nodeVectors(region, deps.embedTexts, signal);
      scores = scoreNodes(relevance.queryVector, vectors, deps.adapter);
      kept = projectItem(region, (n) => scores.get(n.id) ?? Number.NEGATIVE_INFINITY, { keepTablesWhole: keepTablesWhole || statementTables.has(id) }).kept;
    }
    rendered.push({ nodeId: id, kept });
    let keptTokens = 0;
    for (const k of kept) {
      keptTokens += deps.tokens.count(regionText(k));
      regions.push({
        itemId: item?.id ?? node.itemId ?? view.file,
        itemTitle: item?.title ?? view.title,
        file: view.file,
        node: k,
        score: scores.get(k.id) ?? relevance.relevance(id),
        ...(scores.size > 0 ? { leafScores: scores } : {}),
        ...(item?.traits ? { document: item.traits } : {}),
        ...(element.leadIn ? { leadIn: element.leadIn } : {}),
        element,
        graphNodeId: id,
        page: k.anchor.page ?? node.page,
        anchor: k.anchor,
      });
    }
    opened.push({
      nodeId: id,
      type: node.type,
      page: node.page,
      tokens: deps.tokens.count(regionText(region)),
      keptRegionIds: kept.map((k) => k.id),
      keptTokens,
      projected: opts.project,
    });
  }
  const xml = renderEvidenceXml(view, rendered);
  const tokens = opened.reduce((s, o) => s + o.keptTokens, 0);

  // The final subgraph: every node that left Inactive, its containment and the relations among them.
  const touched = run.state.touched();
  const inGraph = new Set(touched.map((t) => t.id));
  const nodes: SubgraphNode[] = touched.map(({ id, state }) => {
    const n = view.node(id)!;
    const out: SubgraphNode = { id, type: n.type, label: n.summary.length > 120 ? `${n.summary.slice(0, 119)}…` : n.summary, page: n.page, state, anchor: n.anchor };
    if (n.regionId) out.regionId = n.regionId;
    if (n.bbox) out.bbox = n.bbox;
    if (n.type !== 'page') out.relevance = Math.round(relevance.relative(id) * 1000) / 1000;
    return out;
  });
  const edges: SubgraphEdge[] = [];
  const seen = new Set<string>();
  for (const { id } of touched) {
    if (view.isPage(id)) continue;
    const page = view.pageOf(id);
    if (page && inGraph.has(page.id)) edges.push({ from: page.id, to: id, type: 'contains' });
    for (const r of view.relationsFrom(id)) {
      const key = `${r.type}:${r.from}>${r.to}`;
      const followed = run.state.followed.has(`${r.from}>${r.to}`);
      if (seen.has(key) || !(inGraph.has(r.to) || followed)) continue;
      seen.add(key);
      edges.push({ from: r.from, to: r.to, type: r.type, ...(followed ? { followed: true } : {}) });
    }
  }

  const valid = run.steps.filter((s) => s.valid);
  const trace: ControllerTrace = {
    kind: CONTROLLER_TRACE_KIND,
    version: CONTROLLER_TRACE_VERSION,
    question,
    file: view.file,
    evaluator: { kind: evaluator.kind, ...(evaluator.model ? { model: evaluator.model } : {}), onInvalidDecision: opts.onInvalidDecision },
    budgets: budgetsOf(opts),
    grounding: {
      method: 'head+element-bm25',
      weights: { ...GROUNDING_WEIGHTS },
      pageCount: view.pages.length,
      pages: grounding.slice(0, Math.max(20, opts.initialPages)),
      entryPages: run.steps.filter((s) => s.iteration === 0 && s.action.type === 'ACTIVATE_PAGE' && s.valid).map((s) => (s.action as { page: number }).page),
    },
    steps: run.steps,
    validationErrors: run.validationErrors,
    evaluatorCalls: run.evaluatorCalls,
    stop: run.stop,
    subgraph: { nodes, edges },
    opened,
    totals: {
      iterations: run.iterations,
      actions: run.steps.length,
      validActions: valid.length,
      invalidActions: run.steps.length - valid.length,
      activatedPages: valid.filter((s) => s.action.type === 'ACTIVATE_PAGE').length,
      opened: opened.length,
      pruned: touched.filter((t) => t.state === 'pruned').length,
      evidenceTokens: tokens,
      xmlTokens: deps.tokens.count(xml),
      tokenizer: deps.tokens.name,
    },
    ms: clock.now() - started,
  };
  deps.tracer?.emit('controller/done', { file: view.file, stop: run.stop.reason, opened: opened.length, tokens });
  return { regions, openedNodeIds: openedIds, xml, tokens, trace };
}
