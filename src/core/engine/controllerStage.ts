/**
 * The round engine's refinement stage for the MAGE controller (design §7, docs/controller.md): after a
 * round's compression, every fresh retrieved item of a long PDF (at least `minPages` pages)
 * whose file was not controlled earlier in the question hands its file to
 * `buildEvidenceSubgraph`. The controller's kept regions (CANOPY projection inside every opened
 * element) replace CANOPY's kept regions of that file's fresh items: each region goes to the
 * fresh item it belongs to, and regions of items retrieval did not return go to the file's
 * best-ranked fresh item (the carrier), which also carries the controller's trace.
 */
import { namesSource, questionSourceNames } from '../text/sources';
import type { NodeAdapter } from '../compress/nodeScorer';
import type { CanopySettings } from '../config/settings';
import type { TokenCounter } from '../compress/tokens';
import { buildEvidenceSubgraph, type ControllerRegion } from '../controller/subgraph';
import { budgetsOf, resolveControllerOptions, type ControllerBudgets, type ControllerOptions } from '../controller/options';
import type { ControllerTrace } from '../controller/trace';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { SubgraphElement } from '../read/evidenceXml';
import type { ChatModel } from '../llm/llm';
import type { Item, RegionNode } from '../../contracts/region';
import type { ControllerSkipRule, NodeDecision } from '../../contracts/trace';
import type { Clock } from '../ports';
import type { Tracer } from '../trace/tracer';
import type { RefineStage, Refinement } from './rounds';

/** The controller's settings in `AskOptions`: on/off, the page threshold, and its budgets and options. */
export interface AskControllerOptions extends Partial<ControllerOptions> {
  /** Off: the pipeline never runs the controller (default on when the options are given). */
  enabled?: boolean;
  /** Only PDFs with at least this many pages go through the controller. */
  minPages: number;
}

/** What the trace's settings record about the controller. */
export interface ControllerSettingsRecord {
  minPages: number;
  evaluator: 'rule' | 'llm';
  budgets: ControllerBudgets;
}

export interface ControllerStageDeps {
  loadDocument: (file: string) => Promise<ParsedDocument>;
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  embedTexts: (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;
  tokens: TokenCounter;
  adapter?: NodeAdapter;
  /** With a model the controller's evaluator is the LLM prompt; without one, the deterministic rule. */
  llm?: ChatModel;
  tracer?: Tracer;
  clock?: Clock;
}

/** One file the controller ran over in a round. */
export interface ControlledFile {
  file: string;
  /** The fresh item (best-ranked of the file) that carries the trace and the regions of unretrieved items. */
  carrierId: string;
  trace: ControllerTrace;
  /** Fresh item id → the controller's kept regions it holds (document order); every fresh item of the file has an entry. */
  keptByItem: Map<string, RegionNode[]>;
  /** Scores of the kept regions and their leaves (CANOPY projection inside the opened elements). */
  scores: Map<string, number>;
  /** Kept region id → the opened element it lies in (the reader gets these regions as the subgraph XML). */
  elements: Map<string, SubgraphElement>;
  /** Fresh item id → what the controller decided for each of its regions that is not kept. */
  decisionsByItem: Map<string, Map<string, ControllerDecision>>;
}

/** The trace's decision and rule for a region of a controlled item that was not kept. */
export interface ControllerDecision {
  decision: NodeDecision | 'dropped-by-controller';
  rule: ControllerSkipRule | 'controller' | 'ancestor-kept-whole';
}

/**
 * For every region of one controlled item that is not kept, why: a region that holds kept regions
 * was descended into by the controller; any other is `dropped-by-controller` with the reason its
 * element (or the nearest enclosing one the controller touched) ended in the subgraph — pruned,
 * never opened, opened but projected out — or, for an element the controller never touched,
 * whether its page was activated at all. The topmost region left out is `dropped-by-controller`,
 * the regions inside it `not-visited` with their own reason. Regions inside kept ones are left
 * out (they are kept).
 */
export function controllerDecisions(root: RegionNode, trace: Pick<ControllerTrace, 'subgraph'>, kept: ReadonlySet<string>): Map<string, ControllerDecision> {
  const stateOf = new Map<string, string>();
  const activePages = new Set<number>();
  for (const n of trace.subgraph.nodes) {
    // A page's own state says it was activated (its elements became candidates), not opened.
    if (n.regionId && n.type !== 'page') stateOf.set(n.regionId, n.state);
    if (n.type === 'page' && n.state !== 'inactive') activePages.add(n.page);
  }
  const out = new Map<string, ControllerDecision>();
  const holdsKept = new Map<string, boolean>();
  const anyKept = (n: RegionNode): boolean => {
    let v = holdsKept.get(n.id);
    if (v === undefined) holdsKept.set(n.id, (v = kept.has(n.id) || n.children.some(anyKept)));
    return v;
  };
  const onActivePage = (n: RegionNode): boolean => {
    const { page, pageEnd } = n.anchor;
    if (page === undefined) return false;
    for (let p = page; p <= (pageEnd ?? page); p++) if (activePages.has(p)) return true;
    return false;
  };
  // What lies inside a kept region went to the reader with it (as under CANOPY's keep-whole).
  const insideKept = (n: RegionNode): void => {
    for (const c of n.children) {
      if (!kept.has(c.id)) out.set(c.id, { decision: 'not-visited', rule: 'ancestor-kept-whole' });
      insideKept(c);
    }
  };
  const visit = (n: RegionNode, inherited: ControllerSkipRule | undefined, insideDropped: boolean): void => {
    if (kept.has(n.id)) {
      insideKept(n);
      return;
    }
    const state = stateOf.get(n.id);
    const own: ControllerSkipRule | undefined =
      state === 'opened' ? 'controller-projected-out' : state === 'pruned' ? 'controller-pruned' : state === 'active' ? 'controller-not-opened' : undefined;
    if (anyKept(n)) {
      // Inside an opened element, what the projection did not keep is projected out.
      out.set(n.id, { decision: 'descend', rule: 'controller' });
      for (const c of n.children) visit(c, own ?? inherited, false);
      return;
    }
    const rule = own ?? inherited ?? (onActivePage(n) ? 'controller-not-activated' : 'controller-page-not-activated');
    // As with CANOPY's dropped siblings, the topmost region left out is the dropped one; the
    // regions inside it are not visited, each with its own reason.
    out.set(n.id, { decision: insideDropped ? 'not-visited' : 'dropped-by-controller', rule });
    for (const c of n.children) visit(c, own ?? inherited, true);
  };
  visit(root, undefined, false);
  return out;
}

/** Validates the options once per question; `undefined` when the controller is off. */
export function resolveAskController(options: AskControllerOptions | undefined): { minPages: number; options: Partial<ControllerOptions> } | undefined {
  if (!options || options.enabled === false) return undefined;
  const { enabled: _enabled, minPages, ...rest } = options;
  if (!Number.isInteger(minPages) || minPages < 1) {
    throw new CanopyError(ErrorCodes.badInput, `controller option minPages must be a positive integer, not ${JSON.stringify(minPages)}`);
  }
  resolveControllerOptions(rest); // throws E_BAD_INPUT naming the first bad option
  return { minPages, options: rest };
}

export function controllerSettingsRecord(resolved: { minPages: number; options: Partial<ControllerOptions> }, llm: boolean): ControllerSettingsRecord {
  return { minPages: resolved.minPages, evaluator: llm ? 'llm' : 'rule', budgets: budgetsOf(resolveControllerOptions(resolved.options)) };
}

/**
 * Runs the controller over the long PDFs among a round's fresh items. `controlledFiles` holds
 * the files already controlled in this question; the new ones are added to it.
 */
export async function controlFreshItems(
  question: string,
  fresh: ReadonlyArray<{ item: Item; rank: number }>,
  controlledFiles: Set<string>,
  settings: { minPages: number; options: Partial<ControllerOptions> },
  aggregate: boolean,
  deps: ControllerStageDeps,
  signal?: AbortSignal,
): Promise<ControlledFile[]> {
  const byFile = new Map<string, Array<{ item: Item; rank: number }>>();
  for (const r of fresh) {
    // Only paged items can come from a PDF; other files are never loaded.
    if (r.item.root.anchor.page === undefined || controlledFiles.has(r.item.file)) continue;
    const list = byFile.get(r.item.file) ?? [];
    list.push(r);
    byFile.set(r.item.file, list);
  }
  // When the question names a company whose filing is among these, another filing's statements are not opened ("ACME's quick ratio" → ACME's balance sheet only).
  const names = questionSourceNames(question);
  const isNamed = (file: string, items: ReadonlyArray<{ item: Item }>) => namesSource(names, file, items[0]?.item.title ?? '');
  const someNamed = [...byFile].some(([file, items]) => isNamed(file, items));
  const out: ControlledFile[] = [];
  for (const [file, items] of byFile) {
    throwIfCancelled(signal);
    const doc = await deps.loadDocument(file);
    if (doc.format !== 'pdf' || (doc.pages?.length ?? 0) < settings.minPages) continue;
    controlledFiles.add(file);
    const ranked = [...items].sort((a, b) => a.rank - b.rank);
    const sub = await buildEvidenceSubgraph(
      question,
      doc,
      {
        retrievedSpans: ranked.map((r) => ({ page: r.item.root.anchor.page!, pageEnd: r.item.root.anchor.pageEnd ?? r.item.root.anchor.page! })),
        openStatements: !someNamed || isNamed(file, items),
        embedQuery: deps.embedQuery,
        embedTexts: deps.embedTexts,
        tokens: deps.tokens,
        ...(deps.adapter ? { adapter: deps.adapter } : {}),
        ...(deps.llm ? { llm: deps.llm } : {}),
        ...(deps.tracer ? { tracer: deps.tracer } : {}),
        ...(deps.clock ? { clock: deps.clock } : {}),
      },
      { keepTablesWhole: aggregate, ...settings.options },
      signal,
    );
    const carrierId = ranked[0]!.item.id;
    const keptByItem = new Map<string, RegionNode[]>(ranked.map((r) => [r.item.id, []]));
    const scores = new Map<string, number>();
    const elements = new Map<string, SubgraphElement>();
    for (const region of sub.regions) {
      const target = keptByItem.get(region.itemId) ?? keptByItem.get(carrierId)!;
      target.push(region.node);
      mergeScores(scores, region);
      elements.set(region.node.id, region.element);
    }
    const decisionsByItem = new Map(ranked.map((r) => [r.item.id, controllerDecisions(r.item.root, sub.trace, new Set(keptByItem.get(r.item.id)!.map((n) => n.id)))]));
    out.push({ file, carrierId, trace: sub.trace, keptByItem, scores, elements, decisionsByItem });
  }
  return out;
}

/**
 * The controller as the round engine's refinement stage for one question: the long PDFs among a
 * round's fresh items go through it once per question; their fresh items' kept regions become
 * the controller's, and the best-ranked one carries its trace.
 */
export function controllerRefineStage(settings: { minPages: number; options: Partial<ControllerOptions> }, deps: ControllerStageDeps): RefineStage {
  const controlledFiles = new Set<string>();
  return {
    async refine({ question, fresh, aggregate }, signal): Promise<Refinement> {
      const controlled = await controlFreshItems(question, fresh, controlledFiles, settings, aggregate, deps, signal);
      const refinement: Refinement = { items: new Map(), elements: new Map() };
      for (const c of controlled) {
        for (const [itemId, kept] of c.keptByItem) {
          refinement.items.set(itemId, { kept, scores: c.scores, decisions: c.decisionsByItem.get(itemId)!, ...(itemId === c.carrierId ? { controller: c.trace } : {}) });
        }
        for (const [id, element] of c.elements) refinement.elements.set(id, element);
      }
      return refinement;
    },
  };
}

function mergeScores(into: Map<string, number>, region: ControllerRegion): void {
  for (const [id, s] of region.leafScores ?? []) into.set(id, s);
  into.set(region.node.id, region.score);
}

/** The controller's options from Canopy's settings (`canopy.controller.*`). */
export function askControllerFromSettings(
  s: Pick<
    CanopySettings,
    | 'controllerEnabled'
    | 'controllerMinPages'
    | 'controllerInitialPages'
    | 'controllerMaxActivationsPerIteration'
    | 'controllerMaxIterations'
    | 'controllerMaxOpenedNodes'
    | 'controllerMaxSearches'
  >,
): AskControllerOptions {
  return {
    enabled: s.controllerEnabled,
    minPages: s.controllerMinPages,
    initialPages: s.controllerInitialPages,
    maxActivationsPerIteration: s.controllerMaxActivationsPerIteration,
    maxIterations: s.controllerMaxIterations,
    maxOpenedNodes: s.controllerMaxOpenedNodes,
    maxSearches: s.controllerMaxSearches,
  };
}
