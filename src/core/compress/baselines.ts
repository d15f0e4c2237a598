/**
 * The compressors CANOPY is compared with (design §5), for evaluation and for users to compare
 * in the inspector: no compression (whole items), flat top-m leaves by score across all items,
 * and a score-threshold filter on leaves. Each returns, per item, the kept regions in document
 * order, so every compressor feeds the reader the same way.
 */
import type { Item, RegionNode } from '../../contracts/region';

export type CompressorName = 'none' | 'flat' | 'threshold' | 'canopy';

export function leavesOf(node: RegionNode): RegionNode[] {
  if (node.children.length === 0) return [node];
  return node.children.flatMap(leavesOf);
}

/** Kept regions per item id. */
export type KeptByItem = Map<string, RegionNode[]>;

export function keepWholeItems(items: Item[]): KeptByItem {
  return new Map(items.map((item) => [item.id, [item.root]]));
}

/** The m highest-scoring leaves over all items (ties broken by document order), kept in document order. */
export function keepFlatTopM(items: Item[], m: number, score: (node: RegionNode) => number): KeptByItem {
  const all = items.flatMap((item, itemIndex) =>
    leavesOf(item.root).map((leaf, leafIndex) => ({ item, leaf, s: score(leaf), order: itemIndex * 1e9 + leafIndex })),
  );
  const chosen = new Set(
    [...all]
      .sort((a, b) => b.s - a.s || a.order - b.order)
      .slice(0, Math.max(0, m))
      .map((x) => x.leaf),
  );
  return new Map(items.map((item) => [item.id, leavesOf(item.root).filter((l) => chosen.has(l))]));
}

/** Leaves scoring at least `threshold`. */
export function keepAboveThreshold(items: Item[], threshold: number, score: (node: RegionNode) => number): KeptByItem {
  return new Map(items.map((item) => [item.id, leavesOf(item.root).filter((l) => score(l) >= threshold)]));
}
