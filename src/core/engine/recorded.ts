/**
 * The round engine's recorded seams, as a replay (design §9) uses them: candidates from a trace's
 * recorded rankings, node scores from its recorded trees (re-grouped for another B from the
 * embedding cache), and its recorded critic verdicts. Nothing here calls the encoder.
 *
 * What each change of settings needs:
 *  - compressor, critic, fewer rounds, smaller k: the trace alone. Every node of a recorded tree
 *    carries its score against the round's query, and inner-node texts are rebuilt from the
 *    leaves exactly as the hierarchy builder joins them.
 *  - another B: the tree is un-grouped and re-grouped (the hierarchy builder's own balanced
 *    grouping). A real region's vector does not depend on the grouping and a group's vector is
 *    the normalised sum of its children's vectors (nodeVectors), so a real region keeps its
 *    recorded score and a group's score is Σ child scores / ‖Σ child vectors‖ — the children's
 *    scores plus their vectors derived from the leaves in the embedding cache, no query vector
 *    needed. Refused with an adapter
 *    (the identity does not hold after a non-linear map).
 *  - a larger k, or an item first compressed in another round than recorded: the item from the
 *    index, its node vectors from the embedding cache and the round's query vector, which must
 *    be cached too (the workspace remembers the queries it encoded).
 *  - more rounds than recorded, or a critic whose follow-up query differs from the recorded
 *    one: a new retrieval, which a replay never makes; the source reports the divergence.
 */
import { hybridRound, type NodeScoreWeights } from '../compress/hybridScore';
import { scoreNodes } from '../compress/nodeScorer';
import { l2NormalizeInPlace } from '../encode/encoder';
import { nodeVectors } from '../encode/nodeVectors';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { groupBalanced, joinChildrenText } from '../ingest/hierarchy';
import type { DraftNode } from '../ingest/parsedDocument';
import type { Item, RegionNode } from '../../contracts/region';
import type { AskTrace, TraceNode, TraceRetrievedItem } from '../../contracts/trace';
import type { CandidateSource, NodeScorer, RoundCritic, ScoredItem } from './rounds';

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

function fail(message: string): never {
  throw new CanopyError(ErrorCodes.badInput, message);
}

/** The trace's rounds as candidates: round n is served only for the query round n recorded. */
export function recordedCandidates(trace: AskTrace): CandidateSource {
  const notes: string[] = [];
  return {
    async candidates({ round, query, want }) {
      const rec = trace.rounds[round - 1];
      if (!rec || rec.query !== query) {
        return {
          kind: 'diverged',
          note: `round ${round} would retrieve for “${query}”, which the recorded trace never ran; a replay reuses recorded retrievals only — ask again for a new retrieval`,
        };
      }
      const ranking = rec.candidates;
      if (want > ranking.length && ranking.length >= 50) notes.push(`round ${round}: only the ${ranking.length} recorded candidates could be considered`);
      return {
        kind: 'ranked',
        ranked: ranking.slice(0, want).map((c, rank) => ({ itemId: c.itemId, rank, scores: c.scores })),
        candidates: rec.candidates,
        routing: rec.routing,
        ...(rec.topics ? { topics: rec.topics } : {}),
      };
    },
    notes: () => notes,
  };
}

/** The recorded critic verdict of each round (the only choice for an LLM critic's trace). */
export function recordedCritic(trace: AskTrace): RoundCritic {
  return {
    kind: trace.settings.critic === 'llm' ? 'llm' : 'rule',
    async judge({ round }) {
      const verdict = trace.rounds[round - 1]?.critic;
      if (!verdict) return { noVerdict: 'the recorded trace has no critic verdict for this round' };
      return { ...verdict, source: verdict.source as 'rule' | 'llm' | 'llm-fallback-rule' };
    },
  };
}

/**
 * A trace node back into a region: inner texts rebuilt from the leaves the way the hierarchy joins
 * them; the context fields a trace writes only where they change are inherited from the parent.
 */
export function regionFromTrace(n: TraceNode, parent?: RegionNode): RegionNode {
  const node: RegionNode = { id: n.id, kind: n.kind, modality: n.modality, anchor: n.anchor, text: '', children: [] };
  if (n.header !== undefined) node.header = n.header;
  const context = n.context ?? parent?.context;
  const caption = n.caption ?? parent?.caption;
  const units = n.units ?? parent?.units;
  const subheader = n.subheader ?? parent?.subheader;
  if (context !== undefined) node.context = context;
  if (caption !== undefined) node.caption = caption;
  if (units !== undefined) node.units = units;
  if (subheader !== undefined) node.subheader = subheader;
  if (n.groups !== undefined) node.groups = n.groups;
  node.children = n.children.map((c) => regionFromTrace(c, node));
  node.text = node.children.length > 0 ? joinChildrenText(node.children) : (n.text ?? '');
  return node;
}

/** The dense score of every recorded node: its dense component under hybrid scores, else its score. */
function traceScores(n: TraceNode, out = new Map<string, number>()): Map<string, number> {
  const dense = n.components?.dense ?? n.score;
  if (dense !== undefined) out.set(n.id, dense);
  for (const c of n.children) traceScores(c, out);
  return out;
}

/** The recorded cosines with the question of a follow-up round's item (components.question). */
function questionScoresOf(n: TraceNode, out = new Map<string, number>()): Map<string, number> {
  if (n.components?.question !== undefined) out.set(n.id, n.components.question);
  for (const c of n.children) questionScoresOf(c, out);
  return out;
}

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

/**
 * Node scores for a replay with branching factor `b`: an item's recorded tree when the round
 * recorded it fresh (re-grouped when b differs from the trace's), else the item from the index
 * scored with cached vectors and the round's cached query vector. The dense scores come from the
 * record or the cache; with hybrid node `weights` the lexical evidence is recomputed from the
 * regions' texts (it needs no encoder) and fused as the live scorer does.
 */
export function recordedScorer(trace: AskTrace, b: number, source: ReplaySource | undefined, weights?: NodeScoreWeights): NodeScorer {
  const recorded = trace.settings;
  const regrouping = b !== recorded.branchingFactor;
  let fromIndexCount = 0;

  const needSource = (why: string): ReplaySource => {
    if (!source) fail(`replay: ${why} needs the workspace index and embedding cache, and none was given`);
    if (source.encoderId !== recorded.encoderId) {
      fail(`replay: ${why} needs vectors of encoder ${recorded.encoderId}, but the index now uses ${source.encoderId}`);
    }
    return source;
  };

  /** Vectors of every node of a tree from the cached leaves and tables; fails naming the first text that is not cached. */
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
    const item: Item = { id: entry.itemId, file: entry.file, title: entry.title, modality: entry.modality, root, ...(entry.traits ? { traits: { ...entry.traits } } : {}) };
    if (!regrouping) {
      const question = questionScoresOf(tree);
      return { item, scores, ...(question.size > 0 ? { questionScores: question } : {}) };
    }
    const why = `B = ${b}`;
    const { root: grouped, oldIds } = regroup(root, entry.itemId, b);
    // Real regions keep their vectors under another grouping (nodeVectors looks through groups);
    // the leaves come from the cache and every inner vector is derived from them, as at index time.
    const vectorOf = await cachedNodeVectors(grouped, why);
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

  return {
    async score(fresh, { round, query }, signal) {
      const rec = trace.rounds[round - 1];
      const dense: Array<{ id: string; item: Item; dense: Map<string, number>; question?: Map<string, number> }> = [];
      for (const c of fresh) {
        throwIfCancelled(signal);
        const entry = rec?.retrieved.find((r) => r.itemId === c.itemId && !r.repeated && r.tree);
        let s: ScoredItem;
        if (entry) s = await fromRecord(entry);
        else {
          s = await fromIndex(c.itemId, query, round);
          fromIndexCount++;
        }
        dense.push({ id: c.itemId, item: s.item, dense: s.scores, ...(s.questionScores ? { question: s.questionScores } : {}) });
      }
      const fused = hybridRound(query, dense, weights);
      return new Map<string, ScoredItem>(dense.map((d, i) => [d.id, { item: d.item, ...fused[i]!, ...(d.question ? { questionScores: d.question } : {}) }]));
    },
    notes: () => (fromIndexCount > 0 ? [`${fromIndexCount} item(s) scored from the index and the embedding cache`] : []),
  };
}
