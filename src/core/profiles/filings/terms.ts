/**
 * The filings profile's reading of terms (profiles/profiles.ts): a fiscal year names its year
 * ("FY2021" → 2021), and financial line items are read under their usual other names, so a
 * question about "FY2021 capex" covers the cash-flow row "Purchases of property …" headed 2021.
 * Used only for questions and regions of documents the profile fits.
 */
import { readingText } from '../../text/support';
import { contentTerms } from '../../text/terms';

/** Content terms as a filing is read: text/support.ts's reading, fiscal years as years, line items' other names added. */
export function filingTerms(text: string): string[] {
  let folded = readingText(text).replace(/\bFY\s?(\d{4})\b/gi, '$1');
  const aliases = METRIC_ALIASES.filter(([re]) => re.test(folded)).map(([, canonical]) => canonical);
  if (aliases.length > 0) folded = `${folded} ${aliases.join(' ')}`;
  return contentTerms(folded);
}

/**
 * Financial statement line items under their usual other names: a region (or question) that
 * names one also covers the canonical words, so "capital expenditure" finds the cash-flow row
 * "Purchases of property, plant and equipment" and "COGS" the row "Cost of sales".
 */
export const METRIC_ALIASES: Array<[RegExp, string]> = [
  [/\b(capex|capital expenditures?|purchases? of property|additions to property|payments for property|(purchases?|acquisitions?) of (fixed|tangible) assets)\b/i, 'capital expenditure capex'],
  [/\b(cogs|cost of (goods sold|sales|revenues?|products sold))\b/i, 'cost of goods sold cogs'],
  [/\b(net sales|total revenues?|revenues?|sales revenue|turnover)\b/i, 'revenue'],
  [/\b(net income|net earnings|net profit)\b/i, 'net income earnings'],
  [/\b(pp&e|ppe|ppne|property,? plant,? and equipment)\b/i, 'property plant equipment ppe'],
  [/\b(operating income|income from operations|operating profit)\b/i, 'operating income'],
  // Officers by their title or its initials: "Northwind's new CEO" ↔ "… Chief Executive Officer …" (the 8-K's own page, not the
  // employment letter that says "CEO", became [1]: one more of the 33 FinanceBench questions).
  [/\b(ceo|chief executive officer)s?\b/i, 'ceo chief executive officer'],
  [/\b(cfo|chief financial officer)s?\b/i, 'cfo chief financial officer'],
  [/\b(coo|chief operating officer)s?\b/i, 'coo chief operating officer'],
  // Not a line item but a filing's word for one event: "spin off Initrode" ↔ "costs … in connection with separating Initrode".
  [/\b(spin-?offs?|spun-?off|spin(ning)? off|separating|separation|split-?off|demerger)\b/i, 'spinoff separation'],
  [/\b(d&a|depreciation and amortization|depreciation, depletion and amortization)\b/i, 'depreciation amortization'],
];

