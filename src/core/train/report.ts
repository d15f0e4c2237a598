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
import type { SideMetrics } from '../../contracts/training';
import { fuseNodeScores, isDenseOnly, lexicalScores, type LexicalModel, type NodeScoreWeights } from '../compress/hybridScore';
import { scoreNodes, type NodeAdapter } from '../compress/nodeScorer';
import { projectItem } from '../compress/projection';
import type { TokenCounter } from '../compress/tokens';
import type { Anchor, Item } from '../../contracts/region';
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


export interface BeforeAfter {
  before: SideMetrics;
  after: SideMetrics;
  delta: { decisionAccuracy: number; goldRecall: number; evidenceTokens: number; tokenReduction: number; prunedItemShare: number };
}

/** A gold span counts as recalled when kept regions cover at least this share of it. */
export const RECALL_COVERAGE = 0.5;

/** One question's raw counts under one adapter: sums of these give `SideMetrics` (and let folds be pooled). */
export interface QuestionCounts {
  decisions: number;
  agreed: number;
  pairs: number;
  pairsAgreed: number;
  goldSpans: number;
  goldKept: number;
  evidenceTokens: number;
  wholeTokens: number;
  items: number;
  pruned: number;
}

export const zeroCounts = (): QuestionCounts => ({ decisions: 0, agreed: 0, pairs: 0, pairsAgreed: 0, goldSpans: 0, goldKept: 0, evidenceTokens: 0, wholeTokens: 0, items: 0, pruned: 0 });

export function addQuestionCounts(a: QuestionCounts, b: QuestionCounts): QuestionCounts {
  const out = { ...a };
  for (const k of Object.keys(out) as Array<keyof QuestionCounts>) out[k] += b[k];
  return out;
}

/** Lexical evidence of a question's candidates, per model: the same for every weight tried. */
const lexicalCache = new WeakMap<PreparedQuestion, Map<LexicalModel, Map<string, number>>>();

export function lexicalOf(q: PreparedQuestion, model: LexicalModel): Map<string, number> {
  let byModel = lexicalCache.get(q);
  if (!byModel) lexicalCache.set(q, (byModel = new Map()));
  let scores = byModel.get(model);
  if (!scores) {
    scores = lexicalScores(
      q.question,
      q.candidates.map((c) => c.item),
      model,
    );
    byModel.set(model, scores);
  }
  return scores;
}

/**
 * The projection over one question's candidates, compared with its gold (see the file comment).
 * With `nodeScore` weights other than the dense cosine alone, the rule compares hybrid node
 * scores (`compress/hybridScore.ts`; lexical evidence over the question's candidates, as a
 * round's fresh items in an ask).
 */
export function questionCounts(q: PreparedQuestion, tokens: TokenCounter, adapter?: NodeAdapter, nodeScore?: NodeScoreWeights): QuestionCounts {
  const c = zeroCounts();
  const kept: Anchor[] = [];
  const lexical = isDenseOnly(nodeScore) ? undefined : lexicalOf(q, nodeScore!.model ?? 'bm25');
  for (const cand of q.candidates) {
    const dense = scoreNodes(q.query, cand.vectors, adapter);
    const s = lexical ? fuseNodeScores(dense, lexical, nodeScore!).scores : dense;
    const { kept: keptNodes, verdicts } = projectItem(cand.item.root, (n) => s.get(n.id) ?? Number.NEGATIVE_INFINITY);
    c.items++;
    if (verdicts.some((v) => v.decision === 'dropped-sibling')) c.pruned++;
    for (const n of keptNodes) {
      kept.push(n.anchor);
      c.evidenceTokens += tokens.count(n.text);
    }
    c.wholeTokens += tokens.count(cand.item.root.text);
    const visited = new Set(verdicts.filter((v) => v.decision === 'descend' || v.decision === 'keep-whole').map((v) => v.nodeId));
    for (const p of q.pairs) {
      if (p.itemId !== cand.item.id) continue;
      const ok = pairAgrees(p, (id) => s.get(id) ?? Number.NEGATIVE_INFINITY);
      c.pairs++;
      if (ok) c.pairsAgreed++;
      if (visited.has(p.parent)) {
        c.decisions++;
        if (ok) c.agreed++;
      }
    }
  }
  for (const g of q.gold) {
    c.goldSpans++;
    if (coverage(g, kept) >= RECALL_COVERAGE) c.goldKept++;
  }
  return c;
}

/** Ratios of summed counts over `questions` questions. */
export function sideMetrics(c: QuestionCounts, questions: number): SideMetrics {
  const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
  return {
    decisionAccuracy: ratio(c.agreed, c.decisions),
    decisions: c.decisions,
    pairAccuracy: ratio(c.pairsAgreed, c.pairs),
    pairs: c.pairs,
    goldRecall: ratio(c.goldKept, c.goldSpans),
    goldSpans: c.goldSpans,
    evidenceTokens: c.evidenceTokens,
    wholeTokens: c.wholeTokens,
    tokenShare: ratio(c.evidenceTokens, c.wholeTokens),
    prunedItemShare: ratio(c.pruned, c.items),
    items: c.items,
    questions,
  };
}

export function evaluateSide(questions: readonly PreparedQuestion[], tokens: TokenCounter, adapter?: NodeAdapter, nodeScore?: NodeScoreWeights): SideMetrics {
  return sideMetrics(questions.map((q) => questionCounts(q, tokens, adapter, nodeScore)).reduce(addQuestionCounts, zeroCounts()), questions.length);
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
