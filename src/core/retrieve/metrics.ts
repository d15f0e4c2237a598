/**
 * Ranking metrics: the evaluation reports them, and the topic compass selects its scorer by them.
 * nDCG@k follows trec_eval / pytrec_eval (what BEIR reports): gain = the graded relevance itself,
 * discount log2(rank + 1), ideal ranking = the judged documents sorted by relevance; unjudged
 * documents count as relevance 0.
 */

/** Relevance judgements of one query: document id -> grade (> 0 relevant). */
export type Qrels = ReadonlyMap<string, number>;

/** nDCG@k of one ranked list (best first). 0 when the query has no relevant document. */
export function ndcgAtK(ranked: readonly string[], qrels: Qrels, k: number): number {
  if (!Number.isInteger(k) || k < 1) throw new RangeError('k must be a positive integer');
  let dcg = 0;
  const seen = new Set<string>();
  let rank = 0;
  for (const id of ranked) {
    if (rank >= k) break;
    // A document listed twice counts once, at its first rank (as trec_eval dedupes runs).
    if (seen.has(id)) continue;
    seen.add(id);
    const rel = qrels.get(id) ?? 0;
    if (rel > 0) dcg += rel / Math.log2(rank + 2);
    rank++;
  }
  const ideal = [...qrels.values()]
    .filter((r) => r > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  let idcg = 0;
  ideal.forEach((rel, i) => {
    idcg += rel / Math.log2(i + 2);
  });
  return idcg > 0 ? dcg / idcg : 0;
}

/** Mean nDCG@k over queries that have at least one relevant document. */
export function meanNdcgAtK(runs: ReadonlyMap<string, readonly string[]>, qrels: ReadonlyMap<string, Qrels>, k: number): { mean: number; queries: number } {
  let sum = 0;
  let n = 0;
  for (const [qid, judged] of qrels) {
    if (![...judged.values()].some((r) => r > 0)) continue;
    sum += ndcgAtK(runs.get(qid) ?? [], judged, k);
    n++;
  }
  return { mean: n > 0 ? sum / n : 0, queries: n };
}

/**
 * Set-based retrieval metrics of one ranked list against the gold documents (design §12). The
 * ranked list is deduplicated (first occurrence counts); `k` cuts it. A query without gold
 * documents has no value (NaN), so callers leave it out of means.
 */
function topK(ranked: readonly string[], k: number): string[] {
  if (!Number.isInteger(k) || k < 1) throw new RangeError('k must be a positive integer');
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of ranked) {
    if (out.length >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

/** Share of the gold documents found in the top k. */
export function recallAtK(ranked: readonly string[], gold: ReadonlySet<string>, k: number): number {
  if (gold.size === 0) return Number.NaN;
  return topK(ranked, k).filter((id) => gold.has(id)).length / gold.size;
}

/** Share of the top k (k slots, even if fewer were returned) that is gold. */
export function precisionAtK(ranked: readonly string[], gold: ReadonlySet<string>, k: number): number {
  if (gold.size === 0) return Number.NaN;
  return topK(ranked, k).filter((id) => gold.has(id)).length / k;
}

/** 1 when every gold document is in the top k (every hop found), else 0. */
export function allGoldAtK(ranked: readonly string[], gold: ReadonlySet<string>, k: number): number {
  if (gold.size === 0) return Number.NaN;
  const top = new Set(topK(ranked, k));
  return [...gold].every((g) => top.has(g)) ? 1 : 0;
}

/** IE@k = Precision@k × Recall@k (design §12). */
export function ieAtK(ranked: readonly string[], gold: ReadonlySet<string>, k: number): number {
  return precisionAtK(ranked, gold, k) * recallAtK(ranked, gold, k);
}
