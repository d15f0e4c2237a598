/**
 * Reciprocal-rank fusion of several rankings (Cormack et al., 2009): score = Σ 1 / (rrfK + rank),
 * rank 1-based. Robust to the very different scales of cosine and BM25 scores, with one
 * constant (rrfK, conventionally 60).
 */

export interface Ranked {
  id: string;
  score: number;
}

export interface Fused {
  id: string;
  fused: number;
  /** Per input ranking: the item's 0-based rank and raw score there, when it appeared. */
  parts: Array<{ rank: number; score: number } | undefined>;
}

export function reciprocalRankFusion(rankings: Ranked[][], rrfK = 60): Fused[] {
  const table = new Map<string, Fused>();
  rankings.forEach((ranking, which) => {
    ranking.forEach((entry, rank) => {
      let f = table.get(entry.id);
      if (!f) {
        f = { id: entry.id, fused: 0, parts: rankings.map(() => undefined) };
        table.set(entry.id, f);
      }
      if (f.parts[which] !== undefined) return; // first occurrence counts
      f.parts[which] = { rank, score: entry.score };
      f.fused += 1 / (rrfK + rank + 1);
    });
  });
  // Ties: the item with the better best-rank first, then id for stability.
  const bestRank = (f: Fused) => Math.min(...f.parts.map((p) => (p ? p.rank : Infinity)));
  return [...table.values()].sort((a, b) => b.fused - a.fused || bestRank(a) - bestRank(b) || (a.id < b.id ? -1 : 1));
}
