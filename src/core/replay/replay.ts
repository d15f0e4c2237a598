/**
 * Replay (design §9): re-runs compression, the critic and the reader over a trace's own cached
 * scores with other settings — branching factor B, k, rounds, compressor, critic — and returns a
 * new trace that says what was replayed. Nothing is re-embedded: the encoder is never called.
 *
 * What each change needs:
 *  - compressor, critic, fewer rounds, smaller k: the trace alone. Every node of a recorded tree
 *    carries its score against the round's query, and inner-node texts are rebuilt from the
 *    leaves exactly as the hierarchy builder joins them.
 *  - another B: the tree is un-grouped and re-grouped (the hierarchy builder's own balanced
 *    grouping). A group's vector is the normalised sum of its children's vectors (nodeScorer),
 *    so its score is Σ child scores / ‖Σ child vectors‖ — the children's recorded scores plus
 *    their vectors from the embedding cache, no query vector needed. Refused with an adapter
 *    (the identity does not hold after a non-linear map).
 *  - a larger k, or an item first compressed in another round than recorded: the item from the
 *    index, its node vectors from the embedding cache and the round's query vector, which must
 *    be cached too (the workspace remembers the queries it encoded).
 *  - more rounds than recorded, or a critic whose follow-up query differs from the recorded
 *    one: a new retrieval, which a replay never makes; it stops with `replay-diverged`.
 * The tree builder below mirrors the ask pipeline's; a unit test proves that replaying with the
 * recorded settings reproduces the recorded trace.
 */
import { compress, traceOutcome, traceTree } from '../ask/pipeline';
import { nodeVectors, scoreNodes } from '../compress/nodeScorer';
import type { TokenCounter } from '../compress/tokens';
import type { Critic, EvidenceView } from '../critic/critic';
import { RuleCritic } from '../critic/ruleCritic';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { l2NormalizeInPlace } from '../encode/encoder';
import { groupBalanced, joinChildrenText } from '../ingest/hierarchy';
import type { DraftNode } from '../ingest/parsedDocument';
import type { Item, RegionNode } from '../model/region';
import { systemClock, type Clock } from '../ports';
import { ExtractiveReader } from '../read/extractiveReader';
import { buildReaderInput, type EvidenceRegion, type Reader } from '../read/reader';
import {
  TRACE_SCHEMA,
  TRACE_SCHEMA_VERSION,
  type AskTrace,
  type CompressorSetting,
  type ScoreComponents,
  type TraceNode,
  type TraceReplay,
  type TraceRetrievedItem,
  type TraceRound,
  type TraceSettings,
} from '../trace/schema';

/** The settings a replay may change; absent fields keep the trace's. */
export interface ReplaySettings {
  topK?: number;
  maxRounds?: number;
  branchingFactor?: number;
  compressor?: CompressorSetting;
  /** 'recorded' reuses each round's recorded verdict (the only choice for an LLM critic's trace). */
  critic?: 'rule' | 'none' | 'recorded';
}

/** Where a replay reads what the trace does not hold; implemented by CanopyWorkspace. */
export interface ReplaySource {
  /** The encoder whose vectors the cache holds; must be the trace's. */
  readonly encoderId: string;
  /** An item as indexed. */
  item(itemId: string): Promise<Item>;
  /** Vectors the embedding cache already holds, in order; undefined where it holds none. Never encodes. */
  cachedVectors(texts: readonly string[]): Promise<Array<Float32Array | undefined>>;
  /** The vector of a query encoded earlier, if it is still known; never encodes. */
  queryVector(query: string): Promise<Float32Array | undefined>;
}

export interface ReplayDeps {
  tokens: TokenCounter;
  source?: ReplaySource;
  /** The reader; the extractive reader when absent (a replay never calls an LLM). */
  reader?: Reader;
  /** The critic for critic: 'rule'; the rule critic when absent. */
  critic?: Critic;
  clock?: Clock;
  newId?: () => string;
}

/** What one item contributes to a replayed round: its tree (ids of the replayed grouping) and scores. */
interface ScoredItem {
  item: Item;
  scores: Map<string, number>;
}

interface EvidenceEntry {
  scored: ScoredItem;
  itemId: string;
  title: string;
  file: string;
  rank: number;
  round: number;
  kept: RegionNode[];
}


function fail(message: string): never {
  throw new CanopyError(ErrorCodes.badInput, message);
}

function checkInt(name: string, v: number | undefined, min: number, max: number): void {
  if (v === undefined) return;
  if (!Number.isSafeInteger(v) || v < min || v > max) fail(`replay: ${name} must be an integer from ${min} to ${max} (got ${String(v)})`);
}

function checkCompressor(c: CompressorSetting | undefined): void {
  if (!c) return;
  switch (c.name) {
    case 'none':
      return;
    case 'flat':
      checkInt('flat m', c.m, 1, 10_000);
      return;
    case 'threshold':
      if (!Number.isFinite(c.threshold) || c.threshold < -1 || c.threshold > 1) fail('replay: the threshold must be a cosine between -1 and 1');
      return;
    case 'canopy':
      if (c.itemGate !== undefined && (!Number.isFinite(c.itemGate) || c.itemGate < 0 || c.itemGate > 2)) fail('replay: the item gate must be between 0 and 2');
      return;
    default: {
      const unknown: never = c;
      fail(`replay: unknown compressor ${JSON.stringify(unknown)}`);
    }
  }
}

/** A trace node back into a region: inner texts rebuilt from the leaves the way the hierarchy joins them. */
export function regionFromTrace(n: TraceNode): RegionNode {
  const children = n.children.map(regionFromTrace);
  const node: RegionNode = {
    id: n.id,
    kind: n.kind,
    modality: n.modality,
    anchor: n.anchor,
    text: children.length > 0 ? joinChildrenText(children) : (n.text ?? ''),
    children,
  };
  if (n.header !== undefined) node.header = n.header;
  return node;
}

function traceScores(n: TraceNode, out = new Map<string, number>()): Map<string, number> {
  if (n.score !== undefined) out.set(n.id, n.score);
  for (const c of n.children) traceScores(c, out);
  return out;
}

const encodedText = (n: RegionNode) => (n.header ? `${n.header}\n${n.text}` : n.text);

/** Replaces every `group` node by its children, recursively (a copy; ids of real regions kept). */
function ungroup(n: RegionNode): RegionNode {
  const flat = (children: RegionNode[]): RegionNode[] => children.flatMap((c) => (c.kind === 'group' ? flat(c.children) : [ungroup(c)]));
  return { ...n, children: flat(n.children) };
}

/**
 * Re-groups an item's tree with branching factor b and numbers it `${itemId}/${path}` as the
 * hierarchy builder does. Returns the new root and, for every real (non-group) node, its old id.
 */
export function regroup(root: RegionNode, itemId: string, b: number): { root: RegionNode; oldIds: Map<string, string> } {
  const bare = ungroup(root);
  // groupBalanced works on draft nodes; real regions keep their object identity (and old id).
  const oldIdOf = new WeakMap<object, string>();
  const mark = (n: RegionNode) => {
    oldIdOf.set(n, n.id);
    n.children.forEach(mark);
  };
  mark(bare);
  groupBalanced(bare as unknown as DraftNode, b);
  const oldIds = new Map<string, string>();
  const number = (n: DraftNode | RegionNode, path: string): RegionNode => {
    const id = `${itemId}/${path}`;
    const old = oldIdOf.get(n);
    if (old !== undefined) oldIds.set(id, old);
    const region: RegionNode = {
      id,
      kind: n.kind,
      modality: n.modality,
      text: n.text,
      anchor: n.anchor,
      children: n.children.map((c, i) => number(c, `${path}.${i}`)),
    };
    for (const key of ['context', 'header', 'cells', 'level', 'ref'] as const) {
      const v = (n as RegionNode)[key];
      if (v !== undefined) (region as unknown as Record<string, unknown>)[key] = v;
    }
    return region;
  };
  return { root: number(bare, '0'), oldIds };
}

function sumNorm(vectors: Float32Array[]): { sum: Float32Array; norm: number } {
  const sum = new Float32Array(vectors[0]!.length);
  for (const v of vectors) for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + v[i]!;
  let s = 0;
  for (let i = 0; i < sum.length; i++) s += sum[i]! * sum[i]!;
  return { sum, norm: Math.sqrt(s) };
}

export async function replayTrace(trace: AskTrace, settings: ReplaySettings, deps: ReplayDeps, signal?: AbortSignal): Promise<AskTrace> {
  checkInt('k', settings.topK, 1, 100);
  checkInt('rounds', settings.maxRounds, 1, 10);
  checkInt('B', settings.branchingFactor, 2, 4);
  checkCompressor(settings.compressor);
  if (settings.critic !== undefined && !['rule', 'none', 'recorded'].includes(settings.critic)) fail(`replay: unknown critic ${JSON.stringify(settings.critic)}`);

  const clock = deps.clock ?? systemClock;
  const started = clock.now();
  const recorded = trace.settings;
  const topK = settings.topK ?? recorded.topK;
  const maxRounds = settings.maxRounds ?? recorded.maxRounds;
  const b = settings.branchingFactor ?? recorded.branchingFactor;
  const compressor = settings.compressor ?? recorded.compressor;
  const criticMode = settings.critic ?? (recorded.critic === 'none' ? 'none' : recorded.critic === 'rule' ? 'rule' : 'recorded');
  const critic: Critic | undefined = criticMode === 'rule' ? (deps.critic ?? new RuleCritic()) : undefined;
  const reader = deps.reader ?? new ExtractiveReader();
  const notes: string[] = [];
  const regrouping = b !== recorded.branchingFactor;
  if (regrouping && recorded.adapterId) {
    fail(`replay: B cannot change for a trace scored through adapter ${recorded.adapterId}: group scores would need new vectors`);
  }
  if (criticMode === 'recorded' && recorded.critic === 'llm') notes.push('the LLM critic’s recorded verdicts are reused; they judged the recorded evidence');
  if (trace.answer.mode === 'llm' && reader.mode === 'extractive') notes.push('the answer is re-read by the extractive reader; no LLM is called in a replay');
  if (regrouping) notes.push(`trees re-grouped with B = ${b}; group scores from the cached node vectors`);

  const source = deps.source;
  const needSource = (why: string): ReplaySource => {
    if (!source) fail(`replay: ${why} needs the workspace index and embedding cache, and none was given`);
    if (source.encoderId !== recorded.encoderId) {
      fail(`replay: ${why} needs vectors of encoder ${recorded.encoderId}, but the index now uses ${source.encoderId}`);
    }
    return source;
  };

  /** Cached vectors of every real node of a tree; fails naming the first text that is not cached. */
  const cachedNodeVectors = async (root: RegionNode, why: string): Promise<Map<string, Float32Array>> => {
    const src = needSource(why);
    return nodeVectors(root, async (texts) => {
      const got = await src.cachedVectors(texts);
      return got.map((v, i) => {
        if (!v) {
          throw new CanopyError(
            ErrorCodes.notFound,
            `replay: ${why} needs the vector of “${texts[i]!.slice(0, 60)}” from the embedding cache, which does not hold it (re-index the workspace)`,
          );
        }
        return v;
      });
    });
  };

  /** The recorded tree of an item, as scored in a round (same query), re-grouped when B changes. */
  const fromRecord = async (entry: TraceRetrievedItem): Promise<ScoredItem> => {
    const tree = entry.tree!;
    const root = regionFromTrace(tree);
    const scores = traceScores(tree);
    const item: Item = { id: entry.itemId, file: entry.file, title: entry.title, modality: entry.modality, root };
    if (!regrouping) return { item, scores };
    const why = `B = ${b}`;
    const { root: grouped, oldIds } = regroup(root, entry.itemId, b);
    const real: RegionNode[] = [];
    const collect = (n: RegionNode) => {
      if (n.kind !== 'group') real.push(n);
      n.children.forEach(collect);
    };
    collect(grouped);
    const vectors = await needSource(why).cachedVectors(real.map(encodedText));
    const vectorOf = new Map<string, Float32Array>();
    real.forEach((n, i) => {
      const v = vectors[i];
      if (!v) throw new CanopyError(ErrorCodes.notFound, `replay: ${why} needs the vector of “${encodedText(n).slice(0, 60)}” from the embedding cache, which does not hold it (re-index the workspace)`);
      vectorOf.set(n.id, v);
    });
    const newScores = new Map<string, number>();
    const visit = (n: RegionNode): { vector: Float32Array; score: number } => {
      const kids = n.children.map(visit);
      if (n.kind !== 'group') {
        const score = scores.get(oldIds.get(n.id)!);
        if (score === undefined) fail(`replay: node ${oldIds.get(n.id)} of the trace has no score`);
        newScores.set(n.id, score);
        return { vector: vectorOf.get(n.id)!, score };
      }
      // q·normalize(Σv) = Σ(q·v) / ‖Σv‖ — the group's score from its children's, exactly.
      const { sum, norm } = sumNorm(kids.map((k) => k.vector));
      const score = norm > 0 ? kids.reduce((a, k) => a + k.score, 0) / norm : 0;
      newScores.set(n.id, score);
      return { vector: l2NormalizeInPlace(sum), score };
    };
    visit(grouped);
    return { item: { ...item, root: grouped }, scores: newScores };
  };

  /** An item the trace never scored against this round's query: index + cache + cached query vector. */
  const fromIndex = async (itemId: string, query: string, round: number): Promise<ScoredItem> => {
    const why = `round ${round} compressing ${itemId}, which the trace never scored against “${query.slice(0, 60)}”,`;
    const src = needSource(why);
    const q = await src.queryVector(query);
    if (!q) fail(`replay: ${why} needs that query's vector, which is no longer cached (ask the question again in this window)`);
    const indexed = await src.item(itemId);
    const { root } = regroup(indexed.root, indexed.id, b);
    const vectors = await cachedNodeVectors(root, why);
    return { item: { ...indexed, root }, scores: scoreNodes(q, vectors) };
  };

  const evidence = new Map<string, EvidenceEntry>();
  const rounds: TraceRound[] = [];
  const previousQueries: string[] = [];
  let query = trace.rounds[0]?.query ?? trace.question;
  let stop: AskTrace['stop'] | undefined;
  let fromIndexCount = 0;

  for (let round = 1; round <= maxRounds; round++) {
    throwIfCancelled(signal);
    const roundStart = clock.now();
    const rec = trace.rounds[round - 1];
    if (!rec || rec.query !== query) {
      stop = {
        reason: 'replay-diverged',
        round: round - 1,
        note: `round ${round} would retrieve for “${query}”, which the recorded trace never ran; a replay reuses recorded retrievals only — ask again for a new retrieval`,
      };
      break;
    }
    const seen = new Set(evidence.keys());
    // The same request the pipeline makes: k beyond the items already held.
    const want = topK + seen.size;
    const ranking = rec.candidates;
    if (want > ranking.length && ranking.length >= 50) notes.push(`round ${round}: only the ${ranking.length} recorded candidates could be considered`);
    const top = ranking.slice(0, want).map((c, rank) => ({ ...c, rank }));
    const repeated = top.filter((c) => seen.has(c.itemId));
    const fresh = top.filter((c) => !seen.has(c.itemId)).slice(0, topK);

    const scored = new Map<string, ScoredItem>();
    for (const c of fresh) {
      throwIfCancelled(signal);
      const rec1 = rec.retrieved.find((r) => r.itemId === c.itemId && !r.repeated && r.tree);
      if (rec1) scored.set(c.itemId, await fromRecord(rec1));
      else {
        scored.set(c.itemId, await fromIndex(c.itemId, query, round));
        fromIndexCount++;
      }
    }
    const scoreOf = (node: RegionNode) => {
      for (const s of scored.values()) {
        const v = s.scores.get(node.id);
        if (v !== undefined) return v;
      }
      return Number.NEGATIVE_INFINITY;
    };
    const { kept, verdicts } = compress(
      fresh.map((c) => scored.get(c.itemId)!.item),
      compressor,
      scoreOf,
      rec.routing.aggregate,
    );

    const retrievedTrace: TraceRetrievedItem[] = [];
    const scoresOf = new Map<string, ScoreComponents>(top.map((c) => [c.itemId, c.scores]));
    for (const c of [...fresh, ...repeated].sort((x, y) => x.rank - y.rank)) {
      const isRepeated = seen.has(c.itemId);
      const held = evidence.get(c.itemId);
      const s = isRepeated ? held!.scored : scored.get(c.itemId)!;
      const keptNodes = isRepeated ? held!.kept : (kept.get(c.itemId) ?? []);
      const entry: TraceRetrievedItem = {
        itemId: c.itemId,
        file: s.item.file,
        title: s.item.title,
        modality: s.item.modality,
        rank: c.rank,
        scores: scoresOf.get(c.itemId)!,
        repeated: isRepeated,
        keptNodeIds: keptNodes.map((n) => n.id),
        tokens: { whole: deps.tokens.count(s.item.root.text), kept: keptNodes.reduce((a, n) => a + deps.tokens.count(n.text), 0) },
      };
      if (!isRepeated) {
        entry.tree = traceTree(s.item.root, s.scores, verdicts.get(c.itemId) ?? [], new Set(keptNodes.map((n) => n.id)), deps.tokens);
        evidence.set(c.itemId, { scored: s, itemId: c.itemId, title: s.item.title, file: s.item.file, rank: c.rank, round, kept: keptNodes });
      }
      retrievedTrace.push(entry);
    }

    const traceRound: TraceRound = {
      round,
      query,
      routing: rec.routing,
      candidates: rec.candidates,
      retrieved: retrievedTrace,
      addedItemIds: fresh.map((c) => c.itemId),
      ...(rec.topics ? { topics: rec.topics } : {}),
      ms: 0,
    };
    rounds.push(traceRound);

    if (fresh.length === 0) {
      stop = { reason: 'no-new-items', round, note: 'the query retrieved no item that was not already in the evidence' };
      traceRound.ms = clock.now() - roundStart;
      break;
    }
    let verdict: TraceRound['critic'];
    if (criticMode === 'none') {
      stop = { reason: 'round-limit', round, note: 'no critic: one round' };
      traceRound.ms = clock.now() - roundStart;
      break;
    } else if (criticMode === 'recorded') {
      verdict = rec.critic;
      if (!verdict) {
        stop = { reason: 'round-limit', round, note: 'the recorded trace has no critic verdict for this round' };
        traceRound.ms = clock.now() - roundStart;
        break;
      }
    } else {
      const views: EvidenceView[] = [...evidence.values()].map((e) => ({
        itemId: e.itemId,
        title: e.title,
        rank: e.rank,
        round: e.round,
        keptTexts: e.kept.map((n) => n.text),
      }));
      verdict = { ...(await critic!.judge({ question: trace.question, round, evidence: views, seenTitles: [...evidence.values()].map((e) => e.title), previousQueries }, signal)) };
    }
    traceRound.critic = verdict;
    traceRound.ms = clock.now() - roundStart;
    if (verdict.sufficient || !verdict.followUpQuery) {
      stop = { reason: 'critic-sufficient', round, note: 'the critic judged the evidence sufficient; this is a stopping rule, not a guarantee' };
      break;
    }
    if (round === maxRounds) {
      stop = { reason: 'round-limit', round, note: `stopped at the round limit (${maxRounds}); the critic still found gaps` };
      break;
    }
    previousQueries.push(verdict.followUpQuery);
    query = verdict.followUpQuery;
  }
  if (fromIndexCount > 0) notes.push(`${fromIndexCount} item(s) scored from the index and the embedding cache`);
  if (trace.rounds.some((r) => r.retrieved.some((i) => i.controller))) notes.push('controller runs are not replayed');

  // Reader input: evidence in the order the rounds found it, regions in document order.
  const ordered = [...evidence.values()].sort((x, y) => x.round - y.round || x.rank - y.rank);
  const regions: EvidenceRegion[] = ordered.flatMap((e) =>
    e.kept.map((node) => ({ itemId: e.itemId, itemTitle: e.title, file: e.file, node, score: e.scored.scores.get(node.id) ?? 0, leafScores: e.scored.scores })),
  );
  const readerInput = buildReaderInput(regions, deps.tokens, recorded.readerTokenCap);
  const uncompressed = buildReaderInput(
    ordered.map((e) => ({ itemId: e.itemId, itemTitle: e.title, file: e.file, node: e.scored.item.root, score: 0 })),
    deps.tokens,
    Number.MAX_SAFE_INTEGER,
  );
  throwIfCancelled(signal);
  const answer = await reader.answer(trace.question, readerInput, signal);

  const changed: TraceReplay['changed'] = {};
  if (topK !== recorded.topK) changed.topK = topK;
  if (maxRounds !== recorded.maxRounds) changed.maxRounds = maxRounds;
  if (b !== recorded.branchingFactor) changed.branchingFactor = b;
  if (JSON.stringify(compressor) !== JSON.stringify(recorded.compressor)) changed.compressor = compressor;
  const criticSetting: TraceSettings['critic'] = criticMode === 'recorded' ? recorded.critic : criticMode;
  if (criticSetting !== recorded.critic) changed.critic = criticSetting;

  return {
    schema: TRACE_SCHEMA,
    version: TRACE_SCHEMA_VERSION,
    id: deps.newId?.() ?? `${started.toString(36)}-replay-${Math.random().toString(36).slice(2, 8)}`,
    createdAt: new Date(started).toISOString(),
    question: trace.question,
    settings: { ...recorded, topK, maxRounds, branchingFactor: b, compressor, critic: criticSetting, reader: reader.mode },
    index: trace.index,
    rounds,
    stop: stop ?? { reason: 'round-limit', round: rounds.length, note: 'round limit' },
    ...traceOutcome(readerInput, uncompressed, answer, evidence.size),
    ms: clock.now() - started,
    replay: { of: trace.id, changed, notes },
  };
}

