/**
 * Periods in file names: reports are named by their period ("annual-report-2023.pdf",
 * "BLUEHARBOR_2024Q2_10Q.pdf"), and a question that names a company and a fiscal period ("… in Q2 of
 * FY2024") prefers that source's file of that period. A general reading of file names, used by
 * retrieval's named-source reserve for every corpus (engine/live.ts); the reader weighs it as a
 * feature only for filings (judge/readerFeatures.ts `filing_source_period`).
 */
import { namesSource, questionSourceNames } from './sources';

/**
 * Years (1990–2099) and a quarter a text names: in a question "Q2", "Q2'2023", "Q22023"; in a
 * file name also after the year ("BLUEHARBOR_2024Q2_10Q.pdf"; "10Q" is no quarter).
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
 * ("ACME's acquisitions in FY2023" → ACME_2023_10K over ACME_2023Q2_10Q; "Blue Harbor stores in
 * Q2 of FY2024" → BLUEHARBOR_2024Q2_10Q over BLUEHARBOR_2019_10K). A question that names no source but a
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
