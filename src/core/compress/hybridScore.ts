/**
 * Hybrid node scores for the CANOPY rule (design §5): what the parent-relative rule compares is a
 * weighted sum of the node's dense cosine against the query and its lexical evidence — the share
 * of the question's content terms the node mentions, each weighted by its rarity (IDF) among the
 * leaves of the items being compressed together (a round's fresh items). The rule itself is
 * unchanged; only its inputs gain the words the question asks about.
 *
 * Coverage is monotone (a parent mentions every term its children do), so a child ties its parent
 * exactly when it alone holds all of the parent's matched terms — then the rule descends to it and
 * drops the siblings that add nothing; when the terms are spread over several sentences no child
 * matches the parent and the region is kept whole. The dense part decides where the question's
 * words do not occur. Every component is kept per node, so the trace shows them and a replay can
 * re-weigh them without the encoder.
 */
import type { Item, RegionNode } from '../../contracts/region';
import { contentTerms } from '../text/terms';

/** Weights of the node score's components; `lexical: 0` is the dense cosine alone. */
export interface NodeScoreWeights {
  dense: number;
  lexical: number;
  /** How the lexical component is measured (default bm25). */
  model?: LexicalModel;
}

/** One node's score components (the fused score is their weighted sum). */
export interface NodeScoreComponents {
  dense: number;
  lexical: number;
}

export const DENSE_ONLY: NodeScoreWeights = { dense: 1, lexical: 0 };

const textOf = (n: RegionNode) => (n.header ? `${n.header}\n${n.text}` : n.text);

/**
 * Each leaf's content terms, kept with the region: the parsed documents the index caches hold the
 * same regions from question to question, so a warm question does not split and stem them again.
 */
const leafTerms = new WeakMap<RegionNode, string[]>();

/** How a node's lexical evidence is measured: IDF-weighted coverage of the question's terms, or BM25 (length-normalised). */
export type LexicalModel = 'coverage' | 'bm25';

const K1 = 1.2;
const B = 0.75;

/**
 * Lexical evidence of every node of the items, IDF over the items' leaves. `coverage`: the
 * IDF-weighted share of the question's terms the node mentions (0–1). `bm25`: BM25 of the node
 * (term frequency saturated, length normalised against the mean leaf), divided by the BM25 of a
 * mean-length leaf mentioning every term once, so a node that holds the question's words in few
 * words scores above a long one holding the same words. A question without content terms scores
 * 0 everywhere.
 */
export function lexicalScores(question: string, items: readonly Item[], model: LexicalModel = 'bm25'): Map<string, number> {
  const qTerms = [...new Set(contentTerms(question))];
  const q = new Set(qTerms);
  const out = new Map<string, number>();
  interface Counts { tf: Map<string, number>; length: number }
  const countsOf = new Map<string, Counts>();
  const leafCounts: Counts[] = [];
  const walk = (n: RegionNode): Counts => {
    let counts: Counts;
    if (n.children.length === 0) {
      let terms = leafTerms.get(n);
      if (!terms) leafTerms.set(n, (terms = contentTerms(textOf(n))));
      const tf = new Map<string, number>();
      for (const t of terms) if (q.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      counts = { tf, length: terms.length };
      leafCounts.push(counts);
    } else {
      const tf = new Map<string, number>();
      let length = 0;
      for (const c of n.children) {
        const cc = walk(c);
        length += cc.length;
        for (const [t, f] of cc.tf) tf.set(t, (tf.get(t) ?? 0) + f);
      }
      counts = { tf, length };
    }
    countsOf.set(n.id, counts);
    return counts;
  };
  for (const item of items) walk(item.root);
  const df = new Map<string, number>();
  for (const c of leafCounts) for (const t of c.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const n = Math.max(1, leafCounts.length);
  const idf = new Map(qTerms.map((t) => [t, Math.log(1 + n / Math.max(1, df.get(t) ?? 0))]));
  const total = qTerms.reduce((a, t) => a + idf.get(t)!, 0);
  const avgLength = Math.max(1, leafCounts.reduce((a, c) => a + c.length, 0) / n);
  for (const [id, c] of countsOf) {
    let score = 0;
    for (const [t, f] of c.tf) {
      if (model === 'coverage') score += idf.get(t)!;
      else score += (idf.get(t)! * f * (K1 + 1)) / (f + K1 * (1 - B + (B * Math.max(1, c.length)) / avgLength));
    }
    out.set(id, total > 0 ? score / total : 0);
  }
  return out;
}

/** The fused score of every node that has a dense score, and its components. */
export function fuseNodeScores(
  dense: ReadonlyMap<string, number>,
  lexical: ReadonlyMap<string, number>,
  weights: NodeScoreWeights,
): { scores: Map<string, number>; components: Map<string, NodeScoreComponents> } {
  const scores = new Map<string, number>();
  const components = new Map<string, NodeScoreComponents>();
  for (const [id, d] of dense) {
    const l = lexical.get(id) ?? 0;
    components.set(id, { dense: d, lexical: l });
    scores.set(id, weights.dense * d + weights.lexical * l);
  }
  return { scores, components };
}

export function isDenseOnly(weights: NodeScoreWeights | undefined): boolean {
  return !weights || (weights.lexical === 0 && weights.dense === 1);
}

/**
 * A round's node scores from each fresh item's dense scores: unchanged (with no components) when
 * the weights are the dense cosine alone, else fused with the lexical evidence of the round's
 * query over all the round's fresh items, components kept.
 */
export function hybridRound(
  query: string,
  scored: ReadonlyArray<{ item: Item; dense: Map<string, number> }>,
  weights: NodeScoreWeights | undefined,
): Array<{ scores: Map<string, number>; components?: Map<string, NodeScoreComponents> }> {
  if (isDenseOnly(weights)) return scored.map((s) => ({ scores: s.dense }));
  const lexical = lexicalScores(
    query,
    scored.map((s) => s.item),
    weights!.model,
  );
  return scored.map((s) => fuseNodeScores(s.dense, lexical, weights!));
}

