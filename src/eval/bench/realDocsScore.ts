/**
 * Scoring one answer of the real-document benchmark from its trace:
 *
 *  - gold answer string in the printed answer: SQuAD — any gold answer text, normalised as in the
 *    SQuAD / HotpotQA evaluation scripts (answers.ts), occurs in the answer at word boundaries
 *    (citation markers "[n]" removed first). FinanceBench — the "key fact" rule (keyFactCheck).
 *  - gold cited: a citation's region lies on the gold — at least half of its characters inside
 *    the gold paragraph (Markdown), or at least half of its pages among the gold pages (PDF). A
 *    whole section or page group that merely contains the gold does not count.
 *    A documentation-folder question's gold is a whole file: any region of it is on the gold.
 *  - gold in the kept evidence: some leaf of a kept region lies on the gold (same rule), over all
 *    rounds and over round 1 alone.
 *  - answer string in the kept evidence (not FinanceBench): any answer string, by the printed
 *    answer's rule, in the text of the regions kept over all rounds (a row with its header);
 *    and whether any retrieved item of any round lies in the gold's file.
 *  - the critic's calibration: each verdict the critic gave (one per round it judged) beside
 *    whether the gold was already in the evidence kept up to that round — "sufficient" is right
 *    when the gold was there, "insufficient" when it was not. Kept regions are looked up by id in the index's parsed
 *    documents, so regions the MAGE controller kept outside the retrieved item count too.
 *
 * Anchors: PDF pages are 0-based (`Anchor.page`, src/core/model/region.ts), as FinanceBench's
 * `evidence_page_num` is; Markdown anchors carry UTF-16 character offsets into the file.
 */
import { containsAnswer, normalizeAnswer, searchableAnswer } from '../answers';
import type { Anchor, RegionNode } from '../../contracts/region';
import { contentTerms } from '../../core/text/terms';
import type { AskTrace } from '../../contracts/trace';
import { regionText } from '../outcome';
import type { RealDocsGold, RealDocsQuestion } from './realDocsCorpus';

/** Whether a region with this anchor lies on the gold (see the module comment). */
export function onGold(a: Anchor, gold: RealDocsGold): boolean {
  if (a.file !== gold.file) return false;
  if (gold.kind === 'file') return true;
  if (gold.kind === 'paragraph') {
    if (a.charStart === undefined || a.charEnd === undefined) return false;
    const len = a.charEnd - a.charStart;
    if (len <= 0) return a.charStart >= gold.charStart && a.charStart < gold.charEnd;
    const inside = Math.min(a.charEnd, gold.charEnd) - Math.max(a.charStart, gold.charStart);
    return inside > 0 && 2 * inside >= len;
  }
  if (a.page === undefined) return false;
  const end = a.pageEnd ?? a.page;
  let on = 0;
  for (let p = a.page; p <= end; p++) if (gold.pages.includes(p)) on++;
  return on > 0 && 2 * on >= end - a.page + 1;
}

function leaves(n: RegionNode): RegionNode[] {
  return n.children.length === 0 ? [n] : n.children.flatMap(leaves);
}

/** A number as written: its value (sign dropped: filings print negatives in parentheses) and decimals shown (trailing zeros ignored). */
interface WrittenNumber {
  text: string;
  value: number;
  decimals: number;
}

/**
 * The numbers of a text that state facts: "$1,577.00", "34.6%", "0.67". Labels glued to letters
 * ("FY2022", "Q2", "10-K" keeps 10) and bare years (1900–2100 without $, %, decimals or
 * thousands separators) are left out.
 */
export function factNumbers(text: string): WrittenNumber[] {
  const out: WrittenNumber[] = [];
  for (const m of text.matchAll(/(\$\s?)?(\d[\d,]*(?:\.\d+)?)(\s?%)?/g)) {
    const before = m.index === 0 ? '' : text[m.index - 1]!;
    if (/[\p{L}\d.]/u.test(before)) continue;
    const raw = m[2]!.replace(/,+$/, '');
    const plain = raw.replace(/,/g, '');
    const value = Number(plain);
    if (!Number.isFinite(value)) continue;
    const frac = plain.includes('.') ? plain.split('.')[1]!.replace(/0+$/, '') : '';
    const isYear = !m[1] && !m[3] && !raw.includes(',') && !plain.includes('.') && value >= 1900 && value <= 2100;
    if (isYear) continue;
    out.push({ text: m[0].trim(), value, decimals: frac.length });
  }
  return out;
}

/** A printed number states `g` when it is written at least as precisely and rounds to it. */
function sameNumber(g: WrittenNumber, p: WrittenNumber): boolean {
  return p.decimals >= g.decimals && p.value.toFixed(g.decimals) === g.value.toFixed(g.decimals);
}

export interface KeyFacts {
  kind: 'numbers' | 'terms';
  wanted: string[];
  found: string[];
  ok: boolean;
}

/**
 * FinanceBench "key fact" in the printed answer. The key facts of a reference answer are its
 * fact numbers (factNumbers) that the question does not already state; a number is found when
 * the answer prints it at the reference's precision or finer ("$1577.00" ← "1,577"; "~90%" ←
 * "89.6%"). A reference without such numbers ("Developed Rest of the World") has its content
 * terms (stemmed, stop words out) that are not in the question as key facts. The answer has the
 * key fact when at least half of them (and at least one) are found. An extractive reader cannot
 * print a ratio it would have to compute; such questions count as misses, which is the point.
 */
export function keyFactCheck(reference: string, question: string, printed: string): KeyFacts {
  const asked = factNumbers(question);
  const numbers: WrittenNumber[] = [];
  for (const n of factNumbers(reference)) {
    if (asked.some((a) => a.value === n.value) || numbers.some((x) => x.value === n.value)) continue;
    numbers.push(n);
  }
  const half = (found: number, wanted: number) => found > 0 && 2 * found >= wanted;
  if (numbers.length > 0) {
    const shown = factNumbers(printed);
    const found = numbers.filter((g) => shown.some((p) => sameNumber(g, p)));
    return { kind: 'numbers', wanted: numbers.map((n) => n.text), found: found.map((n) => n.text), ok: half(found.length, numbers.length) };
  }
  const questionTerms = new Set(contentTerms(question));
  const all = [...new Set(contentTerms(reference))].filter((t) => t !== 'yes' && t !== 'no');
  const own = all.filter((t) => !questionTerms.has(t));
  const wanted = own.length > 0 ? own : all;
  const shown = new Set(contentTerms(printed));
  const found = wanted.filter((t) => shown.has(t));
  return { kind: 'terms', wanted, found, ok: half(found.length, wanted.length) };
}

const withoutMarkers = (text: string) => text.replace(/\[\d+\]/g, ' ');

/**
 * Punctuation read as a word break, not deleted: "Six-time Grammy winner", "Thoreau's essay",
 * "(1641–1679)" and "Leonardo da Vinci's note books" hold the gold "Six", "Thoreau", "1679" and
 * "Leonardo da Vinci", which the official normalisation cannot find in them: it deletes ASCII
 * punctuation, joining the words ("sixtime", "thoreaus"), and keeps the en dash ("1641–1679" stays
 * one word). A possessive's "s" goes with its apostrophe.
 */
function normalizeSpaced(s: string): string {
  const t = s
    .toLowerCase()
    .replace(/['’]s\b/g, ' ')
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ');
  return t.split(/\s+/).filter((w) => w.length > 0).join(' ');
}

/**
 * SQuAD: any gold answer text in the printed answer, normalised as the official scripts do (lower
 * case, punctuation and articles removed) — or with punctuation read as a word break on both
 * sides, since a quoted sentence, unlike an extracted span, carries the gold string inside
 * hyphenated words, possessives and parentheses.
 */
export function answerHasGoldString(answers: readonly string[], printed: string): boolean {
  const text = normalizeAnswer(withoutMarkers(printed));
  const spaced = normalizeSpaced(withoutMarkers(printed));
  return answers.some((a) => {
    const n = searchableAnswer(a);
    if (n === undefined) return false;
    if (containsAnswer(text, n)) return true;
    const m = normalizeSpaced(a);
    return m !== '' && containsAnswer(spaced, m);
  });
}

export interface AnswerMetrics {
  rounds: number;
  stop: string;
  items: number;
  evidenceTokens: number;
  readerTokens: number;
  readerTruncated: boolean;
  /** The pipeline's own time (the trace's `ms`). */
  traceMs: number;
  answer: string;
  /** `kind`: the cited region's kind in the index (a heading, a row…); `text`: its first 160 characters. */
  citations: Array<{ marker: number; file: string; page?: number; pageEnd?: number; startLine?: number; endLine?: number; kind?: string; text: string; onGold: boolean }>;
  answerHasGold: boolean;
  keyFacts?: KeyFacts;
  cited1Gold: boolean;
  citedAnyGold: boolean;
  /** An answer string in the kept regions' text (undefined for FinanceBench, whose answers are not strings to find). */
  answerInEvidence?: boolean;
  /** Some retrieved item, of any round, is in the gold's file. */
  goldFileRetrieved?: boolean;
  goldInEvidence: boolean;
  goldInEvidenceRound1: boolean;
  /** Kept region ids that the index's documents do not hold (should be 0). */
  unresolvedKept: number;
  /** Per round the critic judged: its verdict and whether the gold was in the evidence kept up to that round. */
  criticVerdicts: CriticVerdict[];
}

export interface CriticVerdict {
  round: number;
  sufficient: boolean;
  goldKept: boolean;
  missing: string[];
  followUpQuery?: string;
}

/** Node ids kept per round (round 1 first). */
export function keptIdsByRound(trace: AskTrace): string[][] {
  return trace.rounds.map((r) => r.retrieved.filter((it) => !it.repeated).flatMap((it) => it.keptNodeIds));
}

export function scoreAnswer(trace: AskTrace, q: RealDocsQuestion, node: (id: string) => RegionNode | undefined): AnswerMetrics {
  const gold = q.gold;
  const keptOnGold = (ids: string[]) =>
    ids.some((id) => {
      const n = node(id);
      return n !== undefined && leaves(n).some((l) => onGold(l.anchor, gold));
    });
  const byRound = keptIdsByRound(trace);
  const goldInEvidenceRound1 = keptOnGold(byRound[0] ?? []);
  const goldInEvidence = keptOnGold(byRound.flat());
  const criticVerdicts: CriticVerdict[] = [];
  trace.rounds.forEach((r, i) => {
    if (!r.critic) return;
    criticVerdicts.push({
      round: r.round,
      sufficient: r.critic.sufficient,
      goldKept: keptOnGold(byRound.slice(0, i + 1).flat()),
      missing: r.critic.missing,
      ...(r.critic.followUpQuery !== undefined ? { followUpQuery: r.critic.followUpQuery } : {}),
    });
  });
  const unresolved = [...new Set(byRound.flat())].filter((id) => node(id) === undefined).length;
  const citations = trace.answer.citations.map((c) => ({
    marker: c.marker,
    file: c.anchor.file,
    ...(c.anchor.page !== undefined ? { page: c.anchor.page } : {}),
    ...(c.anchor.pageEnd !== undefined ? { pageEnd: c.anchor.pageEnd } : {}),
    ...(c.anchor.startLine !== undefined ? { startLine: c.anchor.startLine } : {}),
    ...(c.anchor.endLine !== undefined ? { endLine: c.anchor.endLine } : {}),
    ...(node(c.nodeId) ? { kind: node(c.nodeId)!.kind } : {}),
    text: c.text.replace(/\s+/g, ' ').trim().slice(0, 160),
    onGold: onGold(c.anchor, gold),
  }));
  const keyFacts = q.source === 'financebench' ? keyFactCheck(q.answers[0] ?? '', q.question, withoutMarkers(trace.answer.text)) : undefined;
  const keptText = () =>
    [...new Set(byRound.flat())]
      .map(node)
      .filter((n): n is RegionNode => n !== undefined)
      .map(regionText)
      .join('\n');
  return {
    rounds: trace.rounds.length,
    stop: trace.stop.reason,
    items: trace.totals.items,
    evidenceTokens: trace.totals.evidenceTokens,
    readerTokens: trace.readerInput.tokens,
    readerTruncated: trace.readerInput.truncated,
    traceMs: trace.ms,
    answer: trace.answer.text,
    citations,
    answerHasGold: keyFacts ? keyFacts.ok : answerHasGoldString(q.answers, trace.answer.text),
    ...(keyFacts ? { keyFacts } : {}),
    cited1Gold: citations.some((c) => c.marker === 1 && c.onGold),
    citedAnyGold: citations.some((c) => c.onGold),
    ...(keyFacts ? {} : { answerInEvidence: answerHasGoldString(q.answers, keptText()) }),
    goldFileRetrieved: trace.rounds.some((r) => r.retrieved.some((it) => it.file === gold.file)),
    goldInEvidence,
    goldInEvidenceRound1,
    unresolvedKept: unresolved,
    criticVerdicts,
  };
}

/**
 * Where a question's answer was lost, checked in this order: answered (an answer string in the
 * printed answer); the string was in the kept evidence and the reader quoted another sentence;
 * the gold itself lacks every answer string (the data's answer is worded otherwise there); an item
 * of the gold's file was retrieved but the string was not kept; the gold's file was not retrieved.
 * Undefined for FinanceBench, whose key facts are not strings to find.
 */
export type AnswerOutcome = 'answered' | 'in evidence, not quoted' | 'gold lacks the answer string' | 'gold file retrieved, answer not kept' | 'gold file not retrieved';

export const ANSWER_OUTCOMES: readonly AnswerOutcome[] = ['answered', 'in evidence, not quoted', 'gold lacks the answer string', 'gold file retrieved, answer not kept', 'gold file not retrieved'];

export function answerOutcome(m: AnswerMetrics, goldHoldsAnswer?: boolean): AnswerOutcome | undefined {
  if (m.answerInEvidence === undefined) return undefined;
  if (m.answerHasGold) return 'answered';
  if (m.answerInEvidence) return 'in evidence, not quoted';
  if (goldHoldsAnswer === false) return 'gold lacks the answer string';
  return m.goldFileRetrieved ? 'gold file retrieved, answer not kept' : 'gold file not retrieved';
}
