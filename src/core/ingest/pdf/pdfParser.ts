/**
 * PDF → draft tree: document → page → (sections clipped to the page) → heading / paragraph /
 * list → list item / table → leaves (sentences, rows). Pages stay whole because a PDF anchor is
 * one page and a box; the document's section structure across pages lives in each node's
 * `context` (the heading path, continued from page to page) and in the graph.
 *
 * Headings are blocks of at most three short lines whose size is clearly above the body size
 * (the most common size, by characters, in the whole document), or that are entirely bold (or
 * all capitals) at body size when the body is not bold; levels rank the heading sizes, largest
 * first, with body-size headings below them. Every node has a box in PDF user space on its page;
 * sentences that cover parts of several lines also carry one box per line (`rects`).
 */

import type { Anchor } from '../../../contracts/region';
import type { DraftDocument, DraftNode, PageInfo, ParseStages, ParseWarning } from '../parsedDocument';
import { nestSections, type OpenHeading } from '../sections';
import { sentenceSpans } from '../sentences';
import { titleFromPath } from '../formats/titles';
import { Block, GeoBuilder, GeoText, layoutPage, Line, lineText, startsListItem, unionBox } from './pdfLayout';
import { Box, readPdfRuns, type PdfReadResult } from './pdfRuns';

export interface PdfParseOptions {
  deadline?: number;
  timeLimitMs?: number;
  signal?: AbortSignal | undefined;
  standardFontDataUrl?: string | undefined;
  /** After each page read (or failed): pages done of the document's pages. */
  onPage?: ((done: number, total: number) => void) | undefined;
  /** Where the time went: `extract` (pdf.js) and `layout` (the rest) are added here. */
  stages?: ParseStages;
}

const round = (v: number): number => Math.round(v * 100) / 100;
const roundBox = (b: Box): Box => [round(b[0]), round(b[1]), round(b[2]), round(b[3])];

/** A block's text with per-character boxes; lines joined by a space, or nothing after a hyphenated break. */
function blockGeo(lines: Line[]): GeoText {
  const b = new GeoBuilder();
  lines.forEach((line, li) => {
    if (li > 0) {
      const next = line.frags[0]?.text.text ?? '';
      if (!(b.endsWith(/[A-Za-z]-$/) && /^[a-z]/.test(next))) b.space();
    }
    line.frags.forEach((f, fi) => {
      if (fi > 0) b.space();
      b.pushGeo(f.text, li);
    });
  });
  return b.build();
}

function pdfAnchor(file: string, page: number, box: Box, rects?: Box[]): Anchor {
  const a: Anchor = { file, page, bbox: roundBox(box) };
  if (rects && rects.length > 1) a.rects = rects.map(roundBox);
  return a;
}

/** Sentence leaves of a text block, each with the boxes of its characters per line. */
function sentenceLeaves(file: string, page: number, lines: Line[]): DraftNode[] {
  const geo = blockGeo(lines);
  const out: DraftNode[] = [];
  for (const [s, e] of sentenceSpans(geo.text)) {
    const perLine = new Map<number, [number, number]>();
    for (let i = s; i < e; i++) {
      const box = geo.boxes[i];
      const li = geo.lines[i]!;
      if (!box || li < 0) continue;
      const cur = perLine.get(li);
      perLine.set(li, cur ? [Math.min(cur[0], box[0]), Math.max(cur[1], box[2])] : [box[0], box[2]]);
    }
    const rects: Box[] = [...perLine.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([li, [x0, x1]]) => [x0, lines[li]!.box[1], x1, lines[li]!.box[3]]);
    if (rects.length === 0) continue;
    let bbox: Box | undefined;
    for (const r of rects) bbox = unionBox(bbox, r);
    out.push({ kind: 'sentence', modality: 'text', text: geo.text.slice(s, e), anchor: pdfAnchor(file, page, bbox!, rects), children: [] });
  }
  return out;
}

interface Classified {
  block: Block;
  text: string;
  heading?: { size: number; bySize: boolean };
  listItem: boolean;
}

const sectionLabel = /^(item|part|section|chapter|article|note|schedule|exhibit)\s+[\divxlc]+[a-z]?\.?(\s|$)/i;
const captionLabel = /^(figure|fig\.|table|chart|exhibit|source|note)s?\s*[\dA-Z]/i;

function classify(block: Block, body: BodyStyle): Classified {
  const text = blockGeo(block.lines).text;
  const c: Classified = { block, text, listItem: block.kind === 'text' && startsListItem(block.lines[0]!) };
  if (block.kind !== 'text' || c.listItem || block.lines.length > 3 || text.length > 200) return c;
  const letters = text.replace(/[^A-Za-z]/g, '');
  if (letters.length < 2) return c;
  // Headings do not end like prose, and captions are not headings.
  if (/[,;]$/.test(text) || (/\.$/.test(text) && !sectionLabel.test(text)) || (captionLabel.test(text) && !sectionLabel.test(text))) return c;
  const words = text.split(/\s+/).length;
  const bySize = block.size >= body.size * 1.15 && block.size - body.size >= 1;
  // Same size as the body but set apart by weight or slant (body text itself is neither).
  const styled = (!body.bold && block.boldShare > 0.9) || (!body.italic && block.italicShare > 0.9);
  const byStyle = styled && block.lines.length <= 2 && words <= 15 && block.size >= body.size * 0.95;
  const byCaps = letters === letters.toUpperCase() && letters.length >= 4 && words <= 12 && block.lines.length <= 2 && block.size >= body.size * 0.95;
  if (bySize || byStyle || byCaps) c.heading = { size: block.size, bySize };
  return c;
}

interface BodyStyle {
  size: number;
  bold: boolean;
  italic: boolean;
}

function bodyStyle(blocks: Block[]): BodyStyle {
  const bySize = new Map<number, number>();
  let chars = 0;
  let bold = 0;
  let italic = 0;
  for (const b of blocks) {
    if (b.kind !== 'text') continue;
    for (const l of b.lines) {
      const n = lineText(l).length;
      const key = Math.round(l.size * 2) / 2;
      bySize.set(key, (bySize.get(key) ?? 0) + n);
      chars += n;
      bold += n * l.boldShare;
      italic += n * l.italicShare;
    }
  }
  let size = 10;
  let best = -1;
  for (const [s, n] of bySize) if (n > best) [size, best] = [s, n];
  return { size, bold: chars > 0 && bold / chars > 0.5, italic: chars > 0 && italic / chars > 0.5 };
}

export async function parsePdf(file: string, bytes: Uint8Array, options: PdfParseOptions = {}): Promise<DraftDocument> {
  const t0 = performance.now();
  const read = await readPdfRuns(file, bytes, options);
  const t1 = performance.now();
  try {
    return draftOf(file, read);
  } finally {
    if (options.stages) {
      options.stages.extract = (options.stages.extract ?? 0) + t1 - t0;
      options.stages.layout = (options.stages.layout ?? 0) + performance.now() - t1;
    }
  }
}

/** The draft tree of the glyph runs read. */
function draftOf(file: string, read: PdfReadResult): DraftDocument {
  const warnings: ParseWarning[] = [];
  const layouts = read.pages.map((p) => ({ page: p, blocks: layoutPage(p.runs) }));
  const body = bodyStyle(layouts.flatMap((l) => l.blocks));
  const classified = layouts.map((l) => ({ page: l.page, blocks: l.blocks.map((b) => classify(b, body)) }));

  // Heading levels: distinct heading sizes, largest first; body-size headings rank below them.
  const sizes = [...new Set(classified.flatMap((p) => p.blocks).filter((c) => c.heading?.bySize).map((c) => Math.round(c.heading!.size * 2) / 2))].sort((a, b) => b - a);
  const levelOf = (h: { size: number; bySize: boolean }): number => {
    if (!h.bySize) return Math.min(6, sizes.length + 1);
    const i = sizes.indexOf(Math.round(h.size * 2) / 2);
    return Math.min(6, (i < 0 ? sizes.length : i) + 1);
  };

  const pages: PageInfo[] = [];
  const pageNodes: DraftNode[] = [];
  const open: OpenHeading[] = [];
  let firstTop: string | undefined;
  for (const { page, blocks } of classified) {
    pages.push({ index: page.index, box: roundBox(page.box), rotate: page.rotate, textRuns: page.runs.length });
    const nodes: DraftNode[] = [];
    let list: DraftNode | undefined;
    for (const c of blocks) {
      const b = c.block;
      const anchor = pdfAnchor(file, page.index, b.box, b.lines.length > 1 ? b.lines.map((l) => l.box) : undefined);
      if (!c.listItem) list = undefined;
      if (c.heading) {
        const level = levelOf(c.heading);
        if (level === 1 && firstTop === undefined) firstTop = c.text;
        nodes.push({ kind: 'heading', modality: 'text', text: c.text, anchor, level, children: [] });
      } else if (b.kind === 'table') {
        const header = b.lines[0]!.frags.map((f) => f.text.text).join(' | ');
        // The first line is taken as the header: it stays a leaf (its glyphs are on the page) without
        // a data-row index, and travels as `header` with every data row below it.
        const rows = b.lines.map((line, i): DraftNode => {
          const row: DraftNode = {
            kind: 'row',
            modality: 'table',
            text: lineText(line),
            anchor: pdfAnchor(file, page.index, line.box),
            cells: line.frags.map((f) => f.text.text),
            children: [],
          };
          if (i > 0) {
            row.header = header;
            row.anchor.row = i - 1;
          }
          return row;
        });
        nodes.push({ kind: 'table', modality: 'table', text: '', anchor: pdfAnchor(file, page.index, b.box), header, children: rows });
      } else {
        const sentences = sentenceLeaves(file, page.index, b.lines);
        if (sentences.length === 0) continue;
        const node: DraftNode = { kind: c.listItem ? 'listItem' : 'paragraph', modality: 'text', text: '', anchor: pdfAnchor(file, page.index, b.box), children: sentences };
        if (c.listItem) {
          if (!list) {
            list = { kind: 'list', modality: 'text', text: '', anchor: { file }, children: [] };
            nodes.push(list);
          }
          list.children.push(node);
        } else nodes.push(node);
      }
    }
    if (nodes.length === 0) continue;
    pageNodes.push({
      kind: 'page',
      modality: 'text',
      text: '',
      anchor: { file, page: page.index, bbox: roundBox(page.box) },
      children: nestSections(nodes, open),
    });
  }

  if (read.failedPages.length > 0) {
    const shown = read.failedPages.slice(0, 3).map((f) => `p. ${f.index + 1}: ${f.reason}`).join('; ');
    warnings.push({ file, code: 'unreadablePage', message: `${file}: ${read.failedPages.length} page(s) could not be read (${shown}).` });
  }
  if (read.truncatedAt !== undefined) {
    warnings.push({ file, code: 'timeLimit', message: `${file}: stopped after ${read.truncatedAt} of ${read.numPages} pages (time limit); the rest is not indexed.` });
  }
  if (pageNodes.length === 0 && read.pages.length > 0) {
    warnings.push({ file, code: 'noTextLayer', message: `${file}: no text layer (a scanned or image-only PDF?); nothing to index — OCR is not supported.` });
  }
  return {
    file,
    format: 'pdf',
    title: read.title ?? firstTop ?? titleFromPath(file),
    root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children: pageNodes },
    pages,
    warnings,
  };
}
