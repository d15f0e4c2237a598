/**
 * Figures of a node-adapter training run as the Training view shows them (src/core/train/report.ts
 * computes them; the protocol carries them).
 */
export interface SideMetrics {
  /** Share of the projection's refinement decisions on the path to gold that agree with §10. */
  decisionAccuracy: number;
  decisions: number;
  /** The same over every §10 pair, visited or not. */
  pairAccuracy: number;
  pairs: number;
  /** Share of gold spans at least half covered by kept regions. */
  goldRecall: number;
  goldSpans: number;
  evidenceTokens: number;
  wholeTokens: number;
  /** evidenceTokens / wholeTokens. */
  tokenShare: number;
  /** Share of candidate items where the projection dropped at least one subtree. */
  prunedItemShare: number;
  items: number;
  questions: number;
}
