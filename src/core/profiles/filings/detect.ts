/**
 * Whether a document is a securities filing, from its own cover page: a filing opens by naming
 * the regulator it is filed with and its form ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION
 * … FORM 10-K", "FORM 10-Q", "FORM 8-K", "FORM 20-F"), or, for a filing under another regime, an
 * annual report that names its fiscal year end together with a form of that kind. Read from the
 * opening text only (the parser's sample), never from the file's name.
 */

const REGULATOR = /securities\s+and\s+exchange\s+commission|securities\s+exchange\s+act\s+of\s+1934/i;
const FORM = /\bform\s+(?:10-?k|10-?q|8-?k|20-?f|40-?f|6-?k|s-1|def\s*14a)\b/i;
const ANNUAL_REPORT_PURSUANT = /\b(?:annual|quarterly|current)\s+report\s+pursuant\s+to\s+section\s+1[35]/i;

/** A cover page of a securities filing: the regulator named together with a form or a report pursuant to the Exchange Act. */
export function isFilingCover(opening: string): boolean {
  const text = opening.replace(/\s+/g, ' ');
  return REGULATOR.test(text) && (FORM.test(text) || ANNUAL_REPORT_PURSUANT.test(text));
}
