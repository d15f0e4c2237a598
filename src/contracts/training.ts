/**
 * Figures of a node-adapter training run as the Training view shows them (src/core/train/report.ts
 * computes them; the protocol carries them).
 */
import * as z from 'zod/mini';
import { count, num, share } from './validation';

export const SideMetrics = z.object({
  /** Share of the projection's refinement decisions on the path to gold that agree with §10. */
  decisionAccuracy: share,
  decisions: count,
  /** The same over every §10 pair, visited or not. */
  pairAccuracy: share,
  pairs: count,
  /** Share of gold spans at least half covered by kept regions. */
  goldRecall: share,
  goldSpans: count,
  evidenceTokens: count,
  wholeTokens: count,
  /** evidenceTokens / wholeTokens. */
  tokenShare: num,
  /** Share of candidate items where the projection dropped at least one subtree. */
  prunedItemShare: share,
  items: count,
  questions: count,
});
export type SideMetrics = z.output<typeof SideMetrics>;
