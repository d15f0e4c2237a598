/**
 * The round engine's seams for a fixed question context, as the given-items evaluation uses
 * them: a question's own items are the one round's candidates, and their node scores were
 * computed once beforehand (shared by every configuration compared on the question).
 */
import type { Item } from '../../contracts/region';
import type { NodeScoreComponents } from '../compress/hybridScore';
import type { CandidateSource, NodeScorer, ScoredItem } from './rounds';

/** The items, in their given order, as the only round's candidates. */
export function givenItems(items: readonly Item[]): CandidateSource {
  return {
    async candidates() {
      return { kind: 'ranked', ranked: items.map((item, rank) => ({ itemId: item.id, rank, scores: { fused: 0 }, item })), candidates: [] };
    },
  };
}

/**
 * Node scores looked up in one map for every item (a node the map lacks scores −∞), with the
 * hybrid score's components where the caller has them.
 */
export function fixedScores(scores: ReadonlyMap<string, number>, components?: ReadonlyMap<string, NodeScoreComponents>): NodeScorer {
  return {
    async score(fresh) {
      const out = new Map<string, ScoredItem>();
      for (const c of fresh) {
        if (!c.item) throw new Error(`candidate ${c.itemId} came without its item`);
        const own = new Map<string, number>();
        const parts = new Map<string, NodeScoreComponents>();
        const walk = (n: Item['root']) => {
          const s = scores.get(n.id);
          if (s !== undefined) own.set(n.id, s);
          const p = components?.get(n.id);
          if (p) parts.set(n.id, p);
          n.children.forEach(walk);
        };
        walk(c.item.root);
        out.set(c.itemId, { item: c.item, scores: own, ...(parts.size > 0 ? { components: parts } : {}) });
      }
      return out;
    },
  };
}
