/**
 * Before/after figures for an adapter on held-back questions (design §10, §12): the CANOPY
 * projection is run over each question's candidate items with the untrained (identity) and the
 * trained adapter, and compared with gold.
 *
 * - refinement-decision accuracy: over the parent/child decisions the projection actually makes
 *   (the parent was visited, so it compared its children) on the path to gold, the share that
 *   agrees with the §10 preferences (descend into a gold-overlapping child of a partly gold
 *   parent; keep a fully gold node whole). `pairAccuracy` is the same over all pairs, visited or not;
 * - gold recall: share of gold spans at least half covered by kept regions;
 * - evidence tokens: cl100k tokens of the kept regions' text (and of whole items, for the ratio);
 * - pruned items: share of candidate items where the projection dropped at least one subtree.
 */
import { scoreNodes, type NodeAdapter } from '../compress/nodeScorer';
import { projectItem } from '../compress/projection';
import type { TokenCounter } from '../compress/tokens';
import type { Anchor, Item } from '../model/region';
import { coverage } from '../annotate/overlap';
import { pairAgrees, type PreferencePair } from '../annotate/preferences';

export interface PreparedItem {
  item: Item;
  /** Node vectors before any adapter (nodeScorer.nodeVectors). */
  vectors: Map<string, Float32Array>;
}

export interface PreparedQuestion {
  key: string;
  question: string;
  query: Float32Array;
  /** Located gold anchors. */
  gold: Anchor[];
  candidates: PreparedItem[];
  pairs: PreferencePair[];
}

export interface SideMetrics {
  decisionAccuracy: number;
  decisions: number;
  pairAccuracy: number;
  pairs: number;
  goldRecall: number;
  goldSpans: number;
  evidenceTokens: number;
  wholeTokens: number;
  /** evidenceTokens / wholeTokens. */
  tokenShare: number;
  prunedItemShare: number;
  items: number;
  questions: number;
}

export interface BeforeAfter {
  before: SideMetrics;
  after: SideMetrics;
  delta: { decisionAccuracy: number; goldRecall: number; evidenceTokens: number; tokenReduction: number; prunedItemShare: number };
}

/** A gold span counts as recalled when kept regions cover at least this share of it. */
export const RECALL_COVERAGE = 0.5;

export function evaluateSide(questions: readonly PreparedQuestion[], tokens: TokenCounter, adapter?: NodeAdapter): SideMetrics {
  let decisions = 0;
  let agreed = 0;
  let pairs = 0;
  let pairsAgreed = 0;
  let goldSpans = 0;
  let goldKept = 0;
  let evidenceTokens = 0;
  let wholeTokens = 0;
  let items = 0;
  let pruned = 0;
  for (const q of questions) {
    const kept: Anchor[] = [];
    const scores = new Map<string, number>();
    for (const c of q.candidates) {
      const s = scoreNodes(q.query, c.vectors, adapter);
      for (const [k, v] of s) scores.set(k, v);
      const { kept: keptNodes, verdicts } = projectItem(c.item.root, (n) => s.get(n.id) ?? Number.NEGATIVE_INFINITY);
      items++;
      if (verdicts.some((v) => v.decision === 'dropped-sibling')) pruned++;
      for (const n of keptNodes) {
        kept.push(n.anchor);
        evidenceTokens += tokens.count(n.text);
      }
      wholeTokens += tokens.count(c.item.root.text);
      const visited = new Set(verdicts.filter((v) => v.decision === 'descend' || v.decision === 'keep-whole').map((v) => v.nodeId));
      for (const p of q.pairs) {
        if (p.itemId !== c.item.id) continue;
        const ok = pairAgrees(p, (id) => s.get(id) ?? Number.NEGATIVE_INFINITY);
        pairs++;
        if (ok) pairsAgreed++;
        if (visited.has(p.parent)) {
          decisions++;
          if (ok) agreed++;
        }
      }
    }
    for (const g of q.gold) {
      goldSpans++;
      if (coverage(g, kept) >= RECALL_COVERAGE) goldKept++;
    }
  }
  const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
  return {
    decisionAccuracy: ratio(agreed, decisions),
    decisions,
    pairAccuracy: ratio(pairsAgreed, pairs),
    pairs,
    goldRecall: ratio(goldKept, goldSpans),
    goldSpans,
    evidenceTokens,
    wholeTokens,
    tokenShare: ratio(evidenceTokens, wholeTokens),
    prunedItemShare: ratio(pruned, items),
    items,
    questions: questions.length,
  };
}

export function beforeAfter(questions: readonly PreparedQuestion[], tokens: TokenCounter, trained: NodeAdapter): BeforeAfter {
  const before = evaluateSide(questions, tokens);
  const after = evaluateSide(questions, tokens, trained);
  return {
    before,
    after,
    delta: {
      decisionAccuracy: after.decisionAccuracy - before.decisionAccuracy,
      goldRecall: after.goldRecall - before.goldRecall,
      evidenceTokens: after.evidenceTokens - before.evidenceTokens,
      tokenReduction: before.evidenceTokens === 0 ? 0 : 1 - after.evidenceTokens / before.evidenceTokens,
      prunedItemShare: after.prunedItemShare - before.prunedItemShare,
    },
  };
}

/** A few lines for a terminal. */
export function formatBeforeAfter(r: BeforeAfter): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const row = (name: string, s: SideMetrics) =>
    `${name.padEnd(10)} decision acc ${pct(s.decisionAccuracy)} (${s.decisions})  pair acc ${pct(s.pairAccuracy)} (${s.pairs})  gold recall ${pct(s.goldRecall)} (${s.goldSpans})  tokens ${s.evidenceTokens} (${pct(s.tokenShare)} of whole)  pruned items ${pct(s.prunedItemShare)} (${s.items})`;
  return [row('untrained', r.before), row('trained', r.after)];
}
