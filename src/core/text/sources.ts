/**
 * The sources (files, item titles) a question names: "What is Blue Harbor's FY2019 …?" names
 * BLUEHARBOR_2019_10K.pdf, "… for 4X?" 4X_2022_10K.pdf. Read from the question's entity spans and
 * the words written with capitals or digits inside ("4X", "ACME", "NorthWind") past a sentence's first
 * word, possessives dropped, letters and digits only; period labels ("Q2", "FY2023") name no
 * source. The reader prefers the named source's evidence; the controller stage opens the
 * statement pages of the named filings only (engine/controllerStage.ts). Which period a file's
 * name carries is read in text/sourcePeriods.ts.
 */
import { analyzeQuestion, questionFocus, type QuestionAnalysis } from './question';

/** Letters and digits only, lower-cased: "Blue Harbor's" → "blueharbor", "BLUEHARBOR_2019_10K.pdf" → "blueharbor201910kpdf". */
export const squash = (s: string) => s.replace(/['’]s\b/g, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** Period labels name no source: "Q2", "FY2023", "H1", "1H23". */
const PERIOD_LABEL = /^(q[1-4]|h[12]|[1-4][qh]|fy|cy)\d*$|^(fy|cy)?\d+$/;

/**
 * The names the question gives that are specific enough to pick a source by (squashed): two or
 * more letters and digits, at least one a letter ("4X"), not a period label. `analysis` is the
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
