/**
 * The sources (files, item titles) a question names: "What is Best Buy's FY2019 …?" names
 * BESTBUY_2019_10K.pdf, "… for 3M?" 3M_2018_10K.pdf. Read from the question's entity spans and
 * the words written with capitals or digits inside ("3M", "AMCOR", "JnJ") past a sentence's first
 * word, possessives dropped, letters and digits only; period labels ("Q2", "FY2023") name no
 * source. The extractive reader prefers the named source's evidence; the controller stage opens
 * the statement pages of the named filings only (engine/controllerStage.ts).
 */
import { analyzeQuestion, questionFocus, type QuestionAnalysis } from '../text/question';

/** Letters and digits only, lower-cased: "Best Buy's" → "bestbuy", "BESTBUY_2019_10K.pdf" → "bestbuy201910kpdf". */
export const squash = (s: string) => s.replace(/['’]s\b/g, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** Period labels name no source: "Q2", "FY2023", "H1", "1H23". */
const PERIOD_LABEL = /^(q[1-4]|h[12]|[1-4][qh]|fy|cy)\d*$|^(fy|cy)?\d+$/;

/**
 * The names the question gives that are specific enough to pick a source by (squashed): two or
 * more letters and digits, at least one a letter ("3M"), not a period label. `analysis` is the
 * question's analysis when the caller has it (the question is then its focus already).
 */
export function questionSourceNames(question: string, analysis?: QuestionAnalysis): string[] {
  const focus = analysis ? question : questionFocus(question);
  const entities = (analysis ?? analyzeQuestion(focus)).entities;
  const marked = focus
    .split(/(?<=[.?!:])\s+/)
    .flatMap((s) => s.split(/\s+/).slice(1))
    .filter((w) => /\p{L}/u.test(w) && /^\P{Ll}*\p{Lu}|\p{Lu}.*\p{Lu}|\d.*\p{Lu}/u.test(w.replace(/['’]s$/, '')));
  return [...new Set([...entities, ...marked].map(squash))].filter((e) => e.length >= 2 && /\p{L}/u.test(e) && !PERIOD_LABEL.test(e));
}

/** Whether one of `names` is in the source's file name or title. */
export function namesSource(names: readonly string[], file: string, title = ''): boolean {
  const source = `${squash(file)} ${squash(title)}`;
  return names.some((n) => source.includes(n));
}

/**
 * Years (1990–2099) and a quarter a text names: in a question "Q2", "Q2'2023", "Q22023"; in a
 * file name also after the year ("BESTBUY_2024Q2_10Q.pdf"; "10Q" is no quarter).
 */
function periods(text: string, kind: 'question' | 'file'): { years: Set<string>; quarter?: string } {
  const years = new Set([...text.matchAll(/(?:^|[^0-9])((?:19|20)\d{2})(?![0-9])/g)].map((m) => m[1]!));
  const q = (kind === 'question' ? /(?:^|[^a-z0-9])q([1-4])(?=$|[^0-9]|(?:19|20)\d{2}(?![0-9]))/i : /(?:^|[^a-z])q([1-4])(?![0-9])/i).exec(text);
  return q ? { years, quarter: q[1]! } : { years };
}

/**
 * How well a source fits what the question names: 0 when it names none of the question's
 * sources; otherwise 10, +1 when the file's name carries a year the question names, +1 when both
 * name the same quarter, −0.5 for a quarter's filing when the question names no quarter
 * ("AMCOR's acquisitions in FY2023" → AMCOR_2023_10K over AMCOR_2023Q2_10Q; "Best Buy stores in
 * Q2 of FY2024" → BESTBUY_2024Q2_10Q over BESTBUY_2019_10K). A question that names no source but a
 * fiscal period prefers the files of that period alone. Undefined when it names neither.
 */
export function sourcePreference(question: string, names = questionSourceNames(question)): ((file: string, title?: string) => number) | undefined {
  const asked = periods(question, 'question');
  const periodFit = (file: string) => {
    const has = periods(file.split('/').pop() ?? file, 'file');
    let score = 0;
    if ([...has.years].some((y) => asked.years.has(y))) score += 1;
    if (asked.quarter !== undefined && has.quarter === asked.quarter) score += 1;
    if (asked.quarter === undefined && has.quarter !== undefined) score -= 0.5;
    return score;
  };
  // Without a named source among the files, a fiscal period alone ("between FY 2023 and Q2 of
  // FY2024") prefers the filings whose names carry that year and quarter; a named source always
  // fits better than any file it does not name (10 +), and a file of neither scores 0.
  const byPeriod = FISCAL_PERIOD.test(question) && asked.years.size > 0;
  if (names.length === 0 && !byPeriod) return undefined;
  return (file, title = '') => {
    if (names.length > 0 && namesSource(names, file, title)) return 10 + periodFit(file);
    return byPeriod ? Math.max(0, periodFit(file)) : 0;
  };
}

/** A fiscal year or quarter in a question: "FY2024", "FY 2023", "Q2", "Q2'2023". */
const FISCAL_PERIOD = /\bFY\s?'?\d{2,4}\b|(?:^|[^a-z0-9])Q[1-4](?=$|[^0-9]|(?:19|20)\d{2}(?![0-9]))/i;
