/**
 * The training report's figures measured the way an ask compresses (issue 36): the compressor the
 * workspace's ask runs (CANOPY with the rank gate, short items kept whole, the glimpse) over the
 * hybrid node score the ask uses (the dense cosine, through the adapter, beside the lexical
 * evidence of the question's candidates — a round's fresh items in an ask), instead of the plain
 * rule of `report.ts` (dense cosine alone, no gate). The figures are `report.ts`'s:
 *
 * - refinement-decision accuracy: `compress/refinementDecisions.ts`, the evaluation harness's
 *   definition (the parent/child decisions the compressor made on the path to gold, from its
 *   verdicts; an item the gate dropped makes none, a short item kept whole makes its own);
 * - pair accuracy: the §10 pairs' agreement with the node scores, visited or not;
 * - gold recall, evidence tokens (and of whole items), pruned items (an item the gate dropped, or
 *   one with a subtree dropped).
 */
import type { CompressorSetting } from '../../contracts/trace';
import type { Anchor, RegionNode } from '../../contracts/region';
import type { SideMetrics } from '../../contracts/training';
import { compress } from '../compress/compressor';
import { describeItemOrder } from '../compress/itemGate';
import { fuseNodeScores, isDenseOnly, type NodeScoreWeights } from '../compress/hybridScore';
import { scoreNodes, type NodeAdapter } from '../compress/nodeScorer';
import { refinementDecisions } from '../compress/refinementDecisions';
import type { TokenCounter } from '../compress/tokens';
import { coverage, goldStatus } from '../annotate/overlap';
import { pairAgrees } from '../annotate/preferences';
import { addQuestionCounts, lexicalOf, RECALL_COVERAGE, sideMetrics, zeroCounts, type PreparedQuestion, type QuestionCounts } from './report';

/** What an ask decides with: its compressor and its node score (the adapter is passed apart). */
export interface AskConfiguration {
  compressor: CompressorSetting;
  nodeScore: NodeScoreWeights;
}

/** "CANOPY, rank gate 0.3 (at least 4 items; items ≤ 800 characters whole), glimpse 1; node score 1 × dense + 0.5 × lexical (coverage)". */
export function describeAskConfiguration(c: AskConfiguration): string {
  const k = c.compressor;
  const parts: string[] = [];
  if (k.name !== 'canopy') parts.push(k.name);
  else {
    const gate = k.items !== undefined ? `rank gate ${k.items}${k.minItems !== undefined ? ` (at least ${k.minItems} items${k.wholeBelow !== undefined ? `; items ≤ ${k.wholeBelow} characters whole` : ''})` : k.wholeBelow !== undefined ? ` (items ≤ ${k.wholeBelow} characters whole)` : ''}` : 'no rank gate';
    const order = k.items !== undefined && k.itemOrder ? `, items ranked by ${describeItemOrder(k.itemOrder)}` : '';
    parts.push(`CANOPY, ${gate}${order}${k.glimpse ? `, glimpse ${k.glimpse}` : ''}`);
  }
  const w = c.nodeScore;
  parts.push(isDenseOnly(w) ? 'node score dense cosine alone' : w.dense === 0 ? `node score lexical (${w.model ?? 'bm25'}) alone` : `node score ${w.dense} × dense + ${w.lexical} × lexical (${w.model ?? 'bm25'})`);
  return parts.join('; ');
}

/** Token counts of region texts, kept with the region: a fit runs the same regions through many configurations. */
const tokenCache = new WeakMap<RegionNode, number>();
function countTokens(n: RegionNode, tokens: TokenCounter): number {
  let c = tokenCache.get(n);
  if (c === undefined) tokenCache.set(n, (c = tokens.count(n.text)));
  return c;
}

/** Gold leaves of each candidate (they do not change with the configuration). */
const goldLeafCache = new WeakMap<PreparedQuestion, Set<string>>();
function goldLeavesOf(q: PreparedQuestion): Set<string> {
  let leaves = goldLeafCache.get(q);
  if (!leaves) {
    leaves = new Set();
    for (const c of q.candidates) {
      const status = goldStatus(c.item.root, q.gold);
      const walk = (n: RegionNode) => (n.children.length === 0 ? status.get(n.id)?.overlaps && leaves!.add(n.id) : n.children.forEach(walk));
      walk(c.item.root);
    }
    goldLeafCache.set(q, leaves);
  }
  return leaves;
}

/** The ask's node scores of every region of the question's candidates (the dense part through `adapter`). */
export function askNodeScores(q: PreparedQuestion, config: AskConfiguration, adapter?: NodeAdapter): Map<string, number> {
  const lexical = isDenseOnly(config.nodeScore) ? undefined : lexicalOf(q, config.nodeScore.model ?? 'bm25');
  const scores = new Map<string, number>();
  for (const cand of q.candidates) {
    const dense = scoreNodes(q.query, cand.vectors, adapter);
    const s = lexical ? fuseNodeScores(dense, lexical, config.nodeScore).scores : dense;
    for (const [id, v] of s) scores.set(id, v);
  }
  return scores;
}

/** Whether each candidate item holds gold (a leaf overlapping a gold span), in the candidates' order. */
export function goldItems(q: PreparedQuestion): boolean[] {
  const leaves = goldLeavesOf(q);
  const holds = (n: RegionNode): boolean => (n.children.length === 0 ? leaves.has(n.id) : n.children.some(holds));
  return q.candidates.map((c) => holds(c.item.root));
}

/** One question's counts under the ask's configuration (see the file comment). */
export function askQuestionCounts(q: PreparedQuestion, tokens: TokenCounter, config: AskConfiguration, adapter?: NodeAdapter): QuestionCounts {
  const c = zeroCounts();
  const scores = askNodeScores(q, config, adapter);
  const score = (n: RegionNode) => scores.get(n.id) ?? Number.NEGATIVE_INFINITY;
  const items = q.candidates.map((cand) => cand.item);
  const { kept, verdicts } = compress(items, config.compressor, score, false, q.question, tokens);
  const goldLeaves = goldLeavesOf(q);
  const keptAnchors: Anchor[] = [];
  for (const item of items) {
    c.items++;
    const v = verdicts.get(item.id) ?? [];
    const nodes = kept.get(item.id) ?? [];
    if (v.some((x) => x.decision === 'dropped-sibling' || x.rule === 'glimpse')) c.pruned++;
    for (const n of nodes) {
      keptAnchors.push(n.anchor);
      c.evidenceTokens += countTokens(n, tokens);
    }
    c.wholeTokens += countTokens(item.root, tokens);
    const d = refinementDecisions(item.root, v, goldLeaves);
    c.decisions += d.total;
    c.agreed += d.agree;
  }
  for (const p of q.pairs) {
    c.pairs++;
    if (pairAgrees(p, (id) => scores.get(id) ?? Number.NEGATIVE_INFINITY)) c.pairsAgreed++;
  }
  for (const g of q.gold) {
    c.goldSpans++;
    if (coverage(g, keptAnchors) >= RECALL_COVERAGE) c.goldKept++;
  }
  return c;
}

/** `SideMetrics` of the questions under the ask's configuration. */
export function evaluateAsk(questions: readonly PreparedQuestion[], tokens: TokenCounter, config: AskConfiguration, adapter?: NodeAdapter): SideMetrics {
  return sideMetrics(questions.map((q) => askQuestionCounts(q, tokens, config, adapter)).reduce(addQuestionCounts, zeroCounts()), questions.length);
}
