/**
 * Fits the CANOPY rule's node-score weights (dense cosine and lexical evidence,
 * `compress/hybridScore.ts`) on a workspace's gold, as part of `canopy train` and the Train
 * command: every candidate on a small grid is run through the same projection and the same
 * figures as the adapter's report (`report.ts`) on the training questions, the best one is
 * measured against the weights in use on the held-back questions, and it is adopted only when it
 * is better there.
 *
 * "Better" is the adapter report's three figures at once: gold recall not lower, evidence tokens
 * not more and refinement-decision accuracy not lower, with at least one of them strictly better
 * (a fit that trades recall for tokens is not called better). The fit picks, among candidates no
 * worse than the weights in use on the training questions, the highest decision accuracy, then
 * recall, then fewest tokens; ties keep the smaller lexical weight. Node vectors are the base
 * encoder's (no adapter): the weights are the encoder's, stored in its retrieval profile, and
 * apply whichever adapter is active.
 */
import type { SideMetrics } from '../../contracts/training';
import { DENSE_ONLY, isDenseOnly, type NodeScoreWeights } from '../compress/hybridScore';
import type { TokenCounter } from '../compress/tokens';
import { throwIfCancelled } from '../errors';
import { evaluateSide, type PreparedQuestion } from './report';

/** The lexical weights tried beside a dense weight of 1, for each lexical model, and the lexical evidence alone. */
export const LEXICAL_WEIGHT_GRID: readonly number[] = [0.1, 0.25, 0.5, 1, 2, 4];

export function nodeScoreCandidates(): NodeScoreWeights[] {
  const out: NodeScoreWeights[] = [];
  for (const model of ['bm25', 'coverage'] as const) {
    for (const lexical of LEXICAL_WEIGHT_GRID) out.push({ dense: 1, lexical, model });
    out.push({ dense: 0, lexical: 1, model });
  }
  return out;
}

const EPS = 1e-9;

/** `a` is no worse than `b` on recall, tokens and decision accuracy. */
export function noWorse(a: SideMetrics, b: SideMetrics): boolean {
  return a.goldRecall >= b.goldRecall - EPS && a.evidenceTokens <= b.evidenceTokens && a.decisionAccuracy >= b.decisionAccuracy - EPS;
}

/** `a` is no worse than `b` and strictly better in at least one of the three. */
export function better(a: SideMetrics, b: SideMetrics): boolean {
  return noWorse(a, b) && (a.goldRecall > b.goldRecall + EPS || a.evidenceTokens < b.evidenceTokens || a.decisionAccuracy > b.decisionAccuracy + EPS);
}

export function sameWeights(a: NodeScoreWeights, b: NodeScoreWeights): boolean {
  if (isDenseOnly(a) && isDenseOnly(b)) return true;
  return a.dense === b.dense && a.lexical === b.lexical && (a.model ?? 'bm25') === (b.model ?? 'bm25');
}

export interface NodeScoreFit {
  /** The weights in use before, and the fitted ones (equal when no candidate beat them on the training questions). */
  before: NodeScoreWeights;
  after: NodeScoreWeights;
  /** The report's figures on the training questions (what chose) and on the held-back ones (what adopts). */
  train: { before: SideMetrics; after: SideMetrics };
  heldBack?: { before: SideMetrics; after: SideMetrics };
  adopted: boolean;
  /** Why the fit was adopted or not, in a sentence. */
  reason: string;
  candidates: number;
}

export function describeWeights(w: NodeScoreWeights): string {
  if (isDenseOnly(w)) return 'dense cosine alone';
  const model = w.model ?? 'bm25';
  if (w.dense === 0) return `lexical (${model}) alone`;
  return `${w.dense} × dense + ${w.lexical} × lexical (${model})`;
}

export function fitNodeScore(o: {
  train: readonly PreparedQuestion[];
  heldBack: readonly PreparedQuestion[];
  tokens: TokenCounter;
  /** The weights asks use now (default: the dense cosine alone). */
  current?: NodeScoreWeights;
  signal?: AbortSignal;
}): NodeScoreFit {
  const current = o.current ?? DENSE_ONLY;
  const base = evaluateSide(o.train, o.tokens, undefined, current);
  let best = { weights: current, metrics: base };
  const candidates = [DENSE_ONLY, ...nodeScoreCandidates()].filter((w) => !sameWeights(w, current));
  for (const w of candidates) {
    throwIfCancelled(o.signal);
    const m = evaluateSide(o.train, o.tokens, undefined, w);
    if (!noWorse(m, base)) continue;
    const b = best.metrics;
    const wins =
      m.decisionAccuracy > b.decisionAccuracy + EPS ||
      (Math.abs(m.decisionAccuracy - b.decisionAccuracy) <= EPS && (m.goldRecall > b.goldRecall + EPS || (Math.abs(m.goldRecall - b.goldRecall) <= EPS && m.evidenceTokens < b.evidenceTokens)));
    if (wins) best = { weights: w, metrics: m };
  }
  const fit = { before: current, after: best.weights, train: { before: base, after: best.metrics }, candidates: candidates.length + 1 };
  if (sameWeights(best.weights, current)) {
    return { ...fit, adopted: false, reason: `no weights on the grid were better than ${describeWeights(current)} on the ${o.train.length} training question(s)` };
  }
  if (o.heldBack.length === 0) return { ...fit, adopted: false, reason: 'no held-back questions to confirm the fit on' };
  const heldBack = { before: evaluateSide(o.heldBack, o.tokens, undefined, current), after: evaluateSide(o.heldBack, o.tokens, undefined, best.weights) };
  const adopted = better(heldBack.after, heldBack.before);
  return {
    ...fit,
    heldBack,
    adopted,
    reason: adopted
      ? `better on the ${o.heldBack.length} held-back question(s): gold recall not lower, tokens not more, decision accuracy not lower, one of them strictly better`
      : `not better on the ${o.heldBack.length} held-back question(s) than ${describeWeights(current)}; not adopted`,
  };
}
