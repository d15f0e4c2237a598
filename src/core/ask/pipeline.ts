/**
 * The ask pipeline (design §1, §5, §6): retrieve → compress each new item → critic → follow-up
 * retrieval, for at most R rounds; then the reader answers from the kept evidence. Every score
 * and decision goes into the returned AskTrace, which is all the inspector renders.
 */
import { keepAboveThreshold, keepFlatTopM, keepWholeItems, type KeptByItem } from '../compress/baselines';
import { nodeVectors, scoreNodes, type EmbedTexts, type NodeAdapter } from '../compress/nodeScorer';
import { projectItem, type NodeVerdict } from '../compress/projection';
import { routeQuestion } from '../compress/router';
import type { TokenCounter } from '../compress/tokens';
import type { Critic, EvidenceView } from '../critic/critic';
import { throwIfCancelled } from '../errors';
import type { Item, RegionNode } from '../model/region';
import { systemClock, type Clock } from '../ports';
import type { Answer, Reader, ReaderInput } from '../read/reader';
import type { SubgraphElement } from '../read/evidenceXml';
import type { ImageRequest, ReaderImage } from '../read/pageImages';
import { buildReaderInput, type EvidenceRegion } from '../read/reader';
import type { RetrievedItem, Retriever } from '../retrieve/retriever';
import {
  TRACE_SCHEMA,
  TRACE_SCHEMA_VERSION,
  type AskTrace,
  type CompressorSetting,
  type StopReason,
  type TraceNode,
  type TraceRetrievedItem,
  type TraceRound,
  type TraceRouting,
  type TraceSettings,
} from '../trace/schema';
import type { Tracer } from '../trace/tracer';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { ChatModel } from '../llm/llm';
import { controlFreshItems, controllerSettingsRecord, resolveAskController, type AskControllerOptions, type ControlledFile } from './controllerStage';

export interface AskDeps {
  retriever: Retriever;
  /** The frozen query encoder: one unit vector per query. */
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  /** Node texts → vectors, normally through the embedding cache. */
  embedTexts: EmbedTexts;
  adapter?: NodeAdapter;
  /** No critic: one round only. */
  critic?: Critic;
  /** Query routing; the no-LLM rule when absent. */
  route?: (question: string, signal?: AbortSignal) => Promise<TraceRouting>;
  /** The LLM behind the critic, reader or router, for the trace. */
  llm?: { id: string; remote: boolean };
  reader: Reader;
  tokens: TokenCounter;
  clock?: Clock;
  tracer?: Tracer;
  index: { root: string; generation: number; items: number };
  newId?: () => string;
  /** The parsed document of an item's file (the index's cache); without it the MAGE controller never runs. */
  loadDocument?: (file: string) => Promise<ParsedDocument>;
  /** The LLM for the controller's evaluator; absent → the deterministic rule. */
  controllerLlm?: ChatModel;
  /** Renders page images and element crops of a PDF (pageImages.ts over the file's bytes); needed for `AskOptions.pageImages`. */
  renderImages?: (file: string, requests: ImageRequest[], signal?: AbortSignal) => Promise<ReaderImage[]>;
}

export interface AskOptions {
  topK: number;
  maxRounds: number;
  branchingFactor: number;
  compressor: CompressorSetting;
  readerTokenCap: number;
  encoderId: string;
  adapterId?: string;
  retrieval: TraceSettings['retrieval'];
  /** The MAGE controller for long PDFs (design §7); needs `AskDeps.loadDocument`. */
  controller?: AskControllerOptions;
  /** Send the controller subgraph's page images and element crops to a multimodal reader (needs `AskDeps.renderImages`). */
  pageImages?: boolean;
}

interface EvidenceEntry {
  retrieved: RetrievedItem;
  round: number;
  kept: RegionNode[];
  scores: Map<string, number>;
}

const PREVIEW = 160;

export async function ask(question: string, options: AskOptions, deps: AskDeps, signal?: AbortSignal): Promise<AskTrace> {
  const clock = deps.clock ?? systemClock;
  const started = clock.now();
  const routing = deps.route ? await deps.route(question, signal) : routeQuestion(question);
  deps.tracer?.emit('ask/route', { ...routing });
  const evidence = new Map<string, EvidenceEntry>();
  const rounds: TraceRound[] = [];
  const previousQueries: string[] = [];
  let query = question;
  let stop: AskTrace['stop'] | undefined;
  const controller = deps.loadDocument ? resolveAskController(options.controller) : undefined;
  const controlledFiles = new Set<string>();
  /** Region id → the opened element it lies in, for every region a controller kept in this question. */
  const elementOf = new Map<string, SubgraphElement>();

  for (let round = 1; round <= options.maxRounds; round++) {
    throwIfCancelled(signal);
    const roundStart = clock.now();
    const seen = new Set(evidence.keys());
    // Ask for k beyond the items already held so a round can add k new ones; the repeated
    // ones are still reported (and not compressed again).
    const retrieval = await deps.retriever.retrieve(query, options.topK + seen.size, {
      modalities: routing.modalities,
      signal,
    });
    const repeated = retrieval.items.filter((r) => seen.has(r.item.id));
    const fresh = retrieval.items.filter((r) => !seen.has(r.item.id)).slice(0, options.topK);
    deps.tracer?.emit('retrieve/items', { round, query, fresh: fresh.map((r) => r.item.id), repeated: repeated.map((r) => r.item.id) });

    const queryVector = await deps.embedQuery(query, signal);
    const scored = new Map<string, { scores: Map<string, number> }>();
    for (const r of fresh) {
      throwIfCancelled(signal);
      const vectors = await nodeVectors(r.item.root, deps.embedTexts, signal);
      scored.set(r.item.id, { scores: scoreNodes(queryVector, vectors, deps.adapter) });
    }
    const scoreOf = (node: RegionNode) => {
      for (const s of scored.values()) {
        const v = s.scores.get(node.id);
        if (v !== undefined) return v;
      }
      return Number.NEGATIVE_INFINITY;
    };

    const { kept, verdicts } = compress(
      fresh.map((r) => r.item),
      options.compressor,
      scoreOf,
      routing.aggregate,
    );
    // Long PDFs: the controller's evidence subgraph replaces CANOPY's kept regions of the file's fresh items.
    const controlledByItem = new Map<string, ControlledFile>();
    if (controller) {
      const stageDeps = {
        loadDocument: deps.loadDocument!,
        embedQuery: deps.embedQuery,
        embedTexts: deps.embedTexts,
        tokens: deps.tokens,
        clock,
        ...(deps.adapter ? { adapter: deps.adapter } : {}),
        ...(deps.controllerLlm ? { llm: deps.controllerLlm } : {}),
        ...(deps.tracer ? { tracer: deps.tracer } : {}),
      };
      const controlled = await controlFreshItems(question, fresh, controlledFiles, controller, routing.aggregate, stageDeps, signal);
      for (const c of controlled) {
        for (const [itemId, nodes] of c.keptByItem) {
          kept.set(itemId, nodes);
          verdicts.delete(itemId);
          controlledByItem.set(itemId, c);
          const s = scored.get(itemId)!.scores;
          for (const [id, v] of c.scores) s.set(id, v);
        }
        for (const [id, element] of c.elements) elementOf.set(id, element);
      }
    }

    const retrievedTrace: TraceRetrievedItem[] = [];
    for (const r of [...fresh, ...repeated].sort((a, b) => a.rank - b.rank)) {
      const isRepeated = seen.has(r.item.id);
      const keptNodes = isRepeated ? evidence.get(r.item.id)!.kept : (kept.get(r.item.id) ?? []);
      const whole = deps.tokens.count(r.item.root.text);
      const keptTokens = keptNodes.reduce((a, n) => a + deps.tokens.count(n.text), 0);
      const entry: TraceRetrievedItem = {
        itemId: r.item.id,
        file: r.item.file,
        title: r.item.title,
        modality: r.item.modality,
        rank: r.rank,
        scores: r.scores,
        repeated: isRepeated,
        keptNodeIds: keptNodes.map((n) => n.id),
        tokens: { whole, kept: keptTokens },
      };
      const controlledFile = isRepeated ? undefined : controlledByItem.get(r.item.id);
      if (controlledFile?.carrierId === r.item.id) entry.controller = controlledFile.trace;
      if (!isRepeated) {
        entry.tree = traceTree(r.item.root, scored.get(r.item.id)!.scores, verdicts.get(r.item.id) ?? [], new Set(keptNodes.map((n) => n.id)), deps.tokens, controlledFile !== undefined);
        evidence.set(r.item.id, { retrieved: r, round, kept: keptNodes, scores: scored.get(r.item.id)!.scores });
      }
      retrievedTrace.push(entry);
    }

    const traceRound: TraceRound = {
      round,
      query,
      routing,
      candidates: retrieval.candidates,
      retrieved: retrievedTrace,
      addedItemIds: fresh.map((r) => r.item.id),
      ms: 0,
    };
    // The topic compass's record (selected topics, weights, per-chunk lift) goes into the round as is.
    if (retrieval.topics) traceRound.topics = retrieval.topics;
    rounds.push(traceRound);

    if (fresh.length === 0) {
      stop = { reason: 'no-new-items', round, note: 'the query retrieved no item that was not already in the evidence' };
      traceRound.ms = clock.now() - roundStart;
      break;
    }
    if (!deps.critic) {
      stop = { reason: 'round-limit', round, note: 'no critic: one round' };
      traceRound.ms = clock.now() - roundStart;
      break;
    }
    const views: EvidenceView[] = [...evidence.values()].map((e) => ({
      itemId: e.retrieved.item.id,
      title: e.retrieved.item.title,
      rank: e.retrieved.rank,
      round: e.round,
      keptTexts: e.kept.map((n) => n.text),
    }));
    const verdict = await deps.critic.judge(
      { question, round, evidence: views, seenTitles: [...evidence.values()].map((e) => e.retrieved.item.title), previousQueries },
      signal,
    );
    traceRound.critic = { ...verdict };
    deps.tracer?.emit('critic/verdict', { round, ...verdict });
    traceRound.ms = clock.now() - roundStart;
    if (verdict.sufficient || !verdict.followUpQuery) {
      stop = { reason: 'critic-sufficient', round, note: 'the critic judged the evidence sufficient; this is a stopping rule, not a guarantee' };
      break;
    }
    if (round === options.maxRounds) {
      stop = { reason: 'round-limit', round, note: `stopped at the round limit (${options.maxRounds}); the critic still found gaps` };
      break;
    }
    previousQueries.push(verdict.followUpQuery);
    query = verdict.followUpQuery;
  }

  // Reader input: evidence in the order the rounds found it, regions in document order; the
  // controller's regions of a file go to the reader as one evidence subgraph (XML).
  const ordered = [...evidence.values()].sort((a, b) => a.round - b.round || a.retrieved.rank - b.retrieved.rank);
  // A node reaches the reader once (a controller carrier may hold a region another item also kept).
  const readerNodes = new Set<string>();
  const regions: EvidenceRegion[] = ordered.flatMap((e) =>
    e.kept.filter((node) => !readerNodes.has(node.id) && readerNodes.add(node.id)).map((node) => ({
      itemId: e.retrieved.item.id,
      itemTitle: e.retrieved.item.title,
      file: e.retrieved.item.file,
      node,
      score: e.scores.get(node.id) ?? 0,
      leafScores: e.scores,
      ...(elementOf.has(node.id) ? { element: elementOf.get(node.id)! } : {}),
    })),
  );
  const readerInput = await withPageImages(regions, options, deps, signal);
  const uncompressed = buildReaderInput(
    ordered.map((e) => ({ itemId: e.retrieved.item.id, itemTitle: e.retrieved.item.title, file: e.retrieved.item.file, node: e.retrieved.item.root, score: 0 })),
    deps.tokens,
    Number.MAX_SAFE_INTEGER,
  );
  throwIfCancelled(signal);
  const answer = await deps.reader.answer(question, readerInput, signal);
  deps.tracer?.emit('read/answer', { mode: answer.mode, citations: answer.citations.length });

  const finalStop: AskTrace['stop'] = stop ?? { reason: 'round-limit' as StopReason, round: rounds.length, note: 'round limit' };
  return {
    schema: TRACE_SCHEMA,
    version: TRACE_SCHEMA_VERSION,
    id: deps.newId?.() ?? `${started.toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
    createdAt: new Date(started).toISOString(),
    question,
    settings: {
      topK: options.topK,
      maxRounds: options.maxRounds,
      branchingFactor: options.branchingFactor,
      compressor: options.compressor,
      critic: deps.critic?.kind ?? 'none',
      reader: deps.reader.mode,
      readerTokenCap: options.readerTokenCap,
      tokenizer: deps.tokens.name,
      encoderId: options.encoderId,
      ...(options.adapterId ? { adapterId: options.adapterId } : {}),
      retrieval: options.retrieval,
      ...(deps.llm ? { llm: deps.llm } : {}),
      ...(controller ? { controller: controllerSettingsRecord(controller, deps.controllerLlm !== undefined) } : {}),
      ...(options.pageImages ? { pageImages: true } : {}),
    },
    index: deps.index,
    rounds,
    stop: finalStop,
    ...traceOutcome(readerInput, uncompressed, answer, evidence.size),
    ms: clock.now() - started,
  };
}

/**
 * The reader input, with the page images and crops its subgraph XML names when
 * `options.pageImages` is on, a renderer is given and the reader takes images. When they cannot
 * be had, the input is text only and `notes` says why; a failed rendering never fails the answer.
 */
async function withPageImages(regions: EvidenceRegion[], options: AskOptions, deps: AskDeps, signal?: AbortSignal): Promise<ReaderInput> {
  const text = () => buildReaderInput(regions, deps.tokens, options.readerTokenCap);
  if (!options.pageImages) return text();
  if (!deps.reader.acceptsImages) return { ...text(), notes: [`page images are on, but the ${deps.reader.mode} reader takes no images: it got the text only`] };
  if (!deps.renderImages) return { ...text(), notes: ['page images are on, but nothing here can render PDF pages: the reader got the text only'] };
  const input = buildReaderInput(regions, deps.tokens, options.readerTokenCap, { images: true });
  const requests = input.imageRequests ?? [];
  if (requests.length === 0) return input;
  try {
    const byFile = new Map<string, ImageRequest[]>();
    for (const r of requests) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
    const rendered = new Map<string, ReaderImage>();
    for (const [file, list] of byFile) for (const image of await deps.renderImages(file, list, signal)) rendered.set(image.ref, image);
    input.images = requests.map((r) => rendered.get(r.ref)!);
    deps.tracer?.emit('read/images', { images: input.images.length, bytes: input.images.reduce((a, i) => a + i.data.length, 0) });
    return input;
  } catch (err) {
    throwIfCancelled(signal);
    return { ...text(), notes: [`page images could not be rendered, so the reader got the text only: ${err instanceof Error ? err.message : String(err)}`] };
  }
}

/** The trace's reader input, answer and totals — the same for an asked and a replayed trace. */
export function traceOutcome(
  readerInput: ReaderInput,
  uncompressed: ReaderInput,
  answer: Answer,
  items: number,
): Pick<AskTrace, 'readerInput' | 'answer' | 'totals'> {
  return {
    readerInput: {
      text: readerInput.text,
      tokens: readerInput.tokens,
      truncated: readerInput.truncated,
      regions: readerInput.regions.map((r) => ({ itemId: r.itemId, nodeId: r.node.id })),
      // The images themselves are not stored: the trace says which were sent and how large they were.
      ...(readerInput.images?.length
        ? { images: readerInput.images.map((i) => ({ ref: i.ref, file: i.file, page: i.page, ...(i.bbox ? { bbox: i.bbox } : {}), width: i.width, height: i.height, bytes: i.data.length })) }
        : {}),
      ...(readerInput.notes?.length ? { notes: readerInput.notes } : {}),
    },
    answer: {
      mode: answer.mode,
      text: answer.text,
      citations: answer.citations,
      ...(answer.model ? { model: answer.model } : {}),
      ...(answer.notes?.length ? { notes: answer.notes } : {}),
      ...(answer.unresolvedMarkers?.length ? { unresolvedMarkers: answer.unresolvedMarkers } : {}),
    },
    totals: {
      evidenceTokens: readerInput.tokens,
      uncompressedTokens: uncompressed.tokens,
      items,
      keptRegions: readerInput.regions.length,
    },
  };
}

/** Applies the chosen compressor to one round's new items. */
export function compress(
  items: Item[],
  setting: CompressorSetting,
  score: (n: RegionNode) => number,
  aggregate: boolean,
): { kept: KeptByItem; verdicts: Map<string, NodeVerdict[]> } {
  const verdicts = new Map<string, NodeVerdict[]>();
  switch (setting.name) {
    case 'canopy': {
      const kept: KeptByItem = new Map();
      const best = Math.max(...items.map((i) => score(i.root)));
      for (const item of items) {
        if (setting.itemGate !== undefined && score(item.root) < best - setting.itemGate) {
          // Item-level gate (a measured extension, off by default): the whole item is dropped.
          kept.set(item.id, []);
          verdicts.set(item.id, [{ nodeId: item.root.id, decision: 'dropped-sibling', rule: 'below-parent', score: score(item.root), depth: 0 }]);
          continue;
        }
        const r = projectItem(item.root, score, { keepTablesWhole: aggregate });
        kept.set(item.id, r.kept);
        verdicts.set(item.id, r.verdicts);
      }
      return { kept, verdicts };
    }
    case 'none':
      return { kept: keepWholeItems(items), verdicts };
    case 'flat':
      return { kept: keepFlatTopM(items, setting.m, score), verdicts };
    case 'threshold':
      return { kept: keepAboveThreshold(items, setting.threshold, score), verdicts };
    default: {
      const unreachable: never = setting;
      throw new Error(`unknown compressor ${JSON.stringify(unreachable)}`);
    }
  }
}

/** `controlled`: the item's file went through the MAGE controller, whose opened regions are the kept ones. */
export function traceTree(root: RegionNode, scores: Map<string, number>, verdicts: NodeVerdict[], kept: Set<string>, tokens: TokenCounter, controlled = false): TraceNode {
  const byId = new Map(verdicts.map((v) => [v.nodeId, v]));
  const gated = verdicts.length === 1 && verdicts[0]!.nodeId === root.id && root.children.length > 0 && verdicts[0]!.decision === 'dropped-sibling';
  const build = (n: RegionNode, insideKept: boolean, parentScore: number | undefined): TraceNode => {
    const v = byId.get(n.id);
    const isKept = kept.has(n.id);
    const score = scores.get(n.id);
    const node: TraceNode = {
      id: n.id,
      kind: n.kind,
      modality: n.modality,
      anchor: n.anchor,
      tokens: tokens.count(n.text),
      // Baselines decide on leaves (flat, threshold) or the root (none) only; CANOPY on every
      // visited node; the controller opens elements (its trace says why). Nodes nobody decided on are 'not-visited'.
      decision: controlled
        ? isKept
          ? 'kept-by-controller'
          : 'not-visited'
        : v
          ? v.decision
          : isKept
            ? 'kept-by-baseline'
            : !insideKept && !gated && verdicts.length === 0 && n.children.length === 0
              ? 'dropped-by-baseline'
              : 'not-visited',
      rule: controlled ? (isKept ? 'controller' : 'none') : v ? v.rule : gated ? 'item-gate' : 'none',
      children: [],
    };
    if (score !== undefined) node.score = score;
    const ps = v?.parentScore ?? parentScore;
    if (ps !== undefined) node.parentScore = ps;
    if (n.children.length === 0) node.text = n.text;
    else node.preview = n.text.length > PREVIEW ? `${n.text.slice(0, PREVIEW)}…` : n.text;
    if (n.header) node.header = n.header;
    node.children = n.children.map((c) => build(c, insideKept || isKept, score));
    return node;
  };
  return build(root, false, undefined);
}

