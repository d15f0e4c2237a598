/**
 * The data model every stage shares: items, their region trees, and the exact source anchors
 * each region carries from parse time. Citations, highlights and gold spans are derived from
 * these anchors and never re-searched in the text afterwards. The parts a trace carries (anchor,
 * modality, region kind) are schemas, so a trace read from a file is checked against them.
 */
import * as z from 'zod/mini';
import { box, list, num, str } from './validation';

/** Where a region lies in its source. Which fields are set depends on the format. */
export const Anchor = z.object({
  /** Workspace-relative path with forward slashes. */
  file: str,
  /** Char offsets into the decoded source text (UTF-16 code units), end exclusive. Text formats. */
  charStart: z.optional(num),
  charEnd: z.optional(num),
  /** 1-based line, 0-based column (UTF-16) of charStart / charEnd, as VS Code ranges want them (minus one line). */
  startLine: z.optional(num),
  startColumn: z.optional(num),
  endLine: z.optional(num),
  endColumn: z.optional(num),
  /** PDF: 0-based page index and the box in PDF user space [x0, y0, x1, y1] (y up, origin bottom-left). */
  page: z.optional(num),
  bbox: z.optional(box),
  /** PDF: last page (0-based, inclusive) of a region spanning several pages; `bbox` is then the
   *  union of its boxes on those pages. Absent for single-page regions. */
  pageEnd: z.optional(num),
  /** PDF: one box per line for a region that covers parts of several lines (a sentence starting
   *  mid-line); all on `page`. `bbox` is their union. Lets a highlight cover exactly the glyphs. */
  rects: z.optional(list(box)),
  /** Tables: 0-based data row index (header excluded). */
  row: z.optional(num),
  /** Transcripts: start and end in seconds. */
  timeStart: z.optional(num),
  timeEnd: z.optional(num),
});
export type Anchor = z.output<typeof Anchor>;

export const Modality = z.enum(['text', 'table', 'image', 'transcript', 'code']);
export type Modality = z.output<typeof Modality>;

/**
 * `record`: one JSON object / JSONL line holding text fields; `group`: inserted by balanced B-ary
 * grouping.
 */
export const RegionKind = z.enum(['document', 'page', 'section', 'paragraph', 'list', 'listItem', 'record', 'group', 'sentence', 'table', 'row', 'image', 'segment', 'code', 'heading']);
export type RegionKind = z.output<typeof RegionKind>;

/** One node of an item's hierarchy. Leaves are sentences, rows, segments or whole images. */
export interface RegionNode {
  /** Stable within the index: `${itemId}/${path}` where path is the child-index path from the root. */
  id: string;
  kind: RegionKind;
  modality: Modality;
  /** The region's own text (for images: alt text / caption). */
  text: string;
  anchor: Anchor;
  /** Heading path or other context shown with the region (never counted as evidence). */
  context?: string;
  /** For table rows: the header row that travels with the row. */
  header?: string;
  /** For table rows: the decoded cell values (the header's cells are in `header`, joined by " | "). */
  cells?: string[];
  /**
   * Tables and their rows (and row groups): what the table is — its own caption (HTML
   * `<caption>`), else the short lead-in line just above it ("Segment results were as follows:").
   * The section label is `context`. Set at parse time (core/ingest/tableContext.ts); never evidence.
   */
  caption?: string;
  /**
   * Table rows: the label rows above the row that group it, outermost first — `["Operating income
   * (loss)"]` on the "Total" row under it. Absent when no label row groups the row.
   */
  groups?: string[];
  /** Tables and their rows (and row groups): the units the document states for the table ("In millions, except per share amounts"). */
  units?: string;
  /**
   * Tables and their rows (and row groups): a second header line of periods under `header` — a
   * table whose header spans two lines ("December 2, | December 3," over "2022 | 2021"), its
   * second line a row of years, dates or quarters only. The row itself stays a data row.
   */
  subheader?: string;
  /** Headings and sections: 1 = top level. */
  level?: number;
  /** Images: the referenced source exactly as the document wrote it (URL or relative path). */
  ref?: string;
  children: RegionNode[];
}

/** A retrievable unit: a document, a section group, a table, a page group. */
export interface Item {
  id: string;
  file: string;
  title: string;
  modality: Modality;
  root: RegionNode;
  /** What the parser read of the item's whole document: its language and the document profiles it fits. */
  traits?: { language?: string; profiles?: string[] };
}
