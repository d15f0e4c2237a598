/**
 * The ranges of the per-question settings that every layer checks — the settings (core/config),
 * the CLI's flags, a replay's request (protocol, core) and the inspector's replay form — stated
 * once; package.json's `minimum`/`maximum` for canopy.topK, canopy.maxRounds and
 * canopy.branchingFactor say the same (test/unit/settings.test.ts checks them against the code).
 * And the settings a replay may change, as a schema.
 */
import * as z from 'zod/mini';
import { type Range, intIn, numIn } from './validation';

/** k: items retrieved per round. */
export const TOP_K: Range = Object.freeze({ min: 1, max: 100 });
/** R: most retrieval rounds. */
export const MAX_ROUNDS: Range = Object.freeze({ min: 1, max: 10 });
/** B: most children per node before balanced B-ary grouping. */
export const BRANCHING_FACTOR: Range = Object.freeze({ min: 2, max: 4 });
/** m of the flat baseline: regions kept per item. */
export const FLAT_M: Range = Object.freeze({ min: 1, max: 10_000 });
/** The threshold baseline's cosine threshold. */
export const COSINE_THRESHOLD: Range = Object.freeze({ min: -1, max: 1 });
/** CANOPY's optional item gate. */
export const ITEM_GATE: Range = Object.freeze({ min: 0, max: 2 });

/** The rank gate's share of a round's items kept for their rank. */
export const ITEM_SHARE: Range = Object.freeze({ min: 0.05, max: 1 });
/** Items of at most this many characters are kept whole once the rank gate keeps them. */
export const WHOLE_BELOW: Range = Object.freeze({ min: 0, max: 100_000 });
/** The fewest items the rank gate keeps for their rank. */
export const MIN_ITEMS: Range = Object.freeze({ min: 1, max: 1_000 });
/** Leaves each item the rank gate drops keeps (its best-scoring ones). */
export const GLIMPSE: Range = Object.freeze({ min: 0, max: 100 });

/** A weight of the rank gate's trained item order (each feature standardised within the round). */
export const ITEM_ORDER_WEIGHT: Range = Object.freeze({ min: -100, max: 100 });

/**
 * The rank gate's item order (issue 36, `compress/itemGate.ts`): weights of a linear score over
 * each item's BM25 of its whole text, its root's node score, its best leaf's node score and the log
 * of its length, each
 * standardised within the round. Absent: the gate ranks by BM25 alone.
 */
export const ItemOrderWeights = z.strictObject({ bm25: numIn(ITEM_ORDER_WEIGHT), root: numIn(ITEM_ORDER_WEIGHT), leaf: numIn(ITEM_ORDER_WEIGHT), length: numIn(ITEM_ORDER_WEIGHT) });

/** A weight of the hybrid node score (dense or lexical). */
export const NODE_SCORE_WEIGHT: Range = Object.freeze({ min: 0, max: 100 });

/** A compressor a replay may use (the trace's CompressorSetting, within the ranges above). */
export const ReplayCompressor = z.discriminatedUnion('name', [
  z.strictObject({ name: z.literal('none') }),
  z.strictObject({ name: z.literal('flat'), m: intIn(FLAT_M) }),
  z.strictObject({ name: z.literal('threshold'), threshold: numIn(COSINE_THRESHOLD) }),
  z.strictObject({ name: z.literal('canopy'), itemGate: z.optional(numIn(ITEM_GATE)), items: z.optional(numIn(ITEM_SHARE)), wholeBelow: z.optional(intIn(WHOLE_BELOW)), minItems: z.optional(intIn(MIN_ITEMS)), glimpse: z.optional(intIn(GLIMPSE)), itemOrder: z.optional(ItemOrderWeights) }),
]);

/** The settings a replay may change; absent ones keep the trace's. */
export const ReplaySettings = z.strictObject({
  topK: z.optional(intIn(TOP_K)),
  maxRounds: z.optional(intIn(MAX_ROUNDS)),
  branchingFactor: z.optional(intIn(BRANCHING_FACTOR)),
  compressor: z.optional(ReplayCompressor),
  /** 'recorded' reuses each round's recorded verdict (the only choice for an LLM critic's trace). */
  critic: z.optional(z.enum(['rule', 'none', 'recorded'])),
  /** Other node score weights: the recorded dense components are re-weighed with the lexical evidence. */
  nodeScore: z.optional(z.strictObject({ dense: numIn(NODE_SCORE_WEIGHT), lexical: numIn(NODE_SCORE_WEIGHT), model: z.optional(z.enum(['bm25', 'coverage'])) })),
});
export type ReplaySettings = z.output<typeof ReplaySettings>;
