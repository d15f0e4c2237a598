/**
 * The compressor a question runs with (design §5): the CANOPY projection (with the optional
 * item-level gate), or one of the baselines every comparison needs — no compression, flat top-m
 * leaves, a score threshold. Applied to one round's new items over their node scores.
 */
import type { CompressorSetting } from '../../contracts/trace';
import type { Item, RegionNode } from '../../contracts/region';
import { keepAboveThreshold, keepFlatTopM, keepWholeItems, leavesOf, type KeptByItem } from './baselines';
import { gateItems, glimpseLeaves, type ItemGateVerdict } from './itemGate';
import { glimpseVerdicts, projectItem, subtreeVerdicts, type NodeVerdict } from './projection';
import { bpeTokenCounter, type TokenCounter } from './tokens';

let sharedTokens: TokenCounter | undefined;

/** The best score among a region's leaves. */
const bestLeafScore = (root: RegionNode, score: (n: RegionNode) => number): number => Math.max(...leavesOf(root).map(score));

/** Applies the chosen compressor to one round's new items. */
export function compress(
  items: Item[],
  setting: CompressorSetting,
  score: (n: RegionNode) => number,
  aggregate: boolean,
  question = '',
  tokens: TokenCounter = (sharedTokens ??= bpeTokenCounter()),
): { kept: KeptByItem; verdicts: Map<string, NodeVerdict[]>; gate?: Map<string, ItemGateVerdict> } {
  const verdicts = new Map<string, NodeVerdict[]>();
  switch (setting.name) {
    case 'canopy': {
      const kept: KeptByItem = new Map();
      const best = Math.max(...items.map((i) => score(i.root)));
      const gate = setting.items !== undefined ? gateItems(question, items, setting.items, setting.minItems, setting.itemOrder ? { weights: setting.itemOrder, score } : undefined) : undefined;
      // With a floor, a glimpse must score near the best leaf of the items the gate kept.
      const floor =
        gate && setting.glimpse && setting.glimpseFloor !== undefined ? setting.glimpseFloor * Math.max(0, ...items.filter((i) => gate.get(i.id)?.kept).map((i) => bestLeafScore(i.root, score))) : undefined;
      for (const item of items) {
        const g = gate?.get(item.id);
        if (g && !g.kept && setting.glimpse && item.root.children.length > 0 && (floor === undefined || bestLeafScore(item.root, score) >= floor)) {
          // Dropped by the gate, but its best leaves stay as a glimpse of what it holds.
          const v: NodeVerdict[] = [{ nodeId: item.root.id, decision: 'descend', rule: 'glimpse', score: score(item.root), depth: 0 }];
          // The chosen leaves are the glimpse; every other region, sections included, went with the
          // item (as under a dropped sibling in projection.ts) and says so in the trace.
          // Its glimpse is the leaf with the best score per token: the gate judged the item not
          // worth its tokens, so what stays of it should cost little (docs/evaluation.md).
          const cost = (n: RegionNode) => tokens.count(n.header ? `${n.header}\n${n.text}` : n.text);
          kept.set(item.id, glimpseVerdicts(item.root, 0, new Set(glimpseLeaves(item.root, setting.glimpse, score, cost)), score, v));
          verdicts.set(item.id, v);
          continue;
        }
        if (g && !g.kept) {
          kept.set(item.id, []);
          verdicts.set(item.id, [{ nodeId: item.root.id, decision: 'dropped-sibling', rule: 'below-parent', score: score(item.root), depth: 0 }]);
          continue;
        }
        if (g && setting.wholeBelow !== undefined && item.root.text.length <= setting.wholeBelow) {
          // Short enough that refining it saves little and risks the evidence: kept whole, and
          // every region inside it says so.
          kept.set(item.id, [item.root]);
          const v: NodeVerdict[] = [{ nodeId: item.root.id, decision: 'keep-whole', rule: 'short-item', score: score(item.root), depth: 0 }];
          subtreeVerdicts(item.root, 0, 'ancestor-kept-whole', v);
          verdicts.set(item.id, v);
          continue;
        }
        if (setting.itemGate !== undefined && score(item.root) < best - setting.itemGate) {
          // Item-level gate (a measured extension, off by default): the whole item is dropped.
          kept.set(item.id, []);
          verdicts.set(item.id, [{ nodeId: item.root.id, decision: 'dropped-sibling', rule: 'below-parent', score: score(item.root), depth: 0 }]);
          continue;
        }
        const r = projectItem(item.root, score, { keepTablesWhole: aggregate, ...(setting.glimpse ? { glimpse: setting.glimpse } : {}) });
        kept.set(item.id, r.kept);
        verdicts.set(item.id, r.verdicts);
      }
      return { kept, verdicts, ...(gate ? { gate } : {}) };
    }
    case 'none':
      return { kept: keepWholeItems(items), verdicts };
    case 'flat':
      return { kept: keepFlatTopM(items, setting.m, score), verdicts };
    case 'threshold':
      return { kept: keepAboveThreshold(items, setting.threshold, score), verdicts };
    default: {
      const unreachable: never = setting;
      throw new Error(`unknown compressor ${JSON.stringify(unreachable)}`);
    }
  }
}
