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
import { contentTerms, words } from '../text/terms';

export interface ItemGateVerdict {
  kept: boolean;
  /** Why, in words, for the trace. */
  why: string;
}

const K1 = 1.2;
const B = 0.75;

/** BM25 of each item's whole text for the question, among the given items. */
export function itemBm25(question: string, items: readonly Item[]): number[] {
  const q = [...new Set(contentTerms(question))];
  const docs = items.map((it) => {
    const terms = contentTerms(`${it.title}\n${fullText(it.root)}`);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { tf, length: terms.length };
  });
  const n = docs.length;
  const avg = Math.max(1, docs.reduce((a, d) => a + d.length, 0) / Math.max(1, n));
  const df = new Map(q.map((t) => [t, docs.filter((d) => d.tf.has(t)).length]));
  return docs.map((d) => {
    let s = 0;
    for (const t of q) {
      const f = d.tf.get(t);
      if (!f) continue;
      const idf = Math.log(1 + (n - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
      s += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / avg));
    }
    return s;
  });
}

function fullText(n: RegionNode): string {
  return n.header ? `${n.header}\n${n.text}` : n.text;
}

/** "Tinted Windows (band)" → "tinted windows"; "Van Buren Township, Brown County" → "van buren township". */
export function subjectPhrase(title: string): string {
  const bare = title
    .replace(/\s*\((?:lines?|p\.|pp\.|page|pages|rows?)\s[^)]*\)\s*$/i, '')
    .replace(/\s*\([^)]*\)\s*$/, '')
    .split(',')[0]!;
  return words(bare).join(' ');
}

const phraseText = (text: string) => ` ${words(text).join(' ')} `;

/** A subject shorter than this (characters) is too likely to occur by chance ("us", "it"). */
const MIN_PHRASE = 3;

/**
 * The rank gate over one round's items: the best `ceil(share × items)` by BM25 of their whole text
 * among the round's items are kept for their rank; then every other item whose subject the question
 * or a kept item names is kept too (repeated while that adds items). The rest are dropped.
 */
export function gateItems(question: string, items: readonly Item[], share: number): Map<string, ItemGateVerdict> {
  const out = new Map<string, ItemGateVerdict>();
  const top = Math.max(1, Math.ceil(share * items.length));
  if (items.length <= top) {
    for (const it of items) out.set(it.id, { kept: true, why: `all ${items.length} of the round's items are within the gate's ${top}` });
    return out;
  }
  const score = itemBm25(question, items);
  const order = items.map((_, i) => i).sort((a, b) => score[b]! - score[a]! || a - b);
  const rankOf = new Map(order.map((i, r) => [i, r + 1]));
  const kept = new Set(order.slice(0, top));
  for (const i of kept) out.set(items[i]!.id, { kept: true, why: `rank ${rankOf.get(i)} of ${items.length} by BM25 for the question (the gate keeps ${top})` });
  const sources: Array<{ label: string; text: string }> = [{ label: 'the question', text: phraseText(question) }];
  for (const i of kept) sources.push({ label: `“${items[i]!.title}”`, text: phraseText(`${items[i]!.title}\n${fullText(items[i]!.root)}`) });
  for (let added = true; added; ) {
    added = false;
    items.forEach((it, i) => {
      if (kept.has(i)) return;
      const phrase = subjectPhrase(it.title);
      if (phrase.length < MIN_PHRASE) return;
      const from = sources.find((s) => s.text.includes(` ${phrase} `));
      if (!from) return;
      kept.add(i);
      added = true;
      out.set(it.id, { kept: true, why: `named by ${from.label}` });
      sources.push({ label: `“${it.title}”`, text: phraseText(`${it.title}\n${fullText(it.root)}`) });
    });
  }
  items.forEach((it, i) => {
    if (!out.has(it.id)) out.set(it.id, { kept: false, why: `rank ${rankOf.get(i)} of ${items.length} by BM25 for the question (the gate keeps ${top}), and named by neither the question nor a kept item` });
  });
  return out;
}
