/**
 * The regions of an answer that the native views mark: per compressed item, its kept regions
 * (the kept forest) and, on request, the regions the rule dropped — each with the node, its item
 * and round, and a VS Code range from the node's parse-time anchor. Free of `vscode` (ranges are
 * plain numbers) so the Evidence view and the editor decorations share one reading of a trace.
 */
import type { AskTrace, TraceNode, TraceRetrievedItem } from '../../contracts/trace';

export interface EvidenceRegion {
  node: TraceNode;
  item: TraceRetrievedItem;
  round: number;
  kept: boolean;
  /** 0-based lines and columns for a VS Code Range; absent for anchors without text positions (PDF pages, images). */
  range?: { startLine: number; startColumn: number; endLine: number; endColumn: number };
}

/** Why a rule fired, in words (the same wording as the inspector). */
export const ruleWords: Record<string, string> = {
  'child-ge-parent': 'a child scored at least as high, so it was refined into those children',
  'no-child-ge-parent': 'every child scored below it, so it was kept whole',
  leaf: 'a leaf: nothing finer exists',
  'aggregate-table': 'an aggregate question keeps tables whole',
  'below-parent': 'scored below its parent while a sibling did not',
  'ancestor-kept-whole': 'inside a region kept whole',
  'ancestor-dropped': 'inside a dropped region',
  'short-item': 'a short item kept whole by the rank gate',
  glimpse: 'dropped (outside the rank gate, or below its parent), but kept as a glimpse of what was dropped: below its parent its best-scoring leaf, outside the gate its leaf with the best score per token',
  'flat-top-m': 'among the m best-scoring leaves (flat baseline)',
  threshold: 'scored at least the threshold (threshold baseline)',
  none: 'no rule decided on it',
  'item-gate': 'the item gate dropped the whole item',
  controller: 'the MAGE controller opened it for the reader',
};

function rangeOf(n: TraceNode): EvidenceRegion['range'] {
  const a = n.anchor;
  if (a.startLine === undefined || a.endLine === undefined) return undefined;
  return { startLine: a.startLine - 1, startColumn: a.startColumn ?? 0, endLine: a.endLine - 1, endColumn: a.endColumn ?? 0 };
}

/** Kept regions (and dropped ones when asked) of every compressed item, in round and document order. */
export function evidenceRegions(trace: AskTrace, withDropped: boolean): EvidenceRegion[] {
  const out: EvidenceRegion[] = [];
  for (const round of trace.rounds) {
    for (const item of round.retrieved) {
      if (item.repeated || !item.tree) continue;
      const kept = new Set(item.keptNodeIds);
      const stack: TraceNode[] = [item.tree];
      while (stack.length > 0) {
        const n = stack.pop()!;
        const isKept = kept.has(n.id);
        const isDropped = !isKept && (n.decision === 'dropped-sibling' || n.decision === 'dropped-by-baseline' || n.decision === 'dropped-by-controller');
        const range = rangeOf(n);
        if (isKept || (withDropped && isDropped)) out.push({ node: n, item, round: round.round, kept: isKept, ...(range ? { range } : {}) });
        // Below a kept or dropped region nothing else is marked.
        if (isKept || isDropped) continue;
        for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
      }
    }
  }
  return out;
}

/** A region of the shown trace by node id. */
export function findRegion(trace: AskTrace, nodeId: string): EvidenceRegion | undefined {
  for (const round of trace.rounds) {
    for (const item of round.retrieved) {
      if (item.repeated || !item.tree) continue;
      const stack: TraceNode[] = [item.tree];
      while (stack.length > 0) {
        const n = stack.pop()!;
        if (n.id === nodeId) {
          const range = rangeOf(n);
          return { node: n, item, round: round.round, kept: item.keptNodeIds.includes(n.id), ...(range ? { range } : {}) };
        }
        stack.push(...n.children);
      }
    }
  }
  return undefined;
}
