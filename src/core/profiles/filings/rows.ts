/**
 * Table rows as answers to financial-statement questions ("What is the FY2018 capital expenditure
 * amount for Globex? … shown in the cash flow statement."), for the extractive reader: a statement
 * row that names the asked line item and carries a figure for the asked period is the answer, and
 * prose that merely mentions the metric is not. Without a model, from three readings:
 *  - the asked figure (`askedFigure`): the periods the question names (FY2018, fiscal 2022,
 *    "December 31, 2022", Q2'2023 → 2018, 2022, 2023), the statements it names (cash flow
 *    statement, balance sheet / statement of financial position, income statement / statement of
 *    income, operations or earnings — read from the whole question, instructions included, since
 *    that is where FinanceBench names them), and its metric terms (its support terms less periods,
 *    statement words and the words of an instruction);
 *  - the table (`tableFacts`): the years its header and opening rows label its columns with, and
 *    which statement it is, from its title lines and its own line items (a cash-flow statement
 *    lists operating and investing activities; a balance sheet total assets and liabilities or
 *    equity; an income statement revenue or sales with net income and per-share or pre-tax lines);
 *  - the row (`rowSupport`): its label (the words before its first figure) must name the metric —
 *    the rarity-weighted share of the metric terms it covers, line items' other names included
 *    (text/support.ts) — and it must carry a figure; the share is kept whole when the table's
 *    columns include an asked year (cut to 0.3 when they name only other years) and when the
 *    table is a statement the question names (0.6 when it is another one, 0.8 when unknown), halved
 *    when the table covers part of the company only (an obligor group, a parent alone) and the
 *    question does not ask about one; a quarter of it rides
 *    on the label naming nothing else ("Total assets" over "Total current assets").
 * The reader adds `ROW_WEIGHT` × this to a row's support (`STATEMENT_ROW_WEIGHT` for a row of the
 * statement asked; extractiveReader.ts), and takes some off a row whose line item another kept
 * table carries with figures more than 1 / `PART_SCALE` times larger (`rowScale`, `labelKey`).
 */
import type { RegionNode } from '../../../contracts/region';
import { joinSplitWords } from '../../text/support';
import { filingTerms as supportTerms } from './terms';

export type StatementKind = 'cash-flow' | 'balance-sheet' | 'income';

export interface AskedFigure {
  /** Four-digit years the question names (fiscal years read as their year). */
  years: string[];
  /** Statements the question (or its instructions) names. */
  statements: StatementKind[];
  /** Support terms that name the metric: not periods, statement words or instruction words. */
  metricTerms: string[];
  /** The question itself asks about part of the company (a guarantor or obligor group, the parent alone). */
  partOfCompany?: boolean;
}

export interface TableFacts {
  /** Years that label the table's columns (its header and opening rows). */
  years: Set<string>;
  /** The statement the table is, when its title or line items say so. */
  statement?: StatementKind;
  /** Its title says it covers part of the company only (`PART_OF_COMPANY`). */
  partOfCompany?: boolean;
}

/** A row's share of support, as a bonus weight beside the reader's coverage (extractiveReader.ts). */
export const ROW_WEIGHT = 0.6;
/**
 * … and a row of the very statement the question names or whose metric lives in it: the asker
 * wants that statement's line item, so prose that restates the question's words (the auditor's
 * sentence naming the statements and the years) does not outrank it.
 */
export const STATEMENT_ROW_WEIGHT = 1;

/** The bonus weight of a row of `table` for the asked figure. */
export function rowWeight(asked: AskedFigure, table: TableFacts): number {
  return table.statement !== undefined && asked.statements.includes(table.statement) ? STATEMENT_ROW_WEIGHT : ROW_WEIGHT;
}
/** Share of a row's support that rides on its label naming nothing but the metric. */
const LABEL_PRECISION = 0.25;
/** Most words in a line item's label. */
const LABEL_WORDS = 16;
/** What is left of a row's support when its table's columns name only years the question does not ask. */
const OTHER_YEAR = 0.3;
/** What is left when the table is a statement other than the one the question names. */
const OTHER_STATEMENT = 0.6;
/** … and when nothing says which statement (if any) the table is. */
const UNKNOWN_STATEMENT = 0.8;
/**
 * A filing's statements of part of the company — the guarantor or obligor group of its notes, a
 * parent company alone, the closed group of a deed of cross guarantee, condensed consolidating
 * columns — carry the same line items as the consolidated statements, with other figures; a
 * question about the company means the consolidated ones.
 */
export const PART_OF_COMPANY = /\b(obligor|(non-?)?guarantor|parent company only|condensed consolidating|consolidating (balance sheets?|statements?)|deed of cross guarantee|closed group)s?\b/i;
/** What is left of a row's support when its table covers part of the company and the question does not ask about one. */
const PART_STATEMENT = 0.5;

/** Statement names as questions and statement titles write them. */
const STATEMENT_NAMES: Array<[StatementKind, RegExp]> = [
  ['cash-flow', /\bcash\s?flows?\s+statements?\b|\bstatements?\s+of\s+(consolidated\s+)?cash\s?flows?\b/i],
  ['balance-sheet', /\bbalance\s+sheets?\b|\bstatements?\s+of\s+(consolidated\s+)?financial\s+(position|condition)\b/i],
  ['income', /\b(income|earnings|operations|profit and loss|p&l)\s+statements?\b|\bstatements?\s+of\s+(consolidated\s+)?(comprehensive\s+)?(income|operations|earnings)\b/i],
];

/** The statements a text names, in the order of STATEMENT_NAMES. */
export function statementsNamed(text: string): StatementKind[] {
  const t = joinSplitWords(text);
  return STATEMENT_NAMES.filter(([, re]) => re.test(t)).map(([k]) => k);
}

/**
 * Metrics that live in one or two statements, with the line items a ratio is computed from: a
 * question that names the metric but no statement ("Has ACME's quick ratio improved?") asks for
 * those statements' rows (current assets, inventories, current liabilities on the balance sheet).
 * Plain revenue or sales imply none: they are asked by segment, region or product as often as in total.
 */
const METRIC_STATEMENTS: Array<[RegExp, StatementKind[], string]> = [
  [/\bquick ratio\b|\bacid[- ]test\b/i, ['balance-sheet'], 'total current assets inventories total current liabilities'],
  [/\bcurrent ratio\b|\bworking capital\b/i, ['balance-sheet'], 'total current assets total current liabilities'],
  [/\bdebt[- ]to[- ]equity\b|\bbook value\b/i, ['balance-sheet'], 'total liabilities total equity'],
  [/\btotal (current )?(assets|liabilities)\b|\binventor(y|ies)\b(?! turnover)|\bcash and cash equivalents\b|\b(stockholders|shareholders)['’]? equity\b/i, ['balance-sheet'], ''],
  [/\binventory turnover\b|\bdays (of )?inventory\b/i, ['income', 'balance-sheet'], 'cost of sales inventories'],
  [/\breturn on (total )?assets\b|\broa\b/i, ['income', 'balance-sheet'], 'net income total assets'],
  [/\breturn on (shareholders['’]? |stockholders['’]? )?equity\b|\broe\b/i, ['income', 'balance-sheet'], 'net income total equity'],
  [/\bgross (profit )?margins?\b/i, ['income'], 'gross profit net sales revenue'],
  [/\boperating (profit )?margins?\b/i, ['income'], 'operating income net sales revenue'],
  [/\bnet (profit )?margins?\b/i, ['income'], 'net income net sales revenue'],
  [/\binterest coverage\b/i, ['income'], 'operating income interest expense'],
  [/\bgross profit\b|\boperating income\b|\bnet (income|earnings)\b|\bcogs\b|\bcost of (goods sold|sales)\b|\bearnings per share\b|\beps\b/i, ['income'], ''],
  [/\bfree cash ?flows?\b|\bfcf\b/i, ['cash-flow'], 'net cash provided by operating activities capital expenditure'],
  [/\bcapital expenditures?\b|\bcapex\b|\b(operating|investing|financing) activities\b|\bdividends? paid\b/i, ['cash-flow'], ''],
];

/**
 * The statements a question asks about: those it names, else those its metric lives in
 * (METRIC_STATEMENTS: "quick ratio" → the balance sheet; "inventory turnover" → income statement and balance sheet).
 */
export function statementsAsked(text: string): StatementKind[] {
  const named = statementsNamed(text);
  if (named.length > 0) return named;
  const t = joinSplitWords(text);
  // An adjusted (non-GAAP) measure is read from its reconciliation, not from a statement.
  if (NON_GAAP.test(t)) return [];
  const out = new Set<StatementKind>();
  for (const [re, kinds] of METRIC_STATEMENTS) if (re.test(t)) for (const k of kinds) out.add(k);
  return STATEMENT_NAMES.map(([k]) => k).filter((k) => out.has(k));
}

/** "Adjusted EBIT", "non-GAAP operating income": a measure no statement carries. */
const NON_GAAP = /\badjusted\b|\bnon-?gaap\b/i;
/** A question that says how to compute its figure ("… as the numerator", "defined as …") names its own line items. */
const OWN_FORMULA = /\b(numerator|denominator|defined as|define[sd]?|calculated? (as|using|by))\b/i;

/**
 * The line items a named ratio is computed from ("gross margin" → gross profit, net sales,
 * revenue), unless the question gives its own formula or asks an adjusted measure.
 */
export function formulaItems(text: string): string {
  if (OWN_FORMULA.test(text) || NON_GAAP.test(text)) return '';
  return METRIC_STATEMENTS.filter(([re, , items]) => items && re.test(text)).map(([, , items]) => items).join(' ');
}

const YEAR = /\b(?:FY|CY|fiscal(?:\s+year)?\s*|Q[1-4]\s*'?\s*)?((?:19|20)\d{2})\b|\bFY\s?'?(\d{2})\b/gi;

/** Four-digit years a text names: "FY2018", "fiscal 2022", "Q2'2023", "Q22023", "December 31, 2022", "FY22" → 2022. */
export function yearsNamed(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.replace(/\bQ([1-4])((?:19|20)\d{2})\b/gi, 'Q$1 $2').matchAll(YEAR)) out.add(m[1] ?? `20${m[2]}`);
  return [...out];
}

/** Words of the question that name no metric: periods, statements, units and the instructions around a question. */
const NOT_METRIC = new Set(
  supportTerms(
    'fy fiscal year years end ended quarter quarters q1 q2 q3 q4 annual period close cash flow flows statement statements balance sheet income operations financial position ' +
      'amount usd million millions billion billions thousand thousands dollar dollars percent percentage unit units round decimal ' +
      'answer follow question primarily using use information shown stated provided base based basing judgment plainly details response relying drawing conclusions referencing within only give state please ' +
      'help want need off compute calculate calculation define defined metric financial reasonable approximation exact number possible clearly line items utilizing',
  ).filter((t) => !/^(cash|incom|oper)$/.test(t)),
);
// "cash", "income" and "operating" name metrics too (cash and cash equivalents, net income, operating income): kept as metric terms.

/**
 * The terms of the statement names in the question ("balance sheet", "statement of income") that
 * are not also metric terms elsewhere in it ("net income … in the income statement" keeps income).
 */
export function statementNameTerms(asked: string, figure: AskedFigure): Set<string> {
  const out = new Set<string>();
  const text = joinSplitWords(asked);
  for (const [, re] of STATEMENT_NAMES) for (const m of text.matchAll(new RegExp(re.source, 'gi'))) for (const t of supportTerms(m[0])) out.add(t);
  for (const t of figure.metricTerms) out.delete(t);
  return out;
}

/** A sentence that says how to compute the asked figure: "Define free cash flow as …", "Calculate it using …". */
const DEFINITION = /\b(defined?|calculated?|computed?|using|equals?)\b|[=+/]/i;

/**
 * What the question asks of a statement table. `asked` is the whole question, instructions
 * included; `focus` the part that asks (text/question.ts); `sources` names that are no metric
 * (the evidence's file names, squashed: a company's name is not a line item).
 */
export function askedFigure(asked: string, focus: string, sources: readonly string[] = []): AskedFigure {
  const years = yearsNamed(asked);
  const statements = statementsAsked(asked);
  // The metric's words: the asking sentences and any sentence that says how to compute it.
  const sentences = asked.match(/[^.?!]+(?:[.?!]+(?=\s|$)|$)/g) ?? [];
  const defining = sentences.filter((x) => DEFINITION.test(x) && !focus.includes(x.trim()));
  // Statement words leave the metric only where they name the statement ("cash flow statement"), so "operating cash flow" keeps "cash" and "flow".
  // A named ratio adds the line items it is computed from ("quick ratio" → current assets, inventories, current liabilities).
  let text = joinSplitWords([focus, ...defining].join(' '));
  text = `${text} ${formulaItems(text)}`;
  for (const [, re] of STATEMENT_NAMES) text = text.replace(new RegExp(re.source, 'gi'), ' ');
  const yearTerms = new Set(years);
  // A run of one to three words that names a source ("Blue Harbor" → BLUEHARBOR_2019_10K.pdf) is the company, not the metric.
  const sourceTerms = new Set<string>();
  const ws = text.split(/\s+/).filter(Boolean);
  for (let i = 0; i < ws.length; i++) {
    for (let k = 1; k <= 3 && i + k <= ws.length; k++) {
      const run = ws.slice(i, i + k).join(' ');
      const key = run.replace(/['’]s\b/g, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
      if (key.length >= 2 && /\p{L}/u.test(key) && sources.some((s) => s.includes(key))) for (const t of supportTerms(run)) sourceTerms.add(t);
    }
  }
  const isSource = (t: string) => sourceTerms.has(t);
  const metricTerms = [...new Set(supportTerms(text))].filter((t) => !NOT_METRIC.has(t) && !yearTerms.has(t) && !/^\d+$/.test(t) && !/^(fy|q[1-4])\d*$/.test(t) && t.length > 1 && !isSource(t));
  return { years, statements, metricTerms, ...(PART_OF_COMPANY.test(asked) ? { partOfCompany: true } : {}) };
}

/** A figure in a row: 1,240 · (370) · $ 5,363 · 18.5% · 2,735.0 — not a lone footnote digit, not a year. */
const FIGURE = /(?:^|\s)[$(]?\s?-?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?|(?:^|\s)[$(]?\s?-?\d+\.\d+\)?%?|(?:^|\s)\(?(?!(?:19|20)\d{2}\b)\d{2,}\)?(?=\s|$|%)/;

/** The row's label: its text before the first figure ("Purchases of property, plant and equipment (PP&E) (1,240) …" → the words). */
export function rowLabel(text: string): string {
  const m = FIGURE.exec(text);
  const label = m ? text.slice(0, m.index) : text;
  return label.replace(/[$\s(]+$/, '').trim();
}

/** Whether the row carries a figure after its label. */
export function hasFigure(text: string): boolean {
  return FIGURE.test(text);
}

/**
 * The largest figure a row carries after its label, as a magnitude (1,240 · (370) · $ 5,363 → 5,363);
 * percentages and bare years are no amounts. 0 for a row without one.
 */
export function rowScale(text: string): number {
  const label = rowLabel(text);
  let most = 0;
  for (const m of text.slice(text.indexOf(label) + label.length).matchAll(/(?:^|\s)[$(]?\s?-?(\d[\d,]*(?:\.\d+)?)\)?(%?)(?=\s|$)/g)) {
    if (m[2] || /^(19|20)\d{2}$/.test(m[1]!)) continue;
    most = Math.max(most, Number(m[1]!.replace(/,/g, '')));
  }
  return most;
}

/** A row's label as a key: its support terms, sorted ("Total net revenue" and "Net revenue, total" meet). */
export function labelKey(text: string): string {
  return [...new Set(supportTerms(rowLabel(text)))].sort().join(' ');
}

/**
 * A row whose line item another kept table of the same filing carries with figures at least
 * 1 / PART_SCALE times larger is that line item for part of the company — a segment, a region, a
 * guarantor group ("Blue Harbor 112 …" of the International stores beside "Blue Harbor 884 …" of the
 * Domestic ones; "Gross profit 64" of a deed of cross guarantee beside the consolidated 2,810). A
 * quarter beside its year or half year stays above it (a quarter is at least a fifth of a year in
 * all but the most seasonal businesses).
 */
export const PART_SCALE = 0.2;

/** The span of time a statement covers: one quarter, the year to date (six or nine months), or the year. */
export type PeriodSpan = 'quarter' | 'year-to-date' | 'year';

const QUARTER_SPAN = /\b(three|3) months\b|\b13 weeks\b|\b(first|second|third|fourth) quarter\b|\bquarter ended\b/i;
const YTD_SPAN = /\b(six|nine|6|9) months\b|\b(26|39) weeks\b|\byear[- ]to[- ]date\b|\bfirst half\b/i;
const YEAR_SPAN = /\b(twelve|12) months\b|\b5[23] weeks\b|\bfull year\b|\b(fiscal )?years? ended\b/i;

/**
 * The span a statement's title lines say it covers ("SECOND QUARTER", "Three Months Ended" →
 * quarter; "SIX MONTHS" → year to date), or undefined when they name none or several (a table with
 * three- and six-month columns side by side).
 */
export function periodSpan(text: string): PeriodSpan | undefined {
  const spans = [QUARTER_SPAN.test(text) ? 'quarter' : undefined, YTD_SPAN.test(text) ? 'year-to-date' : undefined, YEAR_SPAN.test(text) ? 'year' : undefined].filter(
    (x): x is PeriodSpan => x !== undefined,
  );
  return spans.length === 1 ? spans[0] : undefined;
}

/**
 * The span a question asks about: a quarter ("Q2 of FY2023", "the second quarter") unless it asks
 * for the half or nine months; the year to date when it names those; otherwise undefined (a fiscal
 * year is read from any statement that carries it).
 */
export function askedSpan(question: string): PeriodSpan | undefined {
  if (YTD_SPAN.test(question)) return 'year-to-date';
  if (/(?:^|[^a-z0-9])Q[1-4](?=$|[^0-9]|(?:19|20)\d{2}(?![0-9]))/i.test(question) || /\bquarter\b|\b(three|3) months\b/i.test(question)) return 'quarter';
  return undefined;
}

/** Line items that mark a statement table by its own rows. */
const ITEM_MARKS: Array<[StatementKind, RegExp[]]> = [
  ['cash-flow', [/\boperating activities\b/i, /\b(investing|financing) activities\b/i]],
  ['balance-sheet', [/\btotal assets\b/i, /\btotal (current )?liabilities\b|\b(stockholders|shareholders)['’]? (equity|deficit)\b/i]],
  ['income', [/\b(total )?(net )?(revenues?|sales)\b/i, /\bnet (income|earnings|loss)\b/i, /\bper (common )?share\b|\bincome before\b|\bearnings before\b|\bgross (profit|margin)\b|\boperating income\b/i]],
];

/** The statement a table's text is by its own line items, if any (a cash-flow statement lists operating and investing activities…). */
export function statementByItems(text: string): StatementKind | undefined {
  for (const [kind, marks] of ITEM_MARKS) if (marks.every((re) => re.test(text))) return kind;
  return undefined;
}

/**
 * The facts of one table from its rows in reading order and its title text (heading path, item
 * title): the years of its header and of its opening rows (those before the first row that has
 * both a label and a figure), and the statement it is.
 */
export function tableFacts(rows: readonly RegionNode[], title = ''): TableFacts {
  const years = new Set<string>();
  for (const r of rows.slice(0, 1)) for (const y of yearsNamed(r.header ?? '')) years.add(y);
  for (const r of rows) {
    for (const y of yearsNamed(r.header ?? '')) years.add(y);
    if (rowLabel(r.text) && hasFigure(r.text) && !/^[\s\d,.$%()-]*$/.test(rowLabel(r.text))) break;
    for (const y of yearsNamed(r.text)) years.add(y);
  }
  const head = `${title}\n${rows.slice(0, 3).map((r) => `${r.header ?? ''}\n${r.text}`).join('\n')}`;
  const part = PART_OF_COMPANY.test(head) ? { partOfCompany: true } : {};
  const named = statementsNamed(head);
  if (named.length === 1) return { years, statement: named[0], ...part };
  const statement = statementByItems(rows.map((r) => r.text).join('\n'));
  return statement ? { years, statement, ...part } : { years, ...part };
}

/** How well one row answers the asked figure, 0–1: its label's cover of the metric times its table's fit (`rowFit`). */
export function rowSupport(asked: AskedFigure, row: RegionNode, table: TableFacts, weight: (term: string) => number): number {
  return rowCover(asked, row, weight) * rowFit(asked, table);
}

/**
 * Whether a table row's text is a line item — a label of a few words followed by figures — and not
 * prose set in a table (a glossary's definition, a footnote, a lead-in sentence the layout read as
 * a row: "Legacy Business — the company's former generics business, which included a portfolio of 20 brands")
 * nor a header row of column labels ("Three Months Ended Six Months Ended", no figure).
 */
export function isLineItem(text: string): boolean {
  if (!hasFigure(text)) return false;
  const labelText = rowLabel(text);
  // A line item is named in a few words; a long label is prose in a table (a glossary, a footnote row).
  if (labelText.split(/\s+/).length > LABEL_WORDS) return false;
  // After the label come figures, not more words ("… a portfolio of 20 globally recognized brands" is prose).
  const rest = text.slice(text.indexOf(labelText) + labelText.length).split(/\s+/).filter(Boolean);
  return rest.filter((w) => /\p{L}{2,}/u.test(w)).length <= rest.filter((w) => /\d/.test(w)).length;
}

/**
 * How well a row's label names the metric, 0–1 (0 for a row without a figure or whose label names
 * none of the metric terms); `weight` is the term rarity the reader uses.
 */
export function rowCover(asked: AskedFigure, row: RegionNode, weight: (term: string) => number): number {
  if (row.kind !== 'row' || asked.metricTerms.length === 0 || !isLineItem(row.text)) return 0;
  const labelText = rowLabel(row.text);
  const label = new Set(supportTerms(labelText));
  if (label.size === 0) return 0;
  let total = 0;
  let got = 0;
  for (const t of asked.metricTerms) {
    const w = weight(t);
    total += w;
    if (label.has(t)) got += w;
  }
  if (got === 0) return 0;
  // A label that is the metric itself ("Total assets") beats one that qualifies it ("Total current assets").
  const metric = new Set(asked.metricTerms);
  const precision = [...label].filter((t) => metric.has(t)).length / label.size;
  return (got / total) * (1 - LABEL_PRECISION + LABEL_PRECISION * precision);
}

/** How well a row's table fits the question: its columns include an asked year, it is the statement the question names. */
export function rowFit(asked: AskedFigure, table: TableFacts): number {
  const period = asked.years.length === 0 || table.years.size === 0 || asked.years.some((y) => table.years.has(y)) ? 1 : OTHER_YEAR;
  const statement = asked.statements.length === 0 ? 1 : !table.statement ? UNKNOWN_STATEMENT : asked.statements.includes(table.statement) ? 1 : OTHER_STATEMENT;
  const part = table.partOfCompany && !asked.partOfCompany ? PART_STATEMENT : 1;
  return period * statement * part;
}
