/**
 * Refinement-decision accuracy (design §10, §12): how often CANOPY's parent/child decisions agree
 * with the gold evidence. Along the path to gold — every visited inner node that overlaps a gold
 * leaf — each (parent, gold-overlapping child) pair is one decision:
 *  - the parent is fully gold (every leaf under it is gold): keeping it whole is right;
 *  - otherwise: descending into that child is right (the parent descended and the child scored
 *    ≥ the parent, so it was not dropped).
 * Nodes the rule never visited (inside a kept-whole or a dropped subtree) make no decision; the
 * item gate's whole-item drops are not parent/child decisions and are left out (gold recall
 * counts what they cost). docs/evaluation.md states the same definition.
 */
import { leavesOf } from './baselines';
import type { NodeVerdict } from './projection';
import type { RegionNode } from '../../contracts/region';

export interface DecisionCount {
  agree: number;
  total: number;
}

export function refinementDecisions(root: RegionNode, verdicts: readonly NodeVerdict[], goldLeaves: ReadonlySet<string>): DecisionCount {
  const byId = new Map(verdicts.map((v) => [v.nodeId, v]));
  let agree = 0;
  let total = 0;
  const walk = (node: RegionNode): void => {
    if (node.children.length === 0) return;
    const v = byId.get(node.id);
    if (!v || (v.decision !== 'descend' && v.decision !== 'keep-whole')) return;
    const leaves = leavesOf(node);
    const goldCount = leaves.filter((l) => goldLeaves.has(l.id)).length;
    if (goldCount === 0) return;
    const fullyGold = goldCount === leaves.length;
    for (const child of node.children) {
      if (!leavesOf(child).some((l) => goldLeaves.has(l.id))) continue;
      total++;
      if (fullyGold) {
        if (v.decision === 'keep-whole') agree++;
      } else if (v.decision === 'descend' && byId.get(child.id)?.decision !== 'dropped-sibling') {
        agree++;
      }
    }
    if (v.decision === 'descend') for (const child of node.children) walk(child);
  };
  walk(root);
  return { agree, total };
}
