/**
 * The trace (design §9): one JSON document per question, holding every score and decision the
 * inspector needs to re-render the answer and to replay it with other settings. The webview
 * renders only from traces.
 *
 * The schemas below are the source of truth: every type is inferred from its schema, and a trace
 * read from a file or received by the webview is checked against `AskTrace` (checkTrace). Keys a
 * schema does not name are ignored (dropped from the value read), so newer producers may add
 * fields. Documented for humans in docs/trace-schema.md; bump TRACE_SCHEMA_VERSION on any
 * incompatible change and keep readers of older versions working or failing with a clear message.
 */
import * as z from 'zod/mini';
import { GraphEdgeType, GraphNodeType } from './graph';
import { Anchor, Modality, RegionKind } from './region';
import { bool, box, check, count, int, list, num, pathText, str, type Checked } from './validation';

export const TRACE_SCHEMA = 'canopy.trace';
export const TRACE_SCHEMA_VERSION = 1;

/**
 * What the CANOPY projection decided for a node (src/core/compress/projection.ts):
 * - `descend`: replaced by its children that scored ≥ it;
 * - `keep-whole`: kept as one region: no child scored ≥ it (or it is a leaf, or a table kept whole);
 * - `dropped-sibling`: a sibling of a descended-into child that scored below the parent: its subtree is dropped;
 * - `not-visited`: never scored: inside a kept-whole node or a dropped subtree.
 */
export const NodeDecision = z.enum(['descend', 'keep-whole', 'dropped-sibling', 'not-visited']);
export type NodeDecision = z.output<typeof NodeDecision>;

/**
 * Why the projection decided so:
 * - `child-ge-parent` (descend): at least one child scored ≥ the parent;
 * - `no-child-ge-parent` (keep-whole): every child scored below the parent;
 * - `leaf` (keep-whole): nothing finer exists;
 * - `aggregate-table` (keep-whole): an aggregate question keeps tables whole;
 * - `below-parent` (dropped-sibling): scored below the parent while a sibling did not;
 * - `ancestor-kept-whole` (not-visited): an ancestor was kept whole;
 * - `ancestor-dropped` (not-visited): an ancestor was dropped.
 */
export const ProjectionRule = z.enum(['child-ge-parent', 'no-child-ge-parent', 'leaf', 'aggregate-table', 'below-parent', 'ancestor-kept-whole', 'ancestor-dropped', 'short-item', 'glimpse']);
export type ProjectionRule = z.output<typeof ProjectionRule>;

/**
 * Why the MAGE controller left a region of a document it walked out of the evidence:
 * - `controller-page-not-activated`: its page was never activated (not an entry page, never reached by a relation);
 * - `controller-not-activated`: its page was activated, but this element never became a candidate;
 * - `controller-not-opened`: a candidate the controller did not open (lower utility, or the budget ran out);
 * - `controller-pruned`: the controller pruned it (the step's reason is in the controller trace);
 * - `controller-projected-out`: inside an opened element, CANOPY's projection did not keep it.
 */
export const ControllerSkipRule = z.enum(['controller-page-not-activated', 'controller-not-activated', 'controller-not-opened', 'controller-pruned', 'controller-projected-out']);
export type ControllerSkipRule = z.output<typeof ControllerSkipRule>;

export const CompressorSetting = z.discriminatedUnion('name', [
  z.object({ name: z.literal('none') }),
  z.object({ name: z.literal('flat'), m: num }),
  z.object({ name: z.literal('threshold'), threshold: num }),
  z.object({
    name: z.literal('canopy'),
    itemGate: z.optional(num),
    /** The rank gate: the share of a round's items kept for their own rank, beside the items the question or a kept item names. */
    items: z.optional(num),
    /** Items of at most this many characters that the gate keeps are kept whole, not refined. */
    wholeBelow: z.optional(num),
    /** The rank gate keeps at least this many items in all, the next by rank while fewer are kept (default 1). */
    minItems: z.optional(num),
    /**
     * The rank gate's item order when trained (`canopy train`, issue 36): weights of BM25, the
     * root's and the best leaf's node score and the log of its length, each standardised within the round. Absent: BM25 alone.
     */
    itemOrder: z.optional(z.object({ bm25: num, root: num, leaf: num, length: num })),
    /**
     * Every region CANOPY drops — an item outside the rank gate, a sibling below its parent —
     * keeps its this many best-scoring leaves as a glimpse instead of nothing (default 0).
     */
    glimpse: z.optional(num),
    /**
     * With the rank gate and the glimpse: an item outside the gate keeps its glimpse only when its
     * best leaf scores at least this share of the best leaf of the items the gate kept (0–1;
     * default: always).
     */
    glimpseFloor: z.optional(num),
  }),
]);
export type CompressorSetting = z.output<typeof CompressorSetting>;

export const CriticSetting = z.enum(['rule', 'llm', 'none']);
export const AnswerMode = z.enum(['extractive', 'llm']);
export type AnswerMode = z.output<typeof AnswerMode>;

const ControllerBudgets = z.object({ initialPages: num, maxActivationsPerIteration: num, maxIterations: num, maxOpenedNodes: num, maxSearches: num });

export const TraceSettings = z.object({
  topK: num,
  maxRounds: num,
  branchingFactor: num,
  compressor: CompressorSetting,
  critic: CriticSetting,
  /** The critic model whose learned stop ran over the rule critic (judge/learnedCritic.ts), when it did. */
  criticModel: z.optional(str),
  /** The reader model that chose the quotes (judge/models), for an extractive answer. */
  readerModel: z.optional(str),
  reader: AnswerMode,
  readerTokenCap: num,
  tokenizer: str,
  encoderId: str,
  adapterId: z.optional(str),
  /**
   * How items were retrieved: `rrf` (reciprocal-rank fusion, constant `rrfK`, BM25 weighted
   * `bm25Weight` when not 1) or `linear` (min-max normalised BM25 + `denseWeight` × cosine over
   * both rankers' top `depth`; with `flatWeight`, BM25 is (1 − flatWeight) × the per-field score +
   * flatWeight × the flat one).
   */
  retrieval: z.object({
    dense: bool,
    bm25: bool,
    topics: bool,
    /** Why the topic compass is on or off for this question (src/core/topics/decision.ts). */
    topicsReason: z.optional(str),
    fusion: z.enum(['rrf', 'linear']),
    rrfK: z.optional(num),
    bm25Weight: z.optional(num),
    denseWeight: z.optional(num),
    depth: z.optional(num),
    flatWeight: z.optional(num),
  }),
  /** Node score weights when they are not the dense cosine alone (src/core/compress/hybridScore.ts). */
  nodeScore: z.optional(z.object({ dense: num, lexical: num, model: z.optional(z.enum(['bm25', 'coverage'])) })),
  /** The LLM used by the critic, reader or router, when one is configured. */
  llm: z.optional(z.object({ id: str, remote: bool })),
  /** The MAGE controller, when the pipeline may run it: PDFs of at least `minPages` pages, its evaluator and budgets. */
  controller: z.optional(z.object({ minPages: num, evaluator: z.enum(['rule', 'llm']), budgets: ControllerBudgets })),
  /** Page images and crops of the controller's subgraph were asked for (a multimodal reader). */
  pageImages: z.optional(bool),
});
export type TraceSettings = z.output<typeof TraceSettings>;

/** Deepest scored tree and most nodes in one tree a trace may hold (checked before the tree's schema, without recursion). */
export const MAX_TREE_DEPTH = 200;
export const MAX_TREE_NODES = 2_000_000;

/** One node of an item's scored tree. Leaves carry their text; inner nodes a short preview. */
const traceNodeShape = {
  id: str,
  kind: RegionKind,
  modality: Modality,
  anchor: Anchor,
  text: z.optional(str),
  preview: z.optional(str),
  header: z.optional(str),
  /**
   * The region's parse-time context fields (contracts/region.ts: heading path, table caption,
   * units, a second header line of periods, grouping label rows), so a replay quotes with the same
   * context. `context`, `caption`, `units` and `subheader` are written only where they differ from
   * the parent node's (a reader inherits them from the parent when absent); `groups` on each row
   * it applies to.
   */
  context: z.optional(str),
  caption: z.optional(str),
  units: z.optional(str),
  subheader: z.optional(str),
  groups: z.optional(list(str)),
  tokens: num,
  /** The score the rule compared: the dense cosine, or with hybrid node scores their weighted sum. */
  score: z.optional(num),
  parentScore: z.optional(num),
  /**
   * Hybrid node scores: the components `score` was fused from (absent: `score` is the dense
   * cosine); `question`: for an item a follow-up round found, the node's cosine with the user's
   * question (the reader's features read it; the others are against the round's query).
   */
  components: z.optional(z.object({ dense: num, lexical: num, question: z.optional(num) })),
  /** `kept-by-controller`: a region of an element the MAGE controller opened (the item's file went through it). */
  decision: z.enum([...NodeDecision.options, 'kept-by-baseline', 'dropped-by-baseline', 'kept-by-controller', 'dropped-by-controller']),
  /** The `controller-…` rules say why the MAGE controller left a region out (ControllerSkipRule). */
  rule: z.enum([...ProjectionRule.options, 'flat-top-m', 'threshold', 'none', 'item-gate', 'controller', ...ControllerSkipRule.options]),
};
export type TraceNode = z.output<z.ZodMiniObject<typeof traceNodeShape>> & { children: TraceNode[] };
export const TraceNode: z.ZodMiniType<TraceNode> = z.object({
  ...traceNodeShape,
  get children() {
    return z.array(TraceNode);
  },
});

/**
 * The size and depth of a tree, walked without recursion before the recursive schema reads it,
 * so that a hostile tree can neither exhaust the stack nor take unbounded time.
 */
const boundedTree = z.unknown().check(
  z.superRefine((tree, ctx) => {
    const stack: Array<{ node: unknown; path: Array<string | number> }> = [{ node: tree, path: [] }];
    let seen = 0;
    while (stack.length > 0) {
      const { node, path } = stack.pop()!;
      if (++seen > MAX_TREE_NODES) {
        ctx.addIssue({ code: 'custom', message: `has more than ${MAX_TREE_NODES} nodes`, input: tree });
        return;
      }
      if (path.length / 2 > MAX_TREE_DEPTH) {
        ctx.addIssue({ code: 'custom', message: `is nested deeper than ${MAX_TREE_DEPTH}`, path, input: node });
        return;
      }
      const children = (node as { children?: unknown } | null)?.children;
      if (Array.isArray(children)) for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i], path: [...path, 'children', i] });
    }
  }),
);
const ScoredTree = z.pipe(boundedTree, TraceNode);

export const ScoreComponents = z.object({
  dense: z.optional(num),
  denseRank: z.optional(count),
  bm25: z.optional(num),
  bm25Rank: z.optional(count),
  /** BM25 with the fields scored as one (bm25.ts `flat`), when the fusion uses it. */
  bm25Flat: z.optional(num),
  bm25FlatRank: z.optional(count),
  topic: z.optional(num),
  fused: num,
  /** Ranked below k but taken into the top k because its file is a source the question names (retrieve/hybrid.ts). */
  namedSource: z.optional(bool),
  /** Taken to the first places because its title names a thing the follow-up looks for (retrieve/hybrid.ts). */
  titleMatch: z.optional(bool),
});
export type ScoreComponents = z.output<typeof ScoreComponents>;

// ---- The MAGE controller's run over one document (design §7), as the inspector reads it ----
// This is the shape of `ControllerTrace` in src/core/controller/trace.ts (kind
// "canopy.controller", versioned on its own), stated here as the subset the inspector renders so
// that the ask trace does not depend on the controller's module; the controller's full trace fits
// it (its other fields are not read back).

export const ControllerNodeState = z.enum(['inactive', 'active', 'opened', 'pruned']);
export type ControllerNodeState = z.output<typeof ControllerNodeState>;

/** One controller action: `type` is ACTIVATE_PAGE, ACTIVATE_NODE, OPEN_NODE, FOLLOW_RELATION, SEARCH_EVIDENCE, PRUNE_NODE or STOP. */
export const TraceControllerAction = z.object({
  type: str,
  pageId: z.optional(str),
  page: z.optional(num),
  nodeId: z.optional(str),
  from: z.optional(str),
  to: z.optional(str),
  relation: z.optional(str),
  query: z.optional(str),
  reason: z.optional(str),
  source: z.optional(str),
});
export type TraceControllerAction = z.output<typeof TraceControllerAction>;

export const TraceControllerStep = z.object({
  step: num,
  /** 0 = activation of the entry pages; evaluator iterations count from 1. */
  iteration: num,
  action: TraceControllerAction,
  /** grounding, rule, llm, rule-fallback or controller. */
  decidedBy: str,
  /** The evaluator's estimate of the action's marginal utility (0–1). */
  utility: z.optional(num),
  why: z.optional(str),
  valid: bool,
  error: z.optional(str),
  changes: list(z.object({ id: str, from: ControllerNodeState, to: ControllerNodeState })),
  budgetLeft: z.object({ iterations: num, activationsThisIteration: num, openedNodes: num, searches: num }),
});
export type TraceControllerStep = z.output<typeof TraceControllerStep>;

export const TraceControllerNode = z.object({
  id: str,
  type: GraphNodeType,
  label: str,
  page: num,
  state: ControllerNodeState,
  regionId: z.optional(str),
  anchor: Anchor,
  bbox: z.optional(box),
  relevance: z.optional(num),
});
export type TraceControllerNode = z.output<typeof TraceControllerNode>;

export const TraceControllerEdge = z.object({
  from: str,
  to: str,
  /** A document-graph relation (next, prev, near, semantic, section, subsection) or contains. */
  type: z.enum([...GraphEdgeType.options, 'section']),
  followed: z.optional(bool),
});
export type TraceControllerEdge = z.output<typeof TraceControllerEdge>;

export const TraceController = z.object({
  kind: z.literal('canopy.controller'),
  version: num,
  file: str,
  evaluator: z.object({ kind: z.enum(['rule', 'llm']), model: z.optional(str) }),
  budgets: ControllerBudgets,
  steps: list(TraceControllerStep),
  stop: z.object({ reason: str, iteration: num, note: str }),
  /** Every node that left the Inactive state, and the edges between them. */
  subgraph: z.object({ nodes: list(TraceControllerNode), edges: list(TraceControllerEdge) }),
  validationErrors: z.optional(list(z.object({ iteration: num, kind: str, message: str, step: z.optional(num) }))),
});
export type TraceController = z.output<typeof TraceController>;

export const TraceRetrievedItem = z.object({
  itemId: str,
  file: str,
  title: str,
  modality: Modality,
  rank: count,
  scores: ScoreComponents,
  /** Already in the evidence from an earlier round: not compressed again. */
  repeated: bool,
  /** The scored tree (absent for repeated items: see the round that added them). */
  tree: z.optional(ScoredTree),
  keptNodeIds: list(str),
  tokens: z.object({ whole: num, kept: num }),
  /** The MAGE controller's run over this item's document graph (design §7), when it ran. */
  controller: z.optional(TraceController),
  /** The rank gate's verdict on this item and why (compressor `items`), when it ran. */
  gate: z.optional(z.object({ kept: bool, why: str })),
  /** What the parser read of the item's document: its language and the profiles it fits (the reader's features use them). */
  traits: z.optional(z.object({ language: z.optional(str), profiles: z.optional(list(str)) })),
  /** The item is from a file whose last good version the index serves: the file changed and no longer parses. */
  stale: z.optional(bool),
});
export type TraceRetrievedItem = z.output<typeof TraceRetrievedItem>;

// ---- The topic compass (MCompassRAG, design §4): optional, readers show an empty state ----

/** One topic the topic compass selected for a round's query. */
export const TraceTopic = z.object({
  topic: num,
  /** A readable name (top terms), when the topic model has one. */
  label: str,
  /** Weight in the abstracted query-topic vector (top-M topics). */
  weight: num,
  terms: z.optional(list(str)),
});
export type TraceTopic = z.output<typeof TraceTopic>;

/** How much the topic signal moved one chunk (item, or node when chunks are regions). */
export const TraceTopicLift = z.object({
  itemId: str,
  nodeId: z.optional(str),
  /** Score without the topic signal, and with it. */
  base: num,
  withTopics: num,
  rankBefore: z.optional(num),
  rankAfter: z.optional(num),
});
export type TraceTopicLift = z.output<typeof TraceTopicLift>;

/** The topic compass for one round: selected bank entries, topics and per-chunk lift. */
export const TraceTopics = z.object({
  /** K: topics in the model. */
  k: num,
  /** L: metadata-bank entries selected for the query. */
  selectedEntries: z.optional(num),
  selected: list(TraceTopic),
  lift: list(TraceTopicLift),
  source: z.optional(str),
});
export type TraceTopics = z.output<typeof TraceTopics>;

export const TraceRouting = z.object({
  modalities: list(Modality),
  aggregate: bool,
  source: z.enum(['rule', 'llm']),
  reason: str,
});
export type TraceRouting = z.output<typeof TraceRouting>;

/** One named feature of a learned model's decision: its value and what it added to the model's logit (weight × value). */
export const TraceContribution = z.object({ feature: str, value: num, contribution: num });
export type TraceContribution = z.output<typeof TraceContribution>;

/**
 * A learned model's decision (src/core/judge): the model that made it, its probability, the
 * threshold it was compared with (the critic's stop), the logit's constant, and each feature's
 * contribution, largest magnitude first — so "why this quote, why it stopped" is read from the
 * trace, never re-derived.
 */
export const TraceJudgment = z.object({
  model: str,
  probability: num,
  threshold: z.optional(num),
  bias: z.optional(num),
  contributions: list(TraceContribution),
});
export type TraceJudgment = z.output<typeof TraceJudgment>;

/**
 * The question's language as detected (ISO 639-3 code, `und` when too short to tell) and whether
 * the English-only rules and features ran for it; `note` says what was switched off.
 */
export const TraceLanguage = z.object({ question: str, englishRules: bool, note: z.optional(str) });
export type TraceLanguage = z.output<typeof TraceLanguage>;

/**
 * One part of the question as the rule critic judged it: the shape of `TraceCritic.details.parts[]`
 * (critic/ruleCritic.ts writes it, the inspector's critic card reads it).
 */
export interface CriticPartDetail {
  part: string;
  answerType: string;
  coverage: number;
  /** The answer of the asked kind found in the best sentence, if any. */
  cue?: string;
  answered: boolean;
  /** The best-supporting sentence (its start), for the trace. */
  best?: string;
  missingTerms: string[];
}

export const TraceCritic = z.object({
  sufficient: bool,
  missing: list(str),
  followUpQuery: z.optional(str),
  /** The named things the follow-up looks for, whose own items its retrieval takes first. */
  followUpNames: z.optional(list(str)),
  source: str,
  details: z.optional(z.record(z.string(), z.unknown())),
  /** The learned critic's probability that the kept evidence holds the answer, with its features' contributions. */
  judgment: z.optional(TraceJudgment),
});
export type TraceCritic = z.output<typeof TraceCritic>;

export const TraceRound = z.object({
  round: int,
  query: str,
  routing: TraceRouting,
  /** The fused ranking beyond k (up to 50), so replays with a larger k need no new retrieval. */
  candidates: list(z.object({ itemId: str, scores: ScoreComponents })),
  retrieved: list(TraceRetrievedItem),
  addedItemIds: list(str),
  critic: z.optional(TraceCritic),
  /** The topic compass's selection and its effect on this round's ranking, when topics are on. */
  topics: z.optional(TraceTopics),
  ms: num,
});
export type TraceRound = z.output<typeof TraceRound>;

/**
 * `replay-diverged`: a replay whose critic asked for a query the recorded trace never ran;
 * `no-follow-up`: the critic found the evidence insufficient but had no query left to ask.
 */
export const StopReason = z.enum(['critic-sufficient', 'round-limit', 'no-new-items', 'token-cap', 'cancelled', 'replay-diverged', 'no-follow-up']);
export type StopReason = z.output<typeof StopReason>;

/** Present on traces made by replaying another trace with other settings (src/core/engine/replay.ts). */
export const TraceReplay = z.object({
  /** Id of the trace replayed. */
  of: str,
  /** The settings that differ from the original's. */
  changed: z.partial(z.pick(TraceSettings, { topK: true, maxRounds: true, branchingFactor: true, compressor: true, critic: true, nodeScore: true })),
  /** What the replay reused, recomputed or could not do. */
  notes: list(str),
});
export type TraceReplay = z.output<typeof TraceReplay>;

export const TraceCitation = z.object({
  /** [n] in the answer text. */
  marker: int,
  itemId: str,
  nodeId: str,
  file: str,
  anchor: Anchor,
  text: str,
  /**
   * What the quote needs to be read alone, shown compactly beside it: a row's table caption or
   * section label, the label rows that group it, its column headers and units; a sentence's heading
   * path where it names what the sentence is about.
   */
  context: z.optional(str),
  /** The quote comes from a file whose last good version is served (the file changed and no longer parses). */
  stale: z.optional(bool),
  /** The learned reader's probability that this region answers the question, with its features' contributions. */
  judgment: z.optional(TraceJudgment),
});
export type TraceCitation = z.output<typeof TraceCitation>;

export const TraceReaderImage = z.object({
  ref: str,
  file: str,
  /** 0-based page. */
  page: count,
  bbox: z.optional(box),
  width: count,
  height: count,
  bytes: count,
});
export type TraceReaderImage = z.output<typeof TraceReaderImage>;

/** Most rounds a trace may hold. */
export const MAX_TRACE_ROUNDS = 1000;

export const AskTrace = z.object({
  schema: z.literal(TRACE_SCHEMA),
  version: z.literal(TRACE_SCHEMA_VERSION),
  id: str,
  createdAt: str,
  question: str,
  settings: TraceSettings,
  index: z.object({ root: str, generation: num, items: num }),
  rounds: list(TraceRound, MAX_TRACE_ROUNDS),
  stop: z.object({ reason: StopReason, round: num, note: str }),
  readerInput: z.object({
    text: str,
    tokens: num,
    truncated: bool,
    regions: list(z.object({ itemId: str, nodeId: str })),
    /** Page images (no bbox) and element crops sent to a multimodal reader: which, and their size (the pixels are not stored). */
    images: z.optional(list(TraceReaderImage)),
    /** Why page images that were asked for were not sent. */
    notes: z.optional(list(str)),
  }),
  answer: z.object({
    mode: AnswerMode,
    text: str,
    citations: list(TraceCitation),
    model: z.optional(str),
    notes: z.optional(list(str)),
    unresolvedMarkers: z.optional(list(int)),
    /** The LLM reader failed and `mode`'s reader answered in its place: why (the endpoint and the cause). */
    llmFailure: z.optional(str),
  }),
  totals: z.object({ evidenceTokens: num, uncompressedTokens: num, items: num, keptRegions: num }),
  ms: num,
  replay: z.optional(TraceReplay),
  /** The question's detected language and whether the English-only rules ran. */
  language: z.optional(TraceLanguage),
});
export type AskTrace = z.output<typeof AskTrace>;

/**
 * Checks a value against the trace schema. A value that is not a trace of this version at all
 * says so first (its `schema` and `version`), before any field-level problem.
 */
export function checkTrace(value: unknown, root = 'trace'): Checked<AskTrace> {
  const head = value as { schema?: unknown; version?: unknown } | null;
  if (typeof head !== 'object' || head === null || Array.isArray(head)) return { ok: false, problem: `${root} must be an object` };
  if (head.schema !== TRACE_SCHEMA) return { ok: false, problem: `${pathText(root, ['schema'])} must be "${TRACE_SCHEMA}"` };
  if (head.version !== TRACE_SCHEMA_VERSION) {
    return { ok: false, problem: `${pathText(root, ['version'])} ${JSON.stringify(head.version) ?? 'undefined'} is not supported (expected ${TRACE_SCHEMA_VERSION})` };
  }
  return check(AskTrace, value, root);
}
