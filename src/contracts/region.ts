/**
 * The data model every stage shares: items, their region trees, and the exact source anchors
 * each region carries from parse time. Citations, highlights and gold spans are derived from
 * these anchors and never re-searched in the text afterwards.
 */

/** Where a region lies in its source. Which fields are set depends on the format. */
export interface Anchor {
  /** Workspace-relative path with forward slashes. */
  file: string;
  /** Char offsets into the decoded source text (UTF-16 code units), end exclusive. Text formats. */
  charStart?: number;
  charEnd?: number;
  /** 1-based line, 0-based column (UTF-16) of charStart / charEnd, as VS Code ranges want them (minus one line). */
  startLine?: number;
  startColumn?: number;
  endLine?: number;
  endColumn?: number;
  /** PDF: 0-based page index and the box in PDF user space [x0, y0, x1, y1] (y up, origin bottom-left). */
  page?: number;
  bbox?: [number, number, number, number];
  /** PDF: last page (0-based, inclusive) of a region spanning several pages; `bbox` is then the
   *  union of its boxes on those pages. Absent for single-page regions. */
  pageEnd?: number;
  /** PDF: one box per line for a region that covers parts of several lines (a sentence starting
   *  mid-line); all on `page`. `bbox` is their union. Lets a highlight cover exactly the glyphs. */
  rects?: Array<[number, number, number, number]>;
  /** Tables: 0-based data row index (header excluded). */
  row?: number;
  /** Transcripts: start and end in seconds. */
  timeStart?: number;
  timeEnd?: number;
}

export type Modality = 'text' | 'table' | 'image' | 'transcript' | 'code';

export type RegionKind =
  | 'document'
  | 'page'
  | 'section'
  | 'paragraph'
  | 'list'
  | 'listItem'
  | 'record' // one JSON object / JSONL line holding text fields
  | 'group' // inserted by balanced B-ary grouping
  | 'sentence'
  | 'table'
  | 'row'
  | 'image'
  | 'segment'
  | 'code'
  | 'heading';

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
}
