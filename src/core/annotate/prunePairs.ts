/**
 * Optional training pairs that complete §10's refine rule for the projection as it runs.
 *
 * §10 prefers "refining into a gold-overlapping child over keeping the parent". The projection
 * refines a parent into exactly the children that score ≥ it, so refining *into the gold child*
 * also needs the parent's other, gold-free children to score below it — otherwise they are kept
 * too or, worse, a gold-free child alone beats the parent and its gold sibling is dropped. These
 * pairs state that half: along the path to gold (parents that overlap gold but are not fully
 * gold, exactly the parents §10's refine pairs come from), the parent is preferred over each of
 * its children with no gold in it (s(parent) > s(child)). They compare the same parent/child
 * pairs §10 walks, never contradict a §10 pair, and items without located gold give none.
 *
 * They are a training option (`canopy train --prune-pairs`), counted apart from the §10 pairs;
 * the report's refinement-decision accuracy is always measured on the §10 pairs alone.
 */
import type { Anchor, Item, RegionNode } from '../../contracts/region';
import { goldStatus } from './overlap';

export interface PrunePair {
  itemId: string;
  /** The parent: it should score above its gold-free child. */
  preferred: string;
  /** The gold-free child. */
  other: string;
  parent: string;
  rule: 'prune-sibling';
}

const sameText = (a: RegionNode, b: RegionNode) => a.text.trim() === b.text.trim() && (a.header ?? '') === (b.header ?? '');

export function itemPrunePairs(item: Item, gold: readonly Anchor[]): PrunePair[] {
  const status = goldStatus(item.root, gold);
  const out: PrunePair[] = [];
  const walk = (node: RegionNode) => {
    const s = status.get(node.id)!;
    if (node.children.length === 0 || !s.overlaps || s.full) return;
    for (const c of node.children) {
      if (status.get(c.id)!.overlaps) walk(c);
      else if (!sameText(node, c)) out.push({ itemId: item.id, preferred: node.id, other: c.id, parent: node.id, rule: 'prune-sibling' });
    }
  };
  walk(item.root);
  return out;
}

export function prunePairs(items: readonly Item[], gold: readonly Anchor[]): PrunePair[] {
  return items.flatMap((item) => itemPrunePairs(item, gold));
}
