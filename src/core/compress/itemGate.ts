/**
 * The rank gate (design §5; compressor option `items`, off by default — docs/evaluation.md, "The
 * rank gate", has the figures): before CANOPY descends into a round's items,
 * whole items that neither rank among the round's best for the question nor are named by the
 * question or by a kept item are dropped. A multi-hop question's second item rarely shares the
 * question's words — it is the thing the first item names ("the band who released X" → the band's
 * own article) — so an item is kept when its subject (the title without locator or disambiguation)
 * occurs as a phrase in the question or in a kept item's text.
 */
import type { Item, RegionNode } from '../../contracts/region';
import { leavesOf } from './baselines';
import { Bm25Index, fieldTerms, type FieldTerms } from '../index/bm25';
import { words } from '../text/terms';
import { namedSubject } from '../text/titles';

export interface ItemGateVerdict {
  kept: boolean;
  /** Why, in words, for the trace. */
  why: string;
}

/**
 * Each item's whole-text terms, kept with its root region: the parsed documents the index caches
 * hold the same regions from question to question, so a warm question does not tokenise a whole
 * article or PDF section again for the gate (docs/evaluation.md: it cost most of the gate's time).
 */
const textTerms = new WeakMap<RegionNode, FieldTerms>();

/** BM25 of each item's title and whole text for the question, among the given items (the index's BM25). */
export function itemBm25(question: string, items: readonly Item[]): number[] {
  const roots = new Map(items.map((it) => [it.id, it.root]));
  const termsOf = (doc: { id: string; title: string; text: string }, field: 0 | 1): FieldTerms => {
    if (field === 0) return fieldTerms(doc.title);
    const root = roots.get(doc.id)!;
    let terms = textTerms.get(root);
    if (!terms) textTerms.set(root, (terms = fieldTerms(doc.text)));
    return terms;
  };
  const index = Bm25Index.build(items.map((it) => ({ id: it.id, title: it.title, text: fullText(it.root), modality: 'text' })), termsOf);
  const score = new Map(index.query(question, items.length).map((h) => [h.id, h.score]));
  return items.map((it) => score.get(it.id) ?? 0);
}

/**
 * The gate's item order when trained (issue 36; `train/itemOrderFit.ts` fits it by pairwise
 * preference, gold items over gold-free ones): a linear score over each item's features, each
 * standardised within the round (z-score: the round's items are what the gate compares). Absent,
 * the gate ranks by BM25 alone — the order every untrained workspace keeps.
 */
export interface ItemOrder {
  /** BM25 of the item's title and whole text for the question (`itemBm25`). */
  bm25: number;
  /** The node score of the item's root (the ask's hybrid score: dense cosine, through the adapter, beside the lexical evidence). */
  root: number;
  /** The best node score among the item's leaves. */
  leaf: number;
  /** The log of the item's length in characters (a workspace's gold may sit in its longer items, or its shorter). */
  length: number;
}

/** The features' names, in the order of `itemOrderFeatures`' columns. */
export const ITEM_ORDER_FEATURES = ['bm25', 'root', 'leaf', 'length'] as const satisfies ReadonlyArray<keyof ItemOrder>;

/** Words for each feature, for the trace and reports. */
const FEATURE_WORDS: Record<keyof ItemOrder, string> = { bm25: 'BM25', root: 'root score', leaf: 'best leaf score', length: 'log length' };

/** "0.62 × BM25 + 0.41 × root score − 0.1 × best leaf score" (weights as stored). */
export function describeItemOrder(o: ItemOrder): string {
  const terms = ITEM_ORDER_FEATURES.filter((f) => o[f] !== 0).map((f, i) => `${o[f] < 0 ? (i === 0 ? '−' : '− ') : i === 0 ? '' : '+ '}${Math.abs(o[f])} × ${FEATURE_WORDS[f]}`);
  return terms.length === 0 ? 'no feature (document order)' : terms.join(' ');
}

/** Whether an order ranks exactly as BM25 alone does (a positive BM25 weight and nothing else). */
export const isBm25Order = (o: ItemOrder | undefined): boolean => o === undefined || (o.bm25 > 0 && o.root === 0 && o.leaf === 0 && o.length === 0);

/** The values standardised to mean 0 and deviation 1 (all 0 when they do not vary); a value that is not finite counts as the least finite one. */
function standardise(values: readonly number[]): number[] {
  const finite = values.filter(Number.isFinite);
  const floor = finite.length > 0 ? Math.min(...finite) : 0;
  const xs = values.map((v) => (Number.isFinite(v) ? v : floor));
  const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length));
  return xs.map((x) => (sd > 1e-12 ? (x - mean) / sd : 0));
}

/** Each item's feature row (`ITEM_ORDER_FEATURES`), each column standardised among the round's items. */
export function itemOrderFeatures(question: string, items: readonly Item[], score: (n: RegionNode) => number): number[][] {
  const bestLeaf = (root: RegionNode): number => leavesOf(root).reduce((best, leaf) => Math.max(best, score(leaf)), Number.NEGATIVE_INFINITY);
  const columns = [standardise(itemBm25(question, items)), standardise(items.map((it) => score(it.root))), standardise(items.map((it) => bestLeaf(it.root))), standardise(items.map((it) => Math.log(1 + fullText(it.root).length)))];
  return items.map((_, i) => columns.map((c) => c[i]!));
}

/** The order's score of each item (weights · features). */
export function itemOrderScores(features: readonly number[][], o: ItemOrder): number[] {
  const w = ITEM_ORDER_FEATURES.map((f) => o[f]);
  return features.map((row) => row.reduce((a, x, j) => a + w[j]! * x, 0));
}

function fullText(n: RegionNode): string {
  return n.header ? `${n.header}\n${n.text}` : n.text;
}

/** "Copper Lanterns (band)" → "copper lanterns"; "Marrow Township, Kessel County" → "marrow township". */
export function subjectPhrase(title: string): string {
  return words(namedSubject(title)).join(' ');
}

const phraseText = (text: string) => ` ${words(text).join(' ')} `;

/** A subject shorter than this (characters) is too likely to occur by chance ("us", "it"). */
const MIN_PHRASE = 3;

/**
 * The rank gate over one round's items: the best `ceil(share × items)` by BM25 of their whole
 * text among the round's items are kept for their rank; then every other item whose subject the
 * question or a kept item names is kept too (repeated while that adds items); while fewer than
 * `minItems` are kept, the next by rank is kept and may name others in turn. The rest are dropped.
 * `minItems` counts every kept item: a question whose second hop a kept item names needs no
 * further item for its rank (given items, HotpotQA: 57.7% → 55.0% of the tokens, the same gold;
 * docs/evaluation.md). With a trained `order` (and the node scores it reads) the items are ranked
 * by its score instead of BM25, and each verdict says the score.
 */
export function gateItems(
  question: string,
  items: readonly Item[],
  share: number,
  minItems = 1,
  order?: { weights: ItemOrder; score: (n: RegionNode) => number },
): Map<string, ItemGateVerdict> {
  const out = new Map<string, ItemGateVerdict>();
  const least = Math.max(1, minItems);
  const byRank = Math.max(1, Math.ceil(share * items.length));
  if (items.length <= Math.max(least, byRank)) {
    for (const it of items) out.set(it.id, { kept: true, why: `all ${items.length} of the round's items are within the gate's ${Math.max(least, byRank)}` });
    return out;
  }
  // BM25 alone ranks by its raw score, so an untrained gate keeps exactly what it always kept.
  const trained = order && !isBm25Order(order.weights) ? order.weights : undefined;
  const score = trained ? itemOrderScores(itemOrderFeatures(question, items, order!.score), trained) : itemBm25(question, items);
  const byScore = items.map((_, i) => i).sort((a, b) => score[b]! - score[a]! || a - b);
  const rankOf = new Map(byScore.map((i, r) => [i, r + 1]));
  const ranked = (i: number) => (trained ? `rank ${rankOf.get(i)} of ${items.length} by the trained order (${describeItemOrder(trained)}, each standardised within the round: ${score[i]!.toFixed(2)})` : `rank ${rankOf.get(i)} of ${items.length} by BM25`);
  const gateSays = least > byRank ? `the gate keeps ${byRank} for their rank, at least ${least} in all` : `the gate keeps ${byRank}`;
  const kept = new Set<number>();
  const sources: Array<{ label: string; text: string }> = [{ label: 'the question', text: phraseText(question) }];
  const keep = (i: number, why: string) => {
    kept.add(i);
    out.set(items[i]!.id, { kept: true, why });
    sources.push({ label: `“${items[i]!.title}”`, text: phraseText(`${items[i]!.title}\n${fullText(items[i]!.root)}`) });
  };
  for (const i of byScore.slice(0, byRank)) keep(i, `${ranked(i)} for the question (${gateSays})`);
  for (let added = true; added; ) {
    added = false;
    items.forEach((it, i) => {
      if (kept.has(i)) return;
      const phrase = subjectPhrase(it.title);
      if (phrase.length < MIN_PHRASE) return;
      const from = sources.find((s) => s.text.includes(` ${phrase} `));
      if (!from) return;
      keep(i, `named by ${from.label}`);
      added = true;
    });
    if (!added && kept.size < least) {
      const i = byScore.find((j) => !kept.has(j))!;
      keep(i, `${ranked(i)} for the question (${gateSays})`);
      added = true;
    }
  }
  items.forEach((it, i) => {
    if (!out.has(it.id)) out.set(it.id, { kept: false, why: `${ranked(i)} for the question (${gateSays}), and named by neither the question nor a kept item` });
  });
  return out;
}

/**
 * What an item the gate drops keeps when the compressor asks for a glimpse of it: its `n`
 * best leaves (ties in document order), in document order, so an item whose words the question
 * does not share still shows its closest sentence instead of vanishing whole. With `cost` (a
 * leaf's tokens) the leaves are ranked by score per token — the knapsack's order for what the gate
 * judged not worth its whole tokens — else by score (a sibling dropped below its parent, whose best
 * leaf is often the answer beside the one repeating the question's words).
 */
export function glimpseLeaves(root: RegionNode, n: number, score: (node: RegionNode) => number, cost?: (node: RegionNode) => number): RegionNode[] {
  const leaves: RegionNode[] = [];
  const walk = (node: RegionNode) => (node.children.length === 0 ? leaves.push(node) : node.children.forEach(walk));
  walk(root);
  const value = cost ? (leaf: RegionNode) => score(leaf) / Math.max(1, cost(leaf)) : score;
  const best = new Set(
    leaves
      .map((leaf, i) => ({ leaf, i, s: value(leaf) }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .slice(0, Math.max(0, n))
      .map((x) => x.leaf),
  );
  return leaves.filter((l) => best.has(l));
}
