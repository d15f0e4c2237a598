/**
 * What a quote needs to be read alone, in one compact line: for a table row its table's caption
 * or section label and units, its column headers and the label rows that group it
 * ("INCOME STATEMENTS (In millions) · Year Ended June 30, | 2016 | 2015 · Revenue"); for a sentence
 * its nearest heading when that heading names what the sentence is about and the sentence does
 * not say so itself. Everything comes from the region's parse-time fields (`caption`, `units`,
 * `groups`, `header`, `context`: core/ingest/tableContext.ts, contracts/region.ts) — nothing is
 * searched in the text. The extractive reader puts it before each quote, the reader input before
 * each block (read/reader.ts, read/evidenceXml.ts), and every citation carries it
 * (`TraceCitation.context`) for the inspector.
 */
import type { RegionNode } from '../../contracts/region';

/** The parts of a region's context; `quoteContext` joins them. */
export interface ContextParts {
  /** The table's caption, else the section the table or sentence sits in. */
  label?: string;
  units?: string;
  /** Column headers (a row's header row). */
  header?: string;
  /** Label rows grouping a row, outermost first. */
  groups?: string[];
}

const LABEL_CHARS = 100;
const HEADER_CHARS = 160;

function clip(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/** A heading path's innermost part ("A › B › C" → "C"). */
const innermost = (path: string) => path.split(' › ').pop()!.trim();

/** A structural label that names no subject ("Item 7.", "PART II", "Note 12 —") is taken off a heading; what remains names the subject. */
const STRUCTURAL = /^(part|item|section|chapter|article|note|schedule|exhibit|appendix)\s+[\divxlc]+[a-z]?\s*[.:—–-]*\s*/i;

function subjectOf(heading: string): string | undefined {
  const rest = heading.replace(STRUCTURAL, '').trim();
  return /\p{L}{2}/u.test(rest) ? rest : undefined;
}

const contentWords = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 2);

/**
 * A header over a second line of periods as one header: cell by cell when they line up
 * ("December 2, 2022 | December 3, 2021"), else the second line after a slash.
 */
function stackHeaders(header: string, periods: string): string {
  const top = header.split(' | ');
  const below = periods.split(' | ');
  // A first header cell that names the rows ("Years Ended") sits over no period.
  const offset = top.length - below.length;
  if (offset === 0 || offset === 1) return top.map((h, i) => (i - offset >= 0 ? `${h} ${below[i - offset]}` : h)).join(' | ');
  return `${header} / ${periods}`;
}

/** A table region (a row, a table or a run of rows): what describes the table it is part of. */
const isTabular = (node: RegionNode) =>
  node.header !== undefined || node.caption !== undefined || node.units !== undefined || node.subheader !== undefined || node.groups !== undefined || node.kind === 'row' || node.kind === 'table';

export function contextParts(node: RegionNode): ContextParts {
  const out: ContextParts = {};
  if (isTabular(node)) {
    const label = node.caption ?? (node.context !== undefined ? innermost(node.context) : undefined);
    if (label) out.label = clip(label, LABEL_CHARS);
    // Units already written in the label or the header ("($ in millions)" in a title) are not repeated.
    const said = `${label ?? ''} ${node.header ?? ''}`.toLowerCase();
    if (node.units && !said.includes(node.units.toLowerCase())) out.units = node.units;
    const header = node.header !== undefined && node.subheader !== undefined ? stackHeaders(node.header, node.subheader) : node.header;
    if (header) out.header = clip(header, HEADER_CHARS);
    if (node.groups && node.groups.length > 0) out.groups = node.groups.map((g) => clip(g, LABEL_CHARS));
    return out;
  }
  if (node.context === undefined || node.kind === 'heading' || node.kind === 'image') return out;
  // A record's summary (JSON, JSONL: "line 12 — name: …; year: …") says which record the text belongs to.
  if (/ — /.test(node.context) && !node.context.includes(' › ')) {
    out.label = clip(node.context, LABEL_CHARS);
    return out;
  }
  const path = node.context.split(' › ').map((p) => p.trim());
  // A lone top-level heading titles the document, which the citation names already.
  if (path.length < 2) return out;
  const subject = subjectOf(path[path.length - 1]!);
  if (!subject) return out;
  // A sentence that names its subject itself needs no heading.
  const own = new Set(contentWords(node.text));
  const words = contentWords(subject);
  if (words.length === 0 || words.every((w) => own.has(w))) return out;
  out.label = clip(subject, LABEL_CHARS);
  return out;
}

/**
 * The region's context as one line, or undefined when it needs none:
 * `label (units) · header · group › group`.
 */
export function quoteContext(leaf: RegionNode): string | undefined {
  return formatContext(contextParts(leaf));
}

/** Context parts as one line (`label (units) · header · group › group`), or undefined when empty. */
export function formatContext(p: ContextParts): string | undefined {
  const parts = [[p.label, p.units ? `(${p.units})` : undefined].filter((s) => s).join(' '), p.header, p.groups?.join(' › ')].filter((s): s is string => !!s && s.length > 0);
  return parts.length > 0 ? parts.join(' · ') : undefined;
}
