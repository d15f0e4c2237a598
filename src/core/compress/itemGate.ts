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
 * docs/evaluation.md).
 */
export function gateItems(question: string, items: readonly Item[], share: number, minItems = 1): Map<string, ItemGateVerdict> {
  const out = new Map<string, ItemGateVerdict>();
  const least = Math.max(1, minItems);
  const byRank = Math.max(1, Math.ceil(share * items.length));
  if (items.length <= Math.max(least, byRank)) {
    for (const it of items) out.set(it.id, { kept: true, why: `all ${items.length} of the round's items are within the gate's ${Math.max(least, byRank)}` });
    return out;
  }
  const score = itemBm25(question, items);
  const order = items.map((_, i) => i).sort((a, b) => score[b]! - score[a]! || a - b);
  const rankOf = new Map(order.map((i, r) => [i, r + 1]));
  const gateSays = least > byRank ? `the gate keeps ${byRank} for their rank, at least ${least} in all` : `the gate keeps ${byRank}`;
  const kept = new Set<number>();
  const sources: Array<{ label: string; text: string }> = [{ label: 'the question', text: phraseText(question) }];
  const keep = (i: number, why: string) => {
    kept.add(i);
    out.set(items[i]!.id, { kept: true, why });
    sources.push({ label: `“${items[i]!.title}”`, text: phraseText(`${items[i]!.title}\n${fullText(items[i]!.root)}`) });
  };
  for (const i of order.slice(0, byRank)) keep(i, `rank ${rankOf.get(i)} of ${items.length} by BM25 for the question (${gateSays})`);
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
      const i = order.find((j) => !kept.has(j))!;
      keep(i, `rank ${rankOf.get(i)} of ${items.length} by BM25 for the question (${gateSays})`);
      added = true;
    }
  }
  items.forEach((it, i) => {
    if (!out.has(it.id)) out.set(it.id, { kept: false, why: `rank ${rankOf.get(i)} of ${items.length} by BM25 for the question (${gateSays}), and named by neither the question nor a kept item` });
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
