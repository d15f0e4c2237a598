/**
 * Fits a retrieval profile's fusion from judged questions: for each question the two rankers'
 * lists (dense cosine and BM25, the same depth the retriever asks for) and graded relevance;
 * every candidate fusion is scored by mean nDCG@10 with the retriever's own fusion functions, so
 * what is fitted is exactly what runs. The candidates are score-level fusions with dense weights
 * on a grid (0 is BM25 alone, ties broken by the dense rank) — and, when the questions carry the
 * flat BM25 list too, every flat weight of its grid beside each — and the equal-weight RRF; the fit
 * reports both rankers alone beside them, and never picks a fusion below the better ranker unless
 * the better ranker is dense alone (which no fusion here expresses; the report says so).
 *
 * Used by `tools/fit-fusion.ts` (the built-in profile, from the development pools) and by
 * `canopy tune` (a user's encoder, from their gold annotations or qrels).
 */
import { reciprocalRankFusion, type Ranked } from './fusion';
import { linearFusion } from './hybrid';
import { ndcgAtK, type Qrels } from './metrics';
import type { FusionSetting } from './profile';

export interface JudgedQuestion {
  /** Dense ranking (item ids, cosine), best first. */
  dense: Ranked[];
  /** BM25 ranking (item ids, scores), best first. */
  lexical: Ranked[];
  /** BM25 ranking with the fields scored as one (bm25.ts `flat`); absent: flat weights are not fitted. */
  flat?: Ranked[];
  /** Relevance grade by item id (> 0 relevant). */
  qrels: Qrels;
}

export interface FusionFit {
  /** The chosen fusion. */
  best: FusionSetting;
  /** Mean nDCG@10 of the chosen fusion. */
  ndcg: number;
  /** Mean nDCG@10 of every candidate, by name (`bm25`, `dense`, `rrf`, `linear:0.2`, …). */
  figures: Record<string, number>;
  /** Questions with at least one relevant item (the others cannot be scored). */
  questions: number;
}

export const DENSE_WEIGHT_GRID: readonly number[] = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2];
/** Weights of the flat BM25 list (the per-field list gets 1 − f); 0 is the per-field score alone. */
export const FLAT_WEIGHT_GRID: readonly number[] = [0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1];

const ids = (list: Array<{ id: string }>) => list.map((r) => r.id);

/** Mean nDCG@10 of a ranking over judged questions. */
export function meanNdcg(questions: readonly JudgedQuestion[], rank: (q: JudgedQuestion) => string[]): number {
  let sum = 0;
  for (const q of questions) sum += ndcgAtK(rank(q), q.qrels, 10);
  return questions.length > 0 ? sum / questions.length : 0;
}

/** The ranking a fusion produces for one question (the retriever's functions). */
export function fusedRanking(q: JudgedQuestion, f: FusionSetting): string[] {
  if (f.kind === 'linear') {
    const flat = f.flat ? { list: (q.flat ?? []).slice(0, f.depth), weight: f.flat } : undefined;
    return ids(linearFusion(q.dense.slice(0, f.depth), q.lexical.slice(0, f.depth), f.dense, flat));
  }
  return ids(reciprocalRankFusion([q.dense, q.lexical], f.rrfK));
}

/**
 * Picks the fusion with the best mean nDCG@10; on a tie the smaller dense weight (closer to BM25,
 * which needs no encoder), then linear before RRF.
 */
export function fitFusion(judged: readonly JudgedQuestion[], depth = 100): FusionFit {
  const questions = judged.filter((q) => [...q.qrels.values()].some((g) => g > 0));
  const withFlat = questions.length > 0 && questions.every((q) => q.flat !== undefined);
  const figures: Record<string, number> = {
    bm25: meanNdcg(questions, (q) => ids(q.lexical)),
    ...(withFlat ? { 'bm25-flat': meanNdcg(questions, (q) => ids(q.flat!)) } : {}),
    dense: meanNdcg(questions, (q) => ids(q.dense)),
  };
  const flats = withFlat ? FLAT_WEIGHT_GRID : [0];
  const candidates: Array<{ name: string; fusion: FusionSetting }> = [
    ...flats.flatMap((fl) =>
      DENSE_WEIGHT_GRID.map((w) => ({
        name: fl > 0 ? `linear:${w}+flat:${fl}` : `linear:${w}`,
        fusion: (fl > 0 ? { kind: 'linear', dense: w, depth, flat: fl } : { kind: 'linear', dense: w, depth }) as FusionSetting,
      })),
    ),
    { name: 'rrf', fusion: { kind: 'rrf', rrfK: 60 } },
  ];
  let best = candidates[0]!;
  let bestScore = -Infinity;
  for (const c of candidates) {
    const score = meanNdcg(questions, (q) => fusedRanking(q, c.fusion));
    figures[c.name] = score;
    if (score > bestScore + 1e-12) {
      best = c;
      bestScore = score;
    }
  }
  return { best: best.fusion, ndcg: bestScore, figures, questions: questions.length };
}

/** The fusion in use and a fitted one, measured on questions the fit did not see. */
export interface HeldBackFusion {
  questions: number;
  /** Mean nDCG@10 of the fusion in use before. */
  before: number;
  /** Mean nDCG@10 of the fitted fusion. */
  after: number;
  beforeFusion: FusionSetting;
}

export function heldBackFusion(heldBack: readonly JudgedQuestion[], current: FusionSetting, fitted: FusionSetting): HeldBackFusion {
  return {
    questions: heldBack.length,
    before: meanNdcg(heldBack, (q) => fusedRanking(q, current)),
    after: meanNdcg(heldBack, (q) => fusedRanking(q, fitted)),
    beforeFusion: current,
  };
}
