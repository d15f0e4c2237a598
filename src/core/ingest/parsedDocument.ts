/**
 * The shapes ingestion produces: what a parser returns for one file (`ParsedDocument`), the
 * options every parser takes, and the draft tree parsers build before the hierarchy builder
 * numbers it, groups it and cuts it into items.
 */

import type { Anchor, Item, Modality, RegionKind } from '../../contracts/region';
import type { DocumentFormat } from './documentFormat';
import type { DocumentGraph } from '../../contracts/graph';

/** Embeds texts into unit-length (or at least comparable) vectors; used for semantic graph edges. */
export type EmbedFn = (texts: string[]) => Promise<Float32Array[]>;

/** Progress inside one file: `done` of `total` pages read (PDF), or texts (leaves, tables) encoded for the graph. */
export interface ParseProgress {
  step: 'pages' | 'encoding';
  done: number;
  total: number;
}

export interface ParseOptions {
  /** B: the most children a node keeps before balanced B-ary grouping (2–4; default 2). */
  branchingFactor?: number;
  /** A file (or section, table, page run) with more words than this is cut into several items. Default 1000. */
  itemMaxWords?: number;
  /** Files larger than this many bytes are refused. Default 50 MiB (the `canopy.maxFileSizeMB` default). */
  maxBytes?: number;
  /** Wall-clock budget for one file. A PDF stops at the page where it runs out (with a warning). Default 120 s. */
  timeLimitMs?: number;
  /** Invalid UTF-8: repair with U+FFFD and warn (default), or refuse the file. */
  invalidUtf8?: 'replace' | 'reject';
  /** Strings in JSON/JSONL with at least this many words become text nodes. Default 4. */
  jsonMinWords?: number;
  /** Build the document graph (default true). */
  graph?: boolean;
  /** Encoder for the graph's semantic-neighbour edges; without it those edges are left out. */
  embed?: EmbedFn;
  /** Semantic neighbours per graph element (default 3). */
  semanticNeighbours?: number;
  /** Called as pages are read (PDF) and as the graph's leaves are encoded; across the parse worker too. */
  onProgress?: (progress: ParseProgress) => void;
  /**
   * Most regions (nodes) one file may produce (default 100,000, `canopy.maxNodesPerFile`). A file
   * with more keeps its first items within the cap, with a warning; see docs/ingestion.md.
   */
  maxNodes?: number;
  /** PDF only: folder (path or URL ending in '/') of pdfjs-dist's standard_fonts, for PDFs that do not embed the 14 standard fonts. */
  pdfStandardFontDataUrl?: string;
  signal?: AbortSignal;
}

export interface ParseWarning {
  file: string;
  code:
    | 'invalidUtf8'
    | 'decodedAsWindows1252'
    | 'raggedRows'
    | 'empty'
    | 'noTextLayer'
    | 'timeLimit'
    | 'unreadablePage'
    | 'noHeader'
    | 'jsonlBadLine'
    | 'badCue'
    | 'coarseAnchors'
    | 'noSemanticEdges'
    | 'nodeCap';
  message: string;
}

/** One PDF page as parsed: its box in user space and rotation. */
export interface PageInfo {
  /** 0-based page index. */
  index: number;
  /** The page's (crop) box in PDF user space [x0, y0, x1, y1]. */
  box: [number, number, number, number];
  /** Display rotation in degrees (0, 90, 180, 270); anchors stay in unrotated user space. */
  rotate: number;
  /** Number of glyph runs with visible text; 0 marks an image-only page. */
  textRuns: number;
}

/**
 * Where one parse spent its time, ms, measured in the thread that parsed (core/index/indexTimings.ts
 * names the stages). Timings, not content: the indexer takes them off the document before it is stored.
 */
export interface ParseStages {
  /** pdf.js text extraction (PDF). */
  extract?: number;
  /** A PDF's layout and draft tree; another format's parser. */
  layout?: number;
  tableContext?: number;
  /** Inner texts and anchors, items, groups, numbering, the document's traits. */
  hierarchy?: number;
  /** The graph without its semantic edges. */
  graph?: number;
  /** The semantic-neighbour edges, without waiting for the encoder. */
  semantic?: number;
  /** Waiting for vectors from the encoder's thread. */
  encodeWait?: number;
  /** CPU time of the parsing thread over the parse, when the platform tells (Linux). */
  cpu?: number;
  /** When the worker posted the document (epoch ms, `performance.timeOrigin + performance.now()`), so the receiver can time the transfer. */
  sentAt?: number;
}

export interface ParsedDocument {
  /** Workspace-relative path with forward slashes. */
  file: string;
  format: DocumentFormat;
  title: string;
  items: Item[];
  /** PDF: every page, in order (pages the time limit cut off are absent). */
  pages?: PageInfo[];
  graph?: DocumentGraph;
  warnings: ParseWarning[];
  stats: { bytes: number; parseMs: number; leaves: number; nodes: number; stages?: ParseStages };
}

/**
 * A region before it has an id. Leaves carry their exact text and anchor; inner nodes may leave
 * `text` empty and their anchor partial — the hierarchy builder fills both from the children so
 * that one rule holds everywhere (see hierarchy.ts).
 */
export interface DraftNode {
  kind: RegionKind;
  modality: Modality;
  text: string;
  anchor: Anchor;
  context?: string;
  header?: string;
  cells?: string[];
  /** Tables and rows: the table's caption or lead-in (tableContext.ts). */
  caption?: string;
  /** Rows: the label rows that group the row, outermost first (tableContext.ts). */
  groups?: string[];
  /** Tables and rows: the table's units as the document states them (tableContext.ts). */
  units?: string;
  /** Tables and rows: a second header line of periods (tableContext.ts). */
  subheader?: string;
  level?: number;
  ref?: string;
  /** Sections: the heading text; tables: a caption. Used for item titles and heading paths. */
  title?: string;
  children: DraftNode[];
}

/** What a format parser hands to the hierarchy builder. */
export interface DraftDocument {
  file: string;
  format: DocumentFormat;
  title: string;
  /** Kind 'document'; for PDF its children are the pages. */
  root: DraftNode;
  pages?: PageInfo[];
  warnings: ParseWarning[];
}
