/**
 * Which leaves of a question's evidence answer it, for training and measuring the reader model:
 *  - a leaf is answer-bearing when it holds an answer string (HotpotQA normalisation, at word
 *    boundaries) or, for an answer that is a figure ("$1577.00", "18.5%"), the same figure
 *    ("1,577", "18.5");
 *  - where some gold leaf (a gold sentence, row or a leaf of a gold paragraph or page) is
 *    answer-bearing, those are the positives, and answer-bearing leaves outside the gold are left
 *    out (an answer string may occur by chance elsewhere);
 *  - where none is, the gold leaves are the positives: a fine-grained gold's (sentences, rows:
 *    HotpotQA's yes/no questions, FeTaQA's highlighted rows), and a coarse one's every leaf (a
 *    FinanceBench page whose answer is computed): the listwise objective then puts [1] on the
 *    gold page, which is what the reader can be asked there;
 *  - without gold leaves in the evidence (the gold document was not retrieved, or the dataset has
 *    none), answer-bearing leaves are the positives.
 */
import { containsAnswer, normalizeAnswer } from '../../src/eval/answers';
import type { RegionNode } from '../../src/contracts/region';
import type { JudgeDumpRecord } from '../../src/eval/judgeDump';

export type Label = 1 | 0 | undefined;

const FIGURE = /-?\d[\d,]*(?:\.\d+)?/g;

/** The figures of an answer that is mostly a figure ("$1577.00" → 1577; "18.5%" → 18.5), else none. */
export function answerFigures(answer: string): number[] {
  const stripped = answer.replace(/[\s$€£%,()]|usd|million|billion|thousand/gi, '');
  if (!/^-?\d+(?:\.\d+)?$/.test(stripped)) return [];
  return [Number(stripped)];
}

function figuresIn(text: string): number[] {
  return [...text.matchAll(FIGURE)].map((m) => Number(m[0].replace(/,/g, ''))).filter((v) => Number.isFinite(v));
}

const sameFigure = (a: number, b: number) => a === b || (Math.abs(a) >= 1 && Math.abs(a - b) <= 0.005 * Math.abs(a)) || Math.round(a) === b;

export function leafText(leaf: RegionNode): string {
  return leaf.header ? `${leaf.header} ${leaf.text}` : leaf.text;
}

export function answerBearing(record: Pick<JudgeDumpRecord, 'answers'>, leaf: RegionNode): boolean {
  const text = leafText(leaf);
  const normalized = normalizeAnswer(text);
  for (const a of record.answers) {
    const n = normalizeAnswer(a);
    if (n && n !== 'yes' && n !== 'no' && containsAnswer(normalized, n)) return true;
    const figures = answerFigures(a);
    if (figures.length > 0 && figuresIn(text).some((v) => figures.some((f) => sameFigure(f, v)))) return true;
  }
  return false;
}

/** Labels for every leaf of the evidence (by leaf id): 1, 0, or undefined (left out). */
export function labelLeaves(record: JudgeDumpRecord, leaves: readonly RegionNode[]): Map<string, Label> {
  const ids = new Set(leaves.map((l) => l.id));
  const gold = new Set(record.gold.flatMap((g) => g.leafIds).filter((id) => ids.has(id)));
  const bearing = new Set(leaves.filter((l) => answerBearing(record, l)).map((l) => l.id));
  const goldBearing = [...bearing].some((id) => gold.has(id));
  const out = new Map<string, Label>();
  for (const l of leaves) {
    let label: Label;
    if (goldBearing) label = gold.has(l.id) && bearing.has(l.id) ? 1 : bearing.has(l.id) ? undefined : 0;
    else if (gold.size > 0) label = gold.has(l.id) ? 1 : bearing.has(l.id) ? undefined : 0;
    else label = bearing.has(l.id) ? 1 : 0;
    out.set(l.id, label);
  }
  return out;
}
