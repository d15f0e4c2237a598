/**
 * Gold evidence on region trees: each gold unit of a question is resolved to the leaves of the
 * built items that make it up, and a set of kept regions covers a unit when
 *  - sentence / row / span / anchor units: every one of its leaves lies inside a kept region;
 *  - page units: at least one kept region's leaf lies on that page;
 *  - paragraph units (datasets that mark only supporting paragraphs): at least one region of
 *    the paragraph is kept.
 * A span (or annotation anchor) is made of every leaf it overlaps.
 */
import { leavesOf } from '../core/compress/baselines';
import type { Anchor, Item, RegionNode } from '../contracts/region';
import type { GoldUnit } from './datasets/types';
import type { BuiltSource } from './items';

export type GoldKind = 'sentence' | 'row' | 'page' | 'span' | 'paragraph';

export interface ResolvedGold {
  kind: GoldKind;
  /** Item ids holding the unit's leaves. */
  itemIds: string[];
  leafIds: string[];
  mode: 'all' | 'any';
}

function overlaps(a: Anchor, g: Anchor): boolean {
  if (g.charStart !== undefined && g.charEnd !== undefined && a.charStart !== undefined && a.charEnd !== undefined) {
    return a.charStart < g.charEnd && g.charStart < a.charEnd;
  }
  if (g.page !== undefined && a.page !== undefined) {
    const aEnd = a.pageEnd ?? a.page;
    const gEnd = g.pageEnd ?? g.page;
    if (a.page > gEnd || g.page > aEnd) return false;
    if (!g.bbox || !a.bbox) return true;
    return a.bbox[0] < g.bbox[2] && g.bbox[0] < a.bbox[2] && a.bbox[1] < g.bbox[3] && g.bbox[1] < a.bbox[3];
  }
  if (g.row !== undefined && a.row !== undefined) return a.row === g.row;
  if (g.timeStart !== undefined && a.timeStart !== undefined) return a.timeStart < (g.timeEnd ?? g.timeStart) && g.timeStart < (a.timeEnd ?? a.timeStart);
  return false;
}

function onPage(a: Anchor, page: number): boolean {
  return a.page !== undefined && a.page <= page && page <= (a.pageEnd ?? a.page);
}

/** Resolves a question's gold units against its built sources; units that resolve to no leaf are counted in `unresolved`. */
export function resolveGold(units: GoldUnit[], sources: BuiltSource[]): { gold: ResolvedGold[]; unresolved: number } {
  const byKey = new Map(sources.map((s) => [s.key, s]));
  const gold: ResolvedGold[] = [];
  let unresolved = 0;
  const leavesWithItem = (s: BuiltSource) => s.items.flatMap((item) => leavesOf(item.root).map((leaf) => ({ item, leaf })));
  for (const u of units) {
    const src = byKey.get(u.source);
    if (!src || src.items.length === 0) {
      unresolved++;
      continue;
    }
    let picked: Array<{ item: Item; leaf: RegionNode }> = [];
    let kind: GoldKind;
    let mode: 'all' | 'any' = 'all';
    switch (u.granularity) {
      case 'sentence':
      case 'row': {
        kind = u.granularity;
        const id = src.leafByIndex.get(u.index);
        if (id) picked = leavesWithItem(src).filter((x) => x.leaf.id === id);
        break;
      }
      case 'span':
        kind = 'sentence';
        picked = leavesWithItem(src).filter((x) => overlaps(x.leaf.anchor, { file: '', charStart: u.start, charEnd: u.end }));
        break;
      case 'anchor':
        kind = 'span';
        picked = leavesWithItem(src).filter((x) => u.anchors.some((g) => overlaps(x.leaf.anchor, g)));
        break;
      case 'page':
        kind = 'page';
        mode = 'any';
        picked = leavesWithItem(src).filter((x) => onPage(x.leaf.anchor, u.index));
        break;
      case 'paragraph':
        kind = 'paragraph';
        mode = 'any';
        picked = leavesWithItem(src);
        break;
      default: {
        const never: never = u;
        throw new Error(`unknown gold unit ${JSON.stringify(never)}`);
      }
    }
    if (picked.length === 0) {
      unresolved++;
      continue;
    }
    gold.push({ kind, itemIds: [...new Set(picked.map((x) => x.item.id))], leafIds: picked.map((x) => x.leaf.id), mode });
  }
  return { gold, unresolved };
}

/** Ids of every leaf inside the kept regions. */
export function coveredLeaves(kept: Iterable<RegionNode>): Set<string> {
  const out = new Set<string>();
  for (const r of kept) for (const l of leavesOf(r)) out.add(l.id);
  return out;
}

export function isCovered(g: ResolvedGold, covered: ReadonlySet<string>): boolean {
  return g.mode === 'all' ? g.leafIds.every((id) => covered.has(id)) : g.leafIds.some((id) => covered.has(id));
}

/** Leaf ids of every gold unit (the "gold leaves" of a question). */
export function goldLeafSet(gold: ResolvedGold[]): Set<string> {
  return new Set(gold.filter((g) => g.mode === 'all').flatMap((g) => g.leafIds));
}
