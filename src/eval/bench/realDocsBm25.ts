/**
 * The flat BM25 baseline of the real-document benchmark's NQ sample: what a plain lexical list of
 * whole passages gives at a token budget, so the ask's evidence can be set against it at equal
 * tokens (issue 32: "in the evidence at or above BM25's top-k passage curve at equal tokens").
 *
 *  - Ranking: the project's own BM25 (src/core/index/bm25.ts, the per-field scoring the index's
 *    lexical search uses) over the same passages, title and text as two fields.
 *  - A passage holds the answer when any answer string is in its text as written into the corpus
 *    (heading and passage), by the same rule as the printed answer (answerHasGoldString).
 *  - Tokens: each passage's file text counted with the pipeline's cl100k_base counter.
 *  - The curve: for k = 1, 2, … the share of questions whose top-k passages hold an answer, and
 *    the mean tokens of those k passages.
 *  - At equal tokens: the curve read at the ask's mean evidence tokens, linearly between its two
 *    neighbouring points (from (0 tokens, 0) below k = 1); undefined past its last point. And per
 *    question: the top passages that fit, whole, in that question's own evidence tokens.
 */
import { Bm25Index } from '../../core/index/bm25';
import type { TokenCounter } from '../../core/compress/tokens';
import { answerHasGoldString } from './realDocsScore';

/** The curve's points shown in the report's table (the deeper ones serve the comparison at equal tokens). */
export const BM25_TABLE_K = 10;

export interface Bm25Passage {
  id: string;
  title: string;
  text: string;
  /** The text as the corpus file holds it: what is tested for the answer and counted. */
  written: string;
}

/** One question's BM25 list, best first: each passage's tokens and whether it holds an answer. */
export interface RankedPassages {
  ids: string[];
  tokens: number[];
  hasAnswer: boolean[];
}

export interface Bm25Point {
  k: number;
  /** Questions whose top-k passages hold an answer string. */
  withAnswer: number;
  share: number;
  /** Mean tokens of the top-k passages over the questions. */
  meanTokens: number;
}

export interface Bm25Ranker {
  rank(question: string, answers: readonly string[]): RankedPassages;
}

/** A ranker over the passages, returning the top `depth` for a question. */
export function bm25Ranker(passages: readonly Bm25Passage[], depth: number, counter: TokenCounter): Bm25Ranker {
  const index = Bm25Index.build(passages.map((p) => ({ id: p.id, title: p.title, text: p.text, modality: 'text' })));
  const byId = new Map(passages.map((p) => [p.id, p]));
  const tokens = new Map<string, number>();
  const tokensOf = (p: Bm25Passage) => {
    let n = tokens.get(p.id);
    if (n === undefined) tokens.set(p.id, (n = counter.count(p.written)));
    return n;
  };
  return {
    rank(question, answers) {
      const hits = index.query(question, depth);
      const ps = hits.map((h) => byId.get(h.id)!);
      return { ids: ps.map((p) => p.id), tokens: ps.map(tokensOf), hasAnswer: ps.map((p) => answerHasGoldString(answers, p.written)) };
    },
  };
}

/** The curve for k = 1 … kMax (a list shorter than k counts all it has). */
export function bm25Curve(ranked: readonly RankedPassages[], kMax: number): Bm25Point[] {
  const out: Bm25Point[] = [];
  for (let k = 1; k <= kMax; k++) {
    let withAnswer = 0;
    let tokens = 0;
    for (const r of ranked) {
      if (r.hasAnswer.slice(0, k).some(Boolean)) withAnswer++;
      tokens += r.tokens.slice(0, k).reduce((a, b) => a + b, 0);
    }
    const n = ranked.length;
    out.push({ k, withAnswer, share: n === 0 ? 0 : withAnswer / n, meanTokens: n === 0 ? 0 : tokens / n });
  }
  return out;
}

/** The curve's share at `tokens`, interpolated (see the module comment); undefined past the last point. */
export function shareAtTokens(curve: readonly Bm25Point[], tokens: number): number | undefined {
  let prev = { meanTokens: 0, share: 0 };
  for (const p of curve) {
    if (tokens <= p.meanTokens) {
      const span = p.meanTokens - prev.meanTokens;
      return span <= 0 ? p.share : prev.share + ((tokens - prev.meanTokens) / span) * (p.share - prev.share);
    }
    prev = p;
  }
  return undefined;
}

/** Whether the top passages that fit whole in `budget` tokens hold an answer string. */
export function answerWithinBudget(r: RankedPassages, budget: number): boolean {
  let used = 0;
  for (let i = 0; i < r.tokens.length; i++) {
    used += r.tokens[i]!;
    if (used > budget) return false;
    if (r.hasAnswer[i]) return true;
  }
  return false;
}

/** The 1-based rank of the first passage holding an answer, or undefined within the list. */
export function firstAnswerRank(r: RankedPassages): number | undefined {
  const i = r.hasAnswer.indexOf(true);
  return i < 0 ? undefined : i + 1;
}
