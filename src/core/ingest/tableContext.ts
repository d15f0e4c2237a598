/**
 * What a table row needs to be read alone, taken from the document's structure at parse time, for
 * every table of every format (docs/ingestion.md, "Table context"):
 *
 * - `caption`: the table's own caption (HTML `<caption>`), else the lead-in line just above it —
 *   a short paragraph that introduces the table ("Segment revenue and operating income were as
 *   follows:", "Consolidated Statements of Operations"); lines repeated on many pages (running
 *   heads, "Table of Contents") are never a lead-in. The section label is the heading path
 *   (`context`), which rows already carry.
 * - `units`: the units the document states for the table ("In millions, except per share
 *   amounts", "in thousands", "($ millions)"), from the lines just above it, its caption or its
 *   header row.
 * - `subheader`: a second header line of periods — the first data row when it holds only years,
 *   dates or quarters under a header that names none ("December 2, | December 3," over
 *   "2022 | 2021").
 * - `groups`: the label rows above a row that group it, outermost first — a row with a label and
 *   no other cell ("Revenue:", "Operating income (loss)") opens a group for the rows below it;
 *   a "Total …" row closes the innermost group after itself; where the format gives positions
 *   (PDF), a label at the same or a smaller indent ends the groups it is not inside, and a row
 *   back at a label's indent ends the group whose rows were indented under it.
 *
 * Nothing here names a domain's vocabulary beyond the words documents use for units and totals
 * (English: "in thousands", "Total", "Subtotal"). The result is what `read/quoteContext.ts` shows
 * beside a quote; it is never evidence text and never encoded.
 */

import type { DraftNode } from './parsedDocument';

/** A units phrase: "(In millions, except per share amounts)", "in thousands of U.S. dollars", "($ millions)", "Dollars in billions". */
const UNITS = new RegExp(
  [
    // "in millions", "amounts in thousands", "$ in millions", "in thousands of euros, except per share data"
    String.raw`(?:\b(?:amounts?|dollars|figures|numbers|values|\$|€|£|us\$|usd|eur|gbp)\s+)?\bin\s+(?:(?:hundreds|thousands|millions|billions|trillions)\b(?:\s+of\s+[A-Za-z.$€£ ]{1,30}?(?=[,;)]|$|\s+except))?|(?:\$|€|£)\s?(?:000s?|thousands|millions|billions|m|bn|k)\b|(?:U\.S\.\s+)?dollars\b|euros\b|percent\b|%)(?:,?\s+except\s[^)]{1,80})?`,
    // "(Millions)", "($ millions)", "($000s)", "(€ in thousands)"
    String.raw`\(\s*(?:\$|€|£|us\$)?\s*(?:in\s+)?(?:000s?|thousands|millions|billions)(?:,?\s+except\s[^)]{1,80})?\s*\)`,
  ].join('|'),
  'i',
);

/** The units phrase a text states, without its parentheses; undefined when it states none. */
export function unitsIn(text: string): string | undefined {
  const m = UNITS.exec(text);
  if (!m) return undefined;
  const phrase = m[0].replace(/^\(\s*|\s*\)$/g, '').replace(/\s+/g, ' ').trim();
  return phrase.length > 0 ? phrase : undefined;
}

/** A "Total …" row closes the group it ends (English table vocabulary). */
const TOTAL = /^\W*(total|subtotal|sub-total|grand total|net total)\b/i;
/** A footnote line inside a table ("(a) Includes …", "* Restated") is not a label. */
const FOOTNOTE = /^\s*(\(\w{1,3}\)|\*|†|‡|\d+\))\s/;

const words = (s: string) => s.split(/\s+/).filter((w) => w.length > 0).length;

/** The text a draft block will have once finalised: its leaves' texts in order (sentences joined by a space). */
function blockText(node: DraftNode): string {
  if (node.children.length === 0) return node.text;
  return node.children
    .map(blockText)
    .filter((t) => t.length > 0)
    .join(' ');
}

/** Markup around a cell's label ("**Revenue**", "_Assets_") and a closing colon are not part of its name. */
function cleanLabel(text: string): string {
  return text
    .replace(/^[\s*_`~]+|[\s*_`~]+$/g, '')
    .replace(/\s*:$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Short lines that recur on many pages (running heads and feet: "Table of Contents", "PART II
 * Item 8", page numbers) — never a table's lead-in: at least 3 times, and on a fifth of the pages.
 */
function furnitureOf(root: DraftNode): Set<string> {
  const pages = root.children.filter((c) => c.kind === 'page').length;
  const least = Math.max(3, Math.ceil(pages / 5));
  const counts = new Map<string, number>();
  const visit = (n: DraftNode) => {
    if (n.kind === 'paragraph') {
      const key = normalise(blockText(n));
      if (key.length > 0 && words(key) <= 12) counts.set(key, (counts.get(key) ?? 0) + 1);
      return;
    }
    for (const c of n.children) visit(c);
  };
  visit(root);
  return new Set([...counts].filter(([, n]) => n >= least).map(([k]) => k));
}

const normalise = (s: string) => s.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();

/** A data row: a row leaf that is not the header line a PDF table keeps as its first leaf. */
const isDataRow = (n: DraftNode) => n.kind === 'row' && n.anchor.row !== undefined;

/** The row's cells that hold something. */
const filled = (row: DraftNode) => (row.cells ?? [row.text]).map((c) => c.trim()).filter((c) => c.length > 0);

/** A label row: one filled cell (the first), with letters, short, not a footnote and not a total. */
function labelOf(row: DraftNode): string | undefined {
  const cells = row.cells ?? [row.text];
  const full = filled(row);
  if (full.length !== 1 || (cells[0] ?? '').trim() !== full[0]) return undefined;
  const label = cleanLabel(full[0]!);
  if (!/\p{L}/u.test(label) || words(label) > 15 || FOOTNOTE.test(label) || TOTAL.test(label) || /\d[\d,.]*%?\s*$/.test(label)) return undefined;
  return label;
}

/** Sets `groups` on the rows of one table (see the module comment). */
function groupRows(rows: DraftNode[]): void {
  // Grouping needs a table of figures: at least two rows with more than one filled cell.
  if (rows.filter((r) => filled(r).length > 1).length < 2) return;
  const tolerance = 2;
  const stack: Array<{ label: string; x: number | undefined; memberX?: number }> = [];
  let previousWasLabel = false;
  for (const row of rows) {
    const x = row.anchor.bbox?.[0];
    const label = labelOf(row);
    const positioned = x !== undefined && stack.every((g) => g.x !== undefined);
    if (label !== undefined) {
      if (positioned) {
        // A label at the same or a smaller indent is a sibling (or an uncle) of the open ones.
        while (stack.length > 0 && stack[stack.length - 1]!.x! >= x - tolerance) stack.pop();
      } else if (!previousWasLabel) stack.pop(); // after figures, a new label replaces the innermost group
      if (stack.length > 0) row.groups = stack.map((g) => g.label);
      stack.push({ label, x });
      previousWasLabel = true;
      continue;
    }
    previousWasLabel = false;
    if (positioned) {
      // A row set further left than the label closes its group; so does a row back at the label's
      // indent when the group's rows are indented under it.
      const closes = (g: (typeof stack)[number]) =>
        x < g.x! - tolerance || (g.memberX !== undefined && g.memberX > g.x! + tolerance && x <= g.x! + tolerance);
      while (stack.length > 0 && closes(stack[stack.length - 1]!)) stack.pop();
      const top = stack[stack.length - 1];
      if (top && top.memberX === undefined) top.memberX = x;
    }
    if (stack.length > 0) row.groups = stack.map((g) => g.label);
    if (TOTAL.test(row.cells?.[0] ?? row.text)) stack.pop();
  }
}

/** Caption (lead-in) and units from the blocks just above a table, nearest first. */
function leadIn(before: DraftNode[], furniture: Set<string>): { caption?: string; units?: string } {
  const out: { caption?: string; units?: string } = {};
  for (const block of before) {
    if (block.kind !== 'paragraph') break;
    const text = blockText(block).replace(/\s+/g, ' ').trim();
    if (text.length === 0) continue;
    const n = words(text);
    if (n > 40) break;
    const units = unitsIn(text);
    if (units !== undefined) {
      out.units ??= units;
      // A line that is only the units ("(In millions)", on many pages alike) is read past to the lead-in above it.
      if (words(text.replace(UNITS, '')) === 0) continue;
    }
    if (furniture.has(normalise(text))) continue;
    // A lead-in introduces the table: it ends with a colon, or reads as a title (no closing full stop).
    if (n <= 30 && (/:\s*$/.test(text) || !/[.!?]["”')\]]?\s*$/.test(text))) out.caption = text.replace(/\s*:\s*$/, '');
    break;
  }
  return out;
}

const MONTH = String.raw`(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`;
/** A column heading that names a period: a year, a fiscal year, a quarter, a date. */
const PERIOD = new RegExp(String.raw`^(?:(?:fy|fiscal(?:\s+year)?)\s*'?\d{2,4}|(?:19|20)\d\d|q[1-4]\s*'?\d{0,4}|${MONTH}\s+\d{1,2},?(?:\s+(?:19|20)\d\d)?|\d{1,2}\s+${MONTH}(?:\s+(?:19|20)\d\d)?)\s*(?:\(\w{1,3}\))?$`, 'i');

/** The first data row, when it is only periods under a header that names none of them (a header spanning two lines). */
function periodLine(rows: DraftNode[], header: string | undefined): string | undefined {
  const first = rows[0];
  if (!first || header === undefined || /\b(?:19|20)\d\d\b/.test(header)) return undefined;
  const cells = filled(first);
  if (cells.length < 2 || !cells.every((c) => PERIOD.test(c))) return undefined;
  return cells.join(' | ');
}

/** Sets caption, units, a period header line and groups on one table and its rows. */
function annotateTable(table: DraftNode, before: DraftNode[], furniture: Set<string>): void {
  const found = leadIn(before, furniture);
  const caption = table.caption ?? found.caption;
  const units = found.units ?? (caption !== undefined ? unitsIn(caption) : undefined) ?? (table.header !== undefined ? unitsIn(table.header) : undefined);
  if (caption !== undefined) table.caption = caption;
  if (units !== undefined) table.units = units;
  const rows = table.children.filter((c) => c.kind === 'row');
  const data = rows.filter(isDataRow);
  const subheader = periodLine(data, table.header);
  if (subheader !== undefined) table.subheader = subheader;
  groupRows(data);
  for (const row of rows) {
    if (caption !== undefined) row.caption = caption;
    if (units !== undefined) row.units = units;
    if (subheader !== undefined) row.subheader = subheader;
  }
}

/**
 * Annotates every table under `root` (a draft document, before the hierarchy builder cuts it):
 * `caption` and `units` on the table and each of its rows, `groups` on the rows a label row groups.
 */
export function annotateTables(root: DraftNode): void {
  const furniture = furnitureOf(root);
  const visit = (node: DraftNode) => {
    node.children.forEach((child, i) => {
      if (child.kind === 'table') annotateTable(child, node.children.slice(Math.max(0, i - 3), i).reverse(), furniture);
      else visit(child);
    });
  };
  visit(root);
}
