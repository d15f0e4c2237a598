/**
 * Preference construction, exactly as design §10 / CANOPY §3.4. Along the path from an item's
 * root to its gold leaves, for each parent/child pair:
 *   - 'refine':     a gold-overlapping child is preferred over keeping its (not fully gold)
 *                   parent — s(child) should exceed s(parent), so the projection descends;
 *   - 'keep-whole': a fully-gold node is preferred over each of its children — s(node) should
 *                   exceed s(child), so the projection keeps it whole (and the path stops there).
 * Items without a located gold span give no pairs. Nothing else is added (no pairs pushing
 * non-gold children down): these are the paper's parent-relative comparisons, no more.
 */
import type { Anchor, Item, RegionNode } from '../../contracts/region';
import { goldStatus } from './overlap';

export type PreferenceRule = 'refine' | 'keep-whole';

export interface PreferencePair {
  itemId: string;
  /** The node whose score should be higher. */
  preferred: string;
  /** The node whose score should be lower. */
  other: string;
  /** The parent of the compared pair: where the projection makes this decision. */
  parent: string;
  rule: PreferenceRule;
}

export interface PreferenceCounts {
  pairs: number;
  /** Parent/child pairs left out because the child's text is the parent's. */
  identical: number;
  itemsWithGold: number;
  itemsWithoutGold: number;
  perRule: Record<PreferenceRule, number>;
}

const sameText = (a: RegionNode, b: RegionNode) => a.text.trim() === b.text.trim() && (a.header ?? '') === (b.header ?? '');

/** Pairs for one item given the question's located gold anchors (any file; others are ignored). */
export function itemPreferences(item: Item, gold: readonly Anchor[], skipped?: { identical: number }): PreferencePair[] {
  const status = goldStatus(item.root, gold);
  const pairs: PreferencePair[] = [];
  const push = (parent: RegionNode, child: RegionNode, pair: PreferencePair) => {
    if (sameText(parent, child)) {
      if (skipped) skipped.identical++;
    } else pairs.push(pair);
  };
  const walk = (node: RegionNode) => {
    const s = status.get(node.id)!;
    if (node.children.length === 0 || !s.overlaps) return;
    if (s.full) {
      for (const c of node.children) {
        push(node, c, { itemId: item.id, preferred: node.id, other: c.id, parent: node.id, rule: 'keep-whole' });
        // The same text one level down: the keep-whole decision that matters is made there.
        if (sameText(node, c)) walk(c);
      }
      return;
    }
    for (const c of node.children) {
      if (!status.get(c.id)!.overlaps) continue;
      push(node, c, { itemId: item.id, preferred: c.id, other: node.id, parent: node.id, rule: 'refine' });
      walk(c);
    }
  };
  walk(item.root);
  return pairs;
}

/** Pairs for a set of items, with the counts the report prints. */
export function buildPreferences(items: readonly Item[], gold: readonly Anchor[]): { pairs: PreferencePair[]; counts: PreferenceCounts } {
  const counts: PreferenceCounts = { pairs: 0, identical: 0, itemsWithGold: 0, itemsWithoutGold: 0, perRule: { refine: 0, 'keep-whole': 0 } };
  const pairs: PreferencePair[] = [];
  for (const item of items) {
    const p = itemPreferences(item, gold, counts);
    // A located gold span inside a leaf-only item (a one-sentence file) still marks the item as having gold.
    const hasGold = goldStatus(item.root, gold).get(item.root.id)!.overlaps;
    if (hasGold) counts.itemsWithGold++;
    else counts.itemsWithoutGold++;
    pairs.push(...p);
  }
  counts.pairs = pairs.length;
  for (const p of pairs) counts.perRule[p.rule]++;
  return { pairs, counts };
}

/** Whether scores agree with a pair as the projection reads them (ties descend, projection.ts). */
export function pairAgrees(pair: PreferencePair, score: (nodeId: string) => number): boolean {
  const preferred = score(pair.preferred);
  const other = score(pair.other);
  return pair.rule === 'refine' ? preferred >= other : preferred > other;
}

export function addCounts(a: PreferenceCounts, b: PreferenceCounts): PreferenceCounts {
  return {
    pairs: a.pairs + b.pairs,
    identical: a.identical + b.identical,
    itemsWithGold: a.itemsWithGold + b.itemsWithGold,
    itemsWithoutGold: a.itemsWithoutGold + b.itemsWithoutGold,
    perRule: { refine: a.perRule.refine + b.perRule.refine, 'keep-whole': a.perRule['keep-whole'] + b.perRule['keep-whole'] },
  };
}
