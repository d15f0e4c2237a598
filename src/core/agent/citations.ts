/**
 * Citations as an agent (or a person) reads them: one shape for every host that hands Canopy's
 * evidence to a language model — the VS Code language-model tools, the @canopy chat participant
 * and the MCP server. Built from a region's parse-time anchor only, never re-searched in the text.
 *
 * Conventions, stated once because agents mix them up: `lines` and `page` and `row` are 1-based
 * (what a person reads in an editor's gutter, a PDF viewer or a table); `range` is 0-based line
 * and UTF-16 character, end exclusive (what VS Code's Range and LSP take); `chars` are UTF-16
 * offsets into the decoded file text, end exclusive.
 */
import type { Anchor } from '../../contracts/region';

export interface AgentCitation {
  /** How a person reads it: `notes/sensors.md:12-13`, `report.pdf p.3`, `data/plots.csv row 4`, `talk.vtt 00:30–01:00`. */
  ref: string;
  /** Workspace-relative path with forward slashes. */
  file: string;
  /** 1-based first and last line the region covers (text formats). */
  lines?: { start: number; end: number };
  /** 0-based line and UTF-16 character, end exclusive: an editor range. */
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** UTF-16 offsets into the decoded file text, end exclusive. */
  chars?: { start: number; end: number };
  /** PDF: 1-based page (and last page of a region spanning several). */
  page?: number;
  pageEnd?: number;
  /** PDF: box in PDF user space [x0, y0, x1, y1] (origin bottom-left). */
  bbox?: [number, number, number, number];
  /** Tables: 1-based data row (the header row not counted). */
  row?: number;
  /** Transcripts: start and end in seconds. */
  seconds?: { start: number; end: number };
}

/** The 1-based lines a text anchor covers; a region ending at column 0 of a line does not cover that line. */
function linesOf(a: Anchor): AgentCitation['lines'] {
  if (a.startLine === undefined) return undefined;
  let end = a.endLine ?? a.startLine;
  if (end > a.startLine && a.endColumn === 0) end--;
  return { start: a.startLine, end };
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** A citation of one region from its anchor (the file comes from the anchor). */
export function citationOf(anchor: Anchor): AgentCitation {
  const file = anchor.file;
  const out: AgentCitation = { ref: file, file };
  const lines = linesOf(anchor);
  if (lines) {
    out.lines = lines;
    out.range = {
      start: { line: anchor.startLine! - 1, character: anchor.startColumn ?? 0 },
      end: { line: (anchor.endLine ?? anchor.startLine!) - 1, character: anchor.endColumn ?? 0 },
    };
  }
  if (anchor.charStart !== undefined && anchor.charEnd !== undefined) out.chars = { start: anchor.charStart, end: anchor.charEnd };
  if (anchor.page !== undefined) {
    out.page = anchor.page + 1;
    if (anchor.pageEnd !== undefined && anchor.pageEnd !== anchor.page) out.pageEnd = anchor.pageEnd + 1;
    if (anchor.bbox) out.bbox = anchor.bbox.map((x) => Math.round(x * 100) / 100) as [number, number, number, number];
  }
  if (anchor.row !== undefined) out.row = anchor.row + 1;
  if (anchor.timeStart !== undefined) out.seconds = { start: anchor.timeStart, end: anchor.timeEnd ?? anchor.timeStart };

  if (out.page !== undefined) out.ref = `${file} p.${out.page}${out.pageEnd ? `–${out.pageEnd}` : ''}`;
  else if (out.seconds) out.ref = `${file} ${clock(out.seconds.start)}–${clock(out.seconds.end)}`;
  else if (out.row !== undefined) out.ref = `${file} row ${out.row}${lines ? ` (line ${lines.start})` : ''}`;
  else if (lines) out.ref = `${file}:${lines.start}${lines.end !== lines.start ? `-${lines.end}` : ''}`;
  return out;
}
