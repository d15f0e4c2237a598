/**
 * The retrieval profile an index folder may hold (`retrieval-profile.json`, written by `canopy tune`
 * and `canopy train`): how the hybrid retriever fuses its rankings and which node-score weights the
 * CANOPY rule uses for one encoder. The schema is the contract; core/retrieve/profile.ts reads and
 * writes files of it.
 */
import * as z from 'zod/mini';
import { ITEM_SHARE, ItemOrderWeights, MIN_ITEMS, NODE_SCORE_WEIGHT, WHOLE_BELOW } from './askSettings';
import { intIn, num, numIn, str } from './validation';

const positive = z.number().check(z.gt(0, 'must be more than 0'));
const nonNegative = z.number().check(z.gte(0, 'must be ≥ 0'));

const share = z.number().check(z.gte(0, 'must be ≥ 0'), z.lte(1, 'must be ≤ 1'));

/**
 * Reciprocal-rank fusion (the design's equal-weight RRF, or BM25 weighted) or score-level fusion:
 * `linear` = (1 − flat) × BM25 per field + flat × BM25 flat (bm25.ts's two scorings) + dense ×
 * cosine, each min-max normalised over the union of the lists' top `depth`; `flat` absent is 0
 * (profiles written before it).
 */
export const FusionSetting = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rrf'), rrfK: positive, bm25Weight: z.optional(nonNegative) }),
  z.object({ kind: z.literal('linear'), dense: nonNegative, depth: z.int().check(z.gte(1, 'must be ≥ 1')), flat: z.optional(share) }),
]);
export type FusionSetting = z.infer<typeof FusionSetting>;

/** The node-score weights a profile carries (structurally `NodeScoreWeights`; retrieve sits below compress). */
export const ProfileNodeScore = z.object({
  dense: numIn(NODE_SCORE_WEIGHT),
  lexical: numIn(NODE_SCORE_WEIGHT),
  model: z.optional(z.enum(['bm25', 'coverage'])),
});
export type ProfileNodeScore = z.infer<typeof ProfileNodeScore>;

/**
 * The rank gate's options fitted to the ask by `canopy train` (issue 36, `train/askFit.ts`): the
 * share kept for rank, the least item count, and the size up to which an item is kept whole
 * (0: every item is refined); and the order the gate ranks items in, when one was trained (absent:
 * BM25 of the whole text).
 */
export const ProfileGate = z.object({
  items: numIn(ITEM_SHARE),
  minItems: intIn(MIN_ITEMS),
  wholeBelow: intIn(WHOLE_BELOW),
  order: z.optional(ItemOrderWeights),
});
export type ProfileGate = z.infer<typeof ProfileGate>;

export const RetrievalProfile = z.object({
  format: z.literal('canopy.retrieval-profile'),
  version: z.literal(1),
  /** The encoder the weights were fitted for (a prefix, for the built-in model's family). */
  encoder: str,
  fusion: FusionSetting,
  /** Where the weights came from and what they measured, for the trace and the docs. */
  fittedOn: z._default(str, ''),
  figures: z.optional(z.record(z.string(), num)),
  /**
   * Node-score weights for the CANOPY rule (dense cosine and lexical evidence,
   * `compress/hybridScore.ts`), fitted by `canopy train` on the user's gold; questions for this
   * encoder use them unless a request names others. Absent: the dense cosine alone.
   */
  nodeScore: z.optional(ProfileNodeScore),
  /** Where the node-score weights came from and what the held-back questions measured (`canopy train`). */
  nodeScoreFittedOn: z.optional(str),
  /** The rank gate's options fitted to the ask; questions use them while the gate settings are at their defaults. */
  gate: z.optional(ProfileGate),
  /** Where the gate's options came from and what the held-back questions measured (`canopy train`). */
  gateFittedOn: z.optional(str),
});
export type RetrievalProfile = z.infer<typeof RetrievalProfile>;
