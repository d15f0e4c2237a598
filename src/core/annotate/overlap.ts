/**
 * How much of one region's anchor is covered by a set of other anchors (gold spans, kept
 * regions). One definition serves preference construction (which nodes are gold) and the report
 * (which gold spans the kept evidence covers), so training and evaluation agree on "gold".
 *
 * The finest shared coordinate wins: char offsets when both sides have them (text formats,
 * CSV rows), else table row indices, else PDF pages, else transcript seconds.
 */
import type { Anchor, RegionNode } from '../../contracts/region';

type Range = [number, number];

function unionLength(target: Range, ranges: Range[]): number {
  const clipped = ranges
    .map(([s, e]): Range => [Math.max(s, target[0]), Math.min(e, target[1])])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [s, e] of clipped) {
    if (e <= end) continue;
    covered += e - Math.max(s, end);
    end = e;
  }
  return covered;
}

/** Share of `target` (0–1) covered by `spans` in the same file. */
export function coverage(target: Anchor, spans: readonly Anchor[]): number {
  const same = spans.filter((s) => s.file === target.file);
  if (same.length === 0) return 0;
  if (target.charStart !== undefined && target.charEnd !== undefined) {
    const chars = same.filter((s) => s.charStart !== undefined && s.charEnd !== undefined).map((s): Range => [s.charStart!, s.charEnd!]);
    if (chars.length > 0) {
      const len = target.charEnd - target.charStart;
      if (len <= 0) return chars.some(([s, e]) => s <= target.charStart! && target.charStart! < e) ? 1 : 0;
      return unionLength([target.charStart, target.charEnd], chars) / len;
    }
  }
  if (target.row !== undefined) return same.some((s) => s.row === target.row) ? 1 : 0;
  if (target.page !== undefined) {
    const last = target.pageEnd ?? target.page;
    const pages = same.filter((s) => s.page !== undefined).map((s): Range => [s.page!, (s.pageEnd ?? s.page!) + 1]);
    return unionLength([target.page, last + 1], pages) / (last + 1 - target.page);
  }
  if (target.timeStart !== undefined && target.timeEnd !== undefined && target.timeEnd > target.timeStart) {
    const times = same.filter((s) => s.timeStart !== undefined && s.timeEnd !== undefined).map((s): Range => [s.timeStart!, s.timeEnd!]);
    return unionLength([target.timeStart, target.timeEnd], times) / (target.timeEnd - target.timeStart);
  }
  return 0;
}

/** A leaf is "fully gold" from this share of coverage on (sentence splitters differ by a few chars). */
export const FULL_GOLD_COVERAGE = 0.9;

export interface GoldStatus {
  /** Some leaf below (or the node itself, for a leaf) overlaps a gold span. */
  overlaps: boolean;
  /** Every leaf below is (almost) entirely gold. */
  full: boolean;
}

/**
 * Gold status of every node of a tree, decided on the leaves: a parent's own anchor may hold
 * text no leaf carries (a heading line), but what the projection keeps or drops is leaves.
 */
export function goldStatus(root: RegionNode, gold: readonly Anchor[]): Map<string, GoldStatus> {
  const out = new Map<string, GoldStatus>();
  const visit = (n: RegionNode): GoldStatus => {
    let status: GoldStatus;
    if (n.children.length === 0) {
      const c = coverage(n.anchor, gold);
      status = { overlaps: c > 0, full: c >= FULL_GOLD_COVERAGE };
    } else {
      const kids = n.children.map(visit);
      status = { overlaps: kids.some((k) => k.overlaps), full: kids.every((k) => k.full) };
    }
    out.set(n.id, status);
    return status;
  };
  visit(root);
  return out;
}
