/**
 * The round engine (design §1, §5, §6): the one loop behind ask, replay and the evaluation.
 *
 * Each round: candidates for the round's query → the fresh ones (not yet in the evidence) get
 * every node scored → compression (CANOPY projection or a baseline) → an optional refinement
 * stage (the MAGE controller for long PDFs) → the critic, whose follow-up query starts the next
 * round. Then the kept evidence becomes the reader input and the reader answers.
 *
 * Three seams decide where things come from, and each caller is a configuration of them:
 *   CandidateSource  live retrieval (ask, the open-pool evaluation), a recorded trace (replay),
 *                    or a fixed set of items (the given-items evaluation);
 *   NodeScorer       the encoder (ask), a trace's recorded scores and the embedding cache
 *                    (replay), or scores computed once per question (the evaluation);
 *   RoundCritic      the rule or LLM critic, or a trace's recorded verdicts (replay).
 * Everything the loop decides goes into the rounds it returns; `ask.ts` and `replay.ts` add the
 * settings and assemble the AskTrace.
 */
import { leavesOf } from '../compress/baselines';
import { compress } from '../compress/compressor';
import type { NodeScoreComponents } from '../compress/hybridScore';
import type { TokenCounter } from '../compress/tokens';
import type { NodeVerdict } from '../compress/projection';
import { evidenceKey, type Critic, type CriticInput, type CriticVerdict, type EvidenceView, type KeptRegion, type ProbeItem } from '../critic/critic';
import { throwIfCancelled } from '../errors';
import { systemClock, type Clock } from '../ports';
import type { SubgraphElement } from '../read/evidenceXml';
import { annotateCitations, buildReaderInput, type Answer, type EvidenceRegion, type Reader, type ReaderInput } from '../read/reader';
import type { Tracer } from '../trace/tracer';
import type { Item, RegionNode } from '../../contracts/region';
import type {
  AskTrace,
  CompressorSetting,
  ScoreComponents,
  StopReason,
  TraceController,
  TraceNode,
  TraceRetrievedItem,
  TraceRound,
  TraceRouting,
  TraceTopics,
} from '../../contracts/trace';
import { traceTree } from './traceTree';

/** What a round asks its candidate source for. */
export interface RoundRequest {
  round: number;
  query: string;
  /** How many ranked candidates the round wants: k beyond the items already held. */
  want: number;
  /** Items already in the evidence (reported again as repeated, never compressed again). */
  held: ReadonlySet<string>;
  routing: TraceRouting;
  /** The named things a follow-up looks for (the critic's `followUpNames`), whose own items come first. */
  names?: readonly string[];
}

/** One ranked candidate; `item` is set when the source has the item at hand (live retrieval). */
export interface RoundCandidate {
  itemId: string;
  /** 0-based rank in this round's ranking. */
  rank: number;
  scores: ScoreComponents;
  item?: Item;
}

export type RoundCandidates =
  | {
      kind: 'ranked';
      /** At most `want`, best first. */
      ranked: RoundCandidate[];
      /** The ranking beyond k for the trace (replays with a larger k need no new retrieval). */
      candidates: TraceRound['candidates'];
      topics?: TraceTopics;
      /** The routing this round ran with, when the source knows it (a recorded round). */
      routing?: TraceRouting;
    }
  /** The source cannot serve this round's query (a replay whose critic asked something new). */
  | { kind: 'diverged'; note: string };

export interface CandidateSource {
  candidates(request: RoundRequest, signal?: AbortSignal): Promise<RoundCandidates>;
  /** For each name, the ids of the items whose title names it, when the source can look titles up (live retrieval). */
  titled?(names: readonly string[], routing: TraceRouting): Promise<Map<string, string[]>>;
  /** What the source reused, recomputed or could not do (replay notes). */
  notes?(): string[];
}

/** An item as the round scored it: its tree (a replay may re-group it) and every node's score. */
export interface ScoredItem {
  item: Item;
  scores: Map<string, number>;
  /** Hybrid node scores: each node's components (the trace shows them; a replay re-weighs them). */
  components?: Map<string, NodeScoreComponents>;
  /** A follow-up round's item: each node's cosine with the user's question (its scores are against the round's query). */
  questionScores?: Map<string, number>;
}

export interface NodeScorer {
  /** Scores every node of each fresh candidate against the round's query, keyed by item id. */
  score(fresh: readonly RoundCandidate[], request: RoundRequest, signal?: AbortSignal): Promise<Map<string, ScoredItem>>;
  notes?(): string[];
}

/** A critic, or a stand-in that may have no verdict to give (a recorded trace without one). */
export interface RoundCritic {
  readonly kind: Critic['kind'];
  judge(input: CriticInput, signal?: AbortSignal): Promise<CriticVerdict | { noVerdict: string }>;
}

/** What a refinement stage hands back for one fresh item: its kept regions replace compression's. */
export interface RefinedItem {
  kept: RegionNode[];
  /** Scores of the kept regions and their leaves, merged into the item's scores. */
  scores: Map<string, number>;
  /** The run's trace, on the one item that carries it. */
  controller?: TraceController;
  /** Why each region that is not kept was left out (see controllerStage.ts, controllerDecisions). */
  decisions?: ReadonlyMap<string, { decision: TraceNode['decision']; rule: TraceNode['rule'] }>;
}

export interface Refinement {
  items: Map<string, RefinedItem>;
  /** Kept region id → the opened element it lies in (the reader gets these as subgraph XML). */
  elements: Map<string, SubgraphElement>;
}

/** Work after a round's compression that may replace kept regions of fresh items (the MAGE controller). */
export interface RefineStage {
  refine(
    input: { question: string; round: number; fresh: ReadonlyArray<{ item: Item; rank: number }>; aggregate: boolean },
    signal?: AbortSignal,
  ): Promise<Refinement>;
}

export interface RoundsConfig {
  question: string;
  topK: number;
  maxRounds: number;
  compressor: CompressorSetting;
  readerTokenCap: number;
  routing: TraceRouting;
  /** The first round's query (default: the question). */
  firstQuery?: string;
}

export interface RoundsDeps {
  source: CandidateSource;
  scorer: NodeScorer;
  /** No critic: one round only. */
  critic?: RoundCritic;
  refine?: RefineStage;
  tokens: TokenCounter;
  tracer?: Tracer;
  clock?: Clock;
}

export interface RoundsResult {
  rounds: TraceRound[];
  stop: AskTrace['stop'];
  /** The kept regions for the reader: evidence in the order the rounds found it, each region once. */
  regions: EvidenceRegion[];
  /** The same evidence uncompressed (each item's root), for the token totals. */
  whole: EvidenceRegion[];
  /** Items in the evidence. */
  items: number;
  /** Each evidence item's kept regions and the compressor's verdicts (in the order the rounds found them). */
  kept: Map<string, RegionNode[]>;
  verdicts: Map<string, NodeVerdict[]>;
  notes: string[];
}

export interface ReadResult {
  readerInput: ReaderInput;
  uncompressed: ReaderInput;
  answer: Answer;
}

interface EvidenceEntry {
  scored: ScoredItem;
  rank: number;
  round: number;
  /** The item's fused retrieval score in the round that found it. */
  retrieval: number;
  kept: RegionNode[];
}

export async function runRounds(config: RoundsConfig, deps: RoundsDeps, signal?: AbortSignal): Promise<RoundsResult> {
  const clock = deps.clock ?? systemClock;
  const evidence = new Map<string, EvidenceEntry>();
  const allVerdicts = new Map<string, NodeVerdict[]>();
  const elementOf = new Map<string, SubgraphElement>();
  const rounds: TraceRound[] = [];
  const previousQueries: string[] = [];
  let query = config.firstQuery ?? config.question;
  let names: readonly string[] = [];
  const sameSearch = (a: { query: string; names?: readonly string[] }, b: { query: string; names?: readonly string[] }) => a.query === b.query && (a.names ?? []).join('\u0000') === (b.names ?? []).join('\u0000');
  let stop: AskTrace['stop'] | undefined;
  // A follow-up query the critic probed: the next round reuses that retrieval.
  let probed: { query: string; names: readonly string[]; got: RoundCandidates } | undefined;

  for (let round = 1; round <= config.maxRounds; round++) {
    throwIfCancelled(signal);
    const roundStart = clock.now();
    const held = new Set(evidence.keys());
    const request: RoundRequest = { round, query, want: config.topK + held.size, held, routing: config.routing, ...(names.length > 0 ? { names } : {}) };
    const got = probed && sameSearch(probed, { query, names }) ? probed.got : await deps.source.candidates(request, signal);
    probed = undefined;
    if (got.kind === 'diverged') {
      stop = { reason: 'replay-diverged', round: round - 1, note: got.note };
      break;
    }
    const routing = got.routing ?? config.routing;
    const ranked = [...got.ranked].sort((a, b) => a.rank - b.rank);
    const repeated = ranked.filter((c) => held.has(c.itemId));
    const fresh = ranked.filter((c) => !held.has(c.itemId)).slice(0, config.topK);
    deps.tracer?.emit('retrieve/items', { round, query, fresh: fresh.map((c) => c.itemId), repeated: repeated.map((c) => c.itemId) });

    const scored = await deps.scorer.score(fresh, { ...request, routing }, signal);
    const scoreOf = (node: RegionNode) => {
      for (const s of scored.values()) {
        const v = s.scores.get(node.id);
        if (v !== undefined) return v;
      }
      return Number.NEGATIVE_INFINITY;
    };
    const freshItems = fresh.map((c) => scored.get(c.itemId)!.item);
    const { kept, verdicts, gate } = compress(freshItems, config.compressor, scoreOf, routing.aggregate, config.question, deps.tokens);
    if (gate) deps.tracer?.emit('compress/item-gate', { round, kept: [...gate].filter(([, g]) => g.kept).map(([id]) => id), dropped: [...gate].filter(([, g]) => !g.kept).map(([id]) => id) });

    const refinement = deps.refine
      ? await deps.refine.refine({ question: config.question, round, fresh: fresh.map((c) => ({ item: scored.get(c.itemId)!.item, rank: c.rank })), aggregate: routing.aggregate }, signal)
      : undefined;
    for (const [itemId, refined] of refinement?.items ?? []) {
      kept.set(itemId, refined.kept);
      verdicts.delete(itemId);
      const s = scored.get(itemId)!.scores;
      for (const [id, v] of refined.scores) s.set(id, v);
    }
    for (const [id, element] of refinement?.elements ?? []) elementOf.set(id, element);

    const retrieved: TraceRetrievedItem[] = [];
    for (const c of [...fresh, ...repeated].sort((a, b) => a.rank - b.rank)) {
      const isRepeated = held.has(c.itemId);
      const s = isRepeated ? evidence.get(c.itemId)!.scored : scored.get(c.itemId)!;
      const keptNodes = isRepeated ? evidence.get(c.itemId)!.kept : (kept.get(c.itemId) ?? []);
      const entry: TraceRetrievedItem = {
        itemId: c.itemId,
        file: s.item.file,
        title: s.item.title,
        modality: s.item.modality,
        rank: c.rank,
        scores: c.scores,
        repeated: isRepeated,
        keptNodeIds: keptNodes.map((n) => n.id),
        tokens: { whole: deps.tokens.count(s.item.root.text), kept: keptNodes.reduce((a, n) => a + deps.tokens.count(n.text), 0) },
      };
      if (!isRepeated) {
        allVerdicts.set(c.itemId, verdicts.get(c.itemId) ?? []);
        const refined = refinement?.items.get(c.itemId);
        if (refined?.controller) entry.controller = refined.controller;
        const g = gate?.get(c.itemId);
        if (g) entry.gate = { kept: g.kept, why: g.why };
        entry.tree = traceTree(s.item.root, s.scores, verdicts.get(c.itemId) ?? ([] as NodeVerdict[]), new Set(keptNodes.map((n) => n.id)), deps.tokens, refined ? (refined.decisions ?? new Map()) : undefined, s.components, s.questionScores);
        if (s.item.traits) entry.traits = { ...s.item.traits };
        evidence.set(c.itemId, { scored: s, rank: c.rank, round, retrieval: c.scores.fused, kept: keptNodes });
      }
      retrieved.push(entry);
    }

    const traceRound: TraceRound = {
      round,
      query,
      routing,
      candidates: got.candidates,
      retrieved,
      addedItemIds: fresh.map((c) => c.itemId),
      ms: 0,
    };
    // The topic compass's record (selected topics, weights, per-chunk lift) goes into the round as is.
    if (got.topics) traceRound.topics = got.topics;
    rounds.push(traceRound);

    const endRound = (reason: StopReason, note: string) => {
      stop = { reason, round, note };
      traceRound.ms = clock.now() - roundStart;
    };
    if (fresh.length === 0) {
      endRound('no-new-items', 'the query retrieved no item that was not already in the evidence');
      break;
    }
    if (!deps.critic) {
      endRound('round-limit', 'no critic: one round');
      break;
    }
    const views: EvidenceView[] = [...evidence.entries()].map(([itemId, e]) => ({
      itemId,
      title: e.scored.item.title,
      rank: e.rank,
      round: e.round,
      keptTexts: e.kept.map((n) => n.text),
      keptLeaves: e.kept.flatMap((n) => leavesOf(n).map((l) => (l.header ? `${l.header}\n${l.text}` : l.text))),
      regions: e.kept.map((node) => keptRegion(itemId, e, node, elementOf.get(node.id))),
    }));
    // The critic may look at what a follow-up would retrieve (the next round's own request) before
    // it asks for one; only a source that has the items at hand (live retrieval) can show them.
    const probe =
      round < config.maxRounds
        ? async (q: string, sig?: AbortSignal, n: readonly string[] = []): Promise<ProbeItem[] | undefined> => {
            const next: RoundRequest = { round: round + 1, query: q, want: config.topK + evidence.size, held: new Set(evidence.keys()), routing: config.routing, ...(n.length > 0 ? { names: n } : {}) };
            const ahead = await deps.source.candidates(next, sig);
            if (ahead.kind !== 'ranked') return undefined;
            const items = ahead.ranked.filter((c) => !evidence.has(c.itemId)).slice(0, config.topK);
            if (items.some((c) => !c.item)) return undefined;
            probed = { query: q, names: n, got: ahead };
            return items.map((c) => ({ itemId: c.itemId, title: c.item!.title, leaves: leavesOf(c.item!.root).map((l) => (l.header ? `${l.header}\n${l.text}` : l.text)) }));
          }
        : undefined;
    // Which named things have an item of their own that no round retrieved (a bridge's own item).
    const titled = deps.source.titled;
    const ownItems =
      round < config.maxRounds && titled
        ? async (names: readonly string[]): Promise<Set<string>> => {
            const found = await titled.call(deps.source, names, config.routing);
            return new Set([...found].filter(([, ids]) => ids.length > 0 && ids.every((id) => !evidence.has(id))).map(([name]) => name));
          }
        : undefined;
    const judged = await deps.critic.judge(
      { question: config.question, round, evidence: views, seenTitles: views.map((v) => v.title), previousQueries, ...(probe ? { probe } : {}), ...(ownItems ? { ownItems } : {}) },
      signal,
    );
    if ('noVerdict' in judged) {
      endRound('round-limit', judged.noVerdict);
      break;
    }
    traceRound.critic = { ...judged, details: { ...judged.details, evidenceKey: evidenceKey(views) } };
    deps.tracer?.emit('critic/verdict', { round, ...judged });
    traceRound.ms = clock.now() - roundStart;
    if (judged.sufficient) {
      stop = { reason: 'critic-sufficient', round, note: 'the critic judged the evidence sufficient; this is a stopping rule, not a guarantee' };
      break;
    }
    if (!judged.followUpQuery) {
      const what = judged.missing.length > 0 ? `: ${judged.missing.slice(0, 8).join(', ')}` : '';
      const why = typeof judged.details?.noNewQuery === 'string' ? judged.details.noNewQuery : 'it had no query it had not already asked';
      stop = { reason: 'no-follow-up', round, note: `the critic found the evidence insufficient${what}, but ${why}` };
      break;
    }
    if (round === config.maxRounds) {
      stop = { reason: 'round-limit', round, note: `stopped at the round limit (${config.maxRounds}); the critic still found gaps` };
      break;
    }
    previousQueries.push(judged.followUpQuery);
    query = judged.followUpQuery;
    names = judged.followUpNames ?? [];
  }

  // Evidence in the order the rounds found it, regions in document order; a node reaches the
  // reader once (a controller carrier may hold a region another item also kept).
  const ordered = [...evidence.entries()].sort(([, a], [, b]) => a.round - b.round || a.rank - b.rank);
  const sent = new Set<string>();
  const regions: EvidenceRegion[] = ordered.flatMap(([itemId, e]) =>
    e.kept
      .filter((node) => !sent.has(node.id) && sent.add(node.id))
      .map((node) => {
        const element = elementOf.get(node.id);
        return { ...keptRegion(itemId, e, node, element), ...(element ? { element } : {}) };
      }),
  );
  return {
    rounds,
    stop: stop ?? { reason: 'round-limit', round: rounds.length, note: 'round limit' },
    regions,
    whole: ordered.map(([itemId, e]) => ({ itemId, itemTitle: e.scored.item.title, file: e.scored.item.file, node: e.scored.item.root, score: 0 })),
    items: evidence.size,
    kept: new Map(ordered.map(([itemId, e]) => [itemId, e.kept])),
    verdicts: new Map(ordered.map(([itemId]) => [itemId, allVerdicts.get(itemId) ?? []])),
    notes: [...(deps.source.notes?.() ?? []), ...(deps.scorer.notes?.() ?? [])],
  };
}

/**
 * A kept node of an evidence item as the reader and a learned critic read it (critic/critic.ts
 * `KeptRegion`). A region the MAGE controller kept (`element`, the opened element it lies in) was
 * chosen by the controller's own page grounding inside its document, not by retrieval's rank: it
 * goes to the item it lies in or — a page retrieval did not return — to the file's best-ranked
 * item, whose rank, round and score would then say nothing of it. Such a region is read as a
 * given document's is (as the reader model was trained on filings: the controller inside each
 * one), without an item rank, round or retrieval score, and with its table's lead-in.
 */
function keptRegion(itemId: string, e: EvidenceEntry, node: RegionNode, element?: SubgraphElement): KeptRegion {
  const item = e.scored.item;
  const retrieval = element ? {} : { rank: e.rank, round: e.round, retrieval: e.retrieval };
  return {
    itemId,
    itemTitle: item.title,
    file: item.file,
    node,
    score: e.scored.scores.get(node.id) ?? 0,
    leafScores: e.scored.scores,
    ...(e.scored.components ? { components: e.scored.components } : {}),
    ...(e.scored.questionScores ? { questionScores: e.scored.questionScores } : {}),
    ...retrieval,
    ...(item.traits ? { document: item.traits } : {}),
    ...(element?.leadIn ? { leadIn: element.leadIn } : {}),
  };
}

/**
 * The reader's turn: the kept regions as the reader input (numbered blocks under the token cap,
 * or `readerInput`'s own rendering), the uncompressed total beside it, and the answer.
 */
export async function readEvidence(
  question: string,
  result: Pick<RoundsResult, 'regions' | 'whole'>,
  deps: {
    reader: Reader;
    tokens: TokenCounter;
    cap: number;
    readerInput?: (regions: EvidenceRegion[], signal?: AbortSignal) => Promise<ReaderInput>;
    tracer?: Tracer;
    /** Files whose last good version the index serves (they no longer parse): their citations are flagged `stale`. */
    staleFiles?: ReadonlySet<string>;
  },
  signal?: AbortSignal,
): Promise<ReadResult> {
  const readerInput = deps.readerInput ? await deps.readerInput(result.regions, signal) : buildReaderInput(result.regions, deps.tokens, deps.cap);
  const uncompressed = buildReaderInput(result.whole, deps.tokens, Number.MAX_SAFE_INTEGER);
  throwIfCancelled(signal);
  const answer = annotateCitations(await deps.reader.answer(question, readerInput, signal), readerInput, deps.staleFiles);
  deps.tracer?.emit('read/answer', { mode: answer.mode, citations: answer.citations.length, stale: answer.citations.filter((c) => c.stale).length });
  return { readerInput, uncompressed, answer };
}

/** A critic that always has a verdict, as a round critic. */
export function roundCritic(critic: Critic): RoundCritic {
  return { kind: critic.kind, judge: (input, signal) => critic.judge(input, signal) };
}
