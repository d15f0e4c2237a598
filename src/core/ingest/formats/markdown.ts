/**
 * Markdown via mdast-util-from-markdown (CommonMark, with source positions). Headings open
 * sections; paragraphs become sentence leaves; lists become list → list items → sentences;
 * fenced/indented code becomes code leaves (the content between the fences); GFM pipe tables
 * (which CommonMark reads as paragraphs) are recognised by their delimiter row and become a
 * table of row leaves with the header row attached; a paragraph that is only an image (or a
 * linked image) becomes an image leaf whose text is the alt text (inline images inside prose stay
 * part of the sentence). Leaf text is the exact source slice, inline markup included. YAML front
 * matter is skipped (its `title:` names the document).
 *
 * `markdownBlocks` works on a MappedText so that notebook cells (decoded from JSON strings)
 * reuse it with anchors into the .ipynb file.
 */

import { fromMarkdown } from 'mdast-util-from-markdown';
import type { Nodes, Parent, PhrasingContent } from 'mdast';
import { codeNode, headingNode, leafFromSpan, paragraphNode, trimSpan } from '../draftNodes';
import type { DraftDocument, DraftNode } from '../parsedDocument';
import { nestSections } from '../sections';
import { MappedText, TextAnchorer } from '../textAnchors';
import { titleFromPath } from './titles';
import { pushAll } from '../../arrays';

function startOf(n: { position?: { start: { offset?: number } } }): number | undefined {
  return n.position?.start.offset;
}
function endOf(n: { position?: { end: { offset?: number } } }): number | undefined {
  return n.position?.end.offset;
}

/** Plain text of inline content (for titles and alt text). */
function plainText(node: Nodes): string {
  if ('value' in node && typeof node.value === 'string') return node.value;
  if (node.type === 'image') return node.alt ?? '';
  if ('children' in node) return (node.children as Nodes[]).map(plainText).join('');
  return '';
}

const delimiterRow = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/** Splits a pipe-table line into trimmed cells, honouring `\|` escapes. */
export function splitPipeCells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (s[i] === '|') {
      cells.push(cur.trim());
      cur = '';
    } else cur += s[i];
  }
  cells.push(cur.trim());
  return cells;
}

interface LineSpan {
  start: number;
  end: number;
}

function lineSpans(text: string, from: number, to: number): LineSpan[] {
  const out: LineSpan[] = [];
  let s = from;
  for (let i = from; i < to; i++) {
    const c = text[i];
    if (c === '\n' || c === '\r') {
      out.push({ start: s, end: i });
      if (c === '\r' && text[i + 1] === '\n') i++;
      s = i + 1;
    }
  }
  out.push({ start: s, end: to });
  return out;
}

/**
 * A pipe table inside a paragraph's span, if any: the text lines before it (a paragraph),
 * the table, and lines after it are returned as separate pieces.
 */
function tableInParagraph(anchorer: TextAnchorer, m: MappedText, from: number, to: number): DraftNode[] | undefined {
  const lines = lineSpans(m.text, from, to);
  for (let k = 1; k < lines.length; k++) {
    const delim = m.text.slice(lines[k]!.start, lines[k]!.end);
    const head = m.text.slice(lines[k - 1]!.start, lines[k - 1]!.end);
    if (!delimiterRow.test(delim) || !head.includes('|') || !delim.includes('-')) continue;
    if (!delim.includes('|') && !head.trim().startsWith('|')) continue;
    const out: DraftNode[] = [];
    if (k >= 2) {
      const p = paragraphNode(anchorer, m.slice(lines[0]!.start, lines[k - 2]!.end));
      if (p) out.push(p);
    }
    const headerCells = splitPipeCells(head);
    const rows: DraftNode[] = [];
    let lastEnd = 0;
    let j = k + 1;
    for (; j < lines.length; j++) {
      const line = m.text.slice(lines[j]!.start, lines[j]!.end);
      if (!line.includes('|') || line.trim().length === 0) break;
      const span = trimSpan(m.text, lines[j]!.start, lines[j]!.end);
      if (!span) break;
      const row = leafFromSpan(anchorer, m, span[0], span[1], 'row', 'table');
      row.cells = splitPipeCells(line);
      row.header = headerCells.join(' | ');
      row.anchor.row = rows.length;
      rows.push(row);
      lastEnd = span[1];
    }
    if (rows.length === 0) continue;
    // The table's own range starts at its header line (which is not a leaf: it travels as `header`).
    const headStart = trimSpan(m.text, lines[k - 1]!.start, lines[k - 1]!.end)![0];
    const tableAnchor = anchorer.anchorMapped(m, headStart, lastEnd);
    out.push({ kind: 'table', modality: 'table', text: '', anchor: tableAnchor, header: headerCells.join(' | '), children: rows });
    if (j < lines.length) {
      const rest = paragraphNode(anchorer, m.slice(lines[j]!.start, lines[lines.length - 1]!.end));
      if (rest) out.push(rest);
    }
    return out;
  }
  return undefined;
}

function imageLeaf(anchorer: TextAnchorer, m: MappedText, node: Extract<PhrasingContent, { type: 'image' }>): DraftNode | undefined {
  const s = startOf(node);
  const e = endOf(node);
  if (s === undefined || e === undefined) return undefined;
  const alt = (node.alt ?? '').trim() || (node.title ?? '').trim() || titleFromPath(node.url);
  return { kind: 'image', modality: 'image', text: alt, anchor: anchorer.anchorMapped(m, s, e), ref: node.url, children: [] };
}

/** Images of a paragraph that holds nothing but images (optionally linked) and whitespace. */
function imagesOnly(p: Parent): Array<Extract<PhrasingContent, { type: 'image' }>> | undefined {
  const images: Array<Extract<PhrasingContent, { type: 'image' }>> = [];
  for (const c of p.children as PhrasingContent[]) {
    if (c.type === 'image') images.push(c);
    else if (c.type === 'link' && c.children.length === 1 && c.children[0]!.type === 'image') images.push(c.children[0]);
    else if (c.type === 'break' || (c.type === 'text' && c.value.trim() === '')) continue;
    else return undefined;
  }
  return images.length > 0 ? images : undefined;
}

function codeContentSpan(text: string, from: number, to: number, fenced: boolean): [number, number] {
  if (!fenced) return [from, to];
  const lines = lineSpans(text, from, to);
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  const contentStart = lines.length > 1 ? lines[1]!.start : first.end;
  const closes = lines.length > 1 && /^[ \t]*(`{3,}|~{3,})[ \t]*$/.test(text.slice(last.start, last.end));
  const contentEnd = closes ? (lines.length > 2 ? lines[lines.length - 2]!.end : contentStart) : last.end;
  return [contentStart, Math.max(contentStart, contentEnd)];
}

function blocksOf(anchorer: TextAnchorer, m: MappedText, nodes: Nodes[], out: DraftNode[]): void {
  for (const node of nodes) {
    const s = startOf(node);
    const e = endOf(node);
    if (s === undefined || e === undefined) continue;
    switch (node.type) {
      case 'heading': {
        const first = node.children[0];
        const last = node.children[node.children.length - 1];
        if (!first || !last) break;
        const cs = startOf(first);
        const ce = endOf(last);
        if (cs === undefined || ce === undefined) break;
        const h = headingNode(anchorer, m.slice(cs, ce), node.depth);
        if (h) {
          h.title = plainText(node).trim() || h.text;
          out.push(h);
        }
        break;
      }
      case 'paragraph': {
        const images = imagesOnly(node);
        if (images) {
          for (const img of images) {
            const leaf = imageLeaf(anchorer, m, img);
            if (leaf) out.push(leaf);
          }
          break;
        }
        const table = tableInParagraph(anchorer, m, s, e);
        if (table) {
          pushAll(out, table);
          break;
        }
        const p = paragraphNode(anchorer, m.slice(s, e));
        if (p) out.push(p);
        break;
      }
      case 'list': {
        const items: DraftNode[] = [];
        for (const li of node.children) {
          const inner: DraftNode[] = [];
          blocksOf(anchorer, m, li.children as Nodes[], inner);
          if (inner.length === 0) continue;
          const only = inner[0]!;
          if (inner.length === 1 && only.kind === 'paragraph') items.push({ ...only, kind: 'listItem' });
          else items.push({ kind: 'listItem', modality: 'text', text: '', anchor: { file: anchorer.file }, children: inner });
        }
        if (items.length > 0) out.push({ kind: 'list', modality: 'text', text: '', anchor: { file: anchorer.file }, children: items });
        break;
      }
      case 'code': {
        const fenced = /^[ \t]*(`{3,}|~{3,})/.test(m.text.slice(s, e));
        const [cs, ce] = codeContentSpan(m.text, s, e, fenced);
        const c = codeNode(anchorer, m.slice(cs, ce));
        if (c) out.push(c);
        break;
      }
      case 'blockquote':
        blocksOf(anchorer, m, node.children as Nodes[], out);
        break;
      case 'html': {
        const raw = node.value;
        if (/^\s*<!--/.test(raw)) break;
        const img = /<img\b[^>]*>/i.exec(raw);
        if (img) {
          const alt = /\balt\s*=\s*("([^"]*)"|'([^']*)')/i.exec(img[0]);
          const src = /\bsrc\s*=\s*("([^"]*)"|'([^']*)')/i.exec(img[0]);
          const ref = src ? (src[2] ?? src[3] ?? '') : '';
          const text = (alt ? (alt[2] ?? alt[3] ?? '') : '').trim() || titleFromPath(ref);
          out.push({ kind: 'image', modality: 'image', text, anchor: anchorer.anchorMapped(m, s, e), ref, children: [] });
          break;
        }
        const p = paragraphNode(anchorer, m.slice(s, e));
        if (p) out.push(p);
        break;
      }
      default:
        // thematicBreak, definition and footnote definitions carry no evidence text of their own.
        break;
    }
  }
}

const chunkChars = 32 * 1024;

/**
 * Cut points for parsing a long text in pieces: micromark's time grows faster than linearly with
 * input size (about 6 s for 1 MB in one piece, under 2 s in pieces). A cut goes before a line at
 * column 0 that follows a blank line and cannot continue the block above it (not a list item, a
 * table row, an indented line), outside fenced code, HTML comments and raw HTML blocks — where
 * CommonMark starts a new block anyway, so the pieces parse as the whole would.
 */
export function markdownChunks(text: string): Array<[number, number]> {
  if (text.length <= chunkChars) return [[0, text.length]];
  const out: Array<[number, number]> = [];
  let start = 0;
  let fence: string | undefined;
  let rawEnd: RegExp | undefined;
  let prevBlank = false;
  const re = /[^\r\n]*(\r\n|\n|\r|$)/g;
  for (let match = re.exec(text); match && match[0].length > 0; match = re.exec(text)) {
    const lineStart = match.index;
    const line = match[0].replace(/[\r\n]+$/, '');
    const blank = line.trim() === '';
    if (fence !== undefined) {
      if (new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(line)) fence = undefined;
    } else if (rawEnd !== undefined) {
      if (rawEnd.test(line)) rawEnd = undefined;
    } else {
      const canCut = prevBlank && !blank && /^[^\s>|*+\-\d]/.test(line) && lineStart - start >= chunkChars;
      if (canCut) {
        out.push([start, lineStart]);
        start = lineStart;
      }
      const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (f) fence = f[1]!;
      else if (/^ {0,3}<!--/.test(line) && !line.includes('-->')) rawEnd = /-->/;
      else if (/^ {0,3}<(pre|script|style|textarea)\b/i.test(line) && !/<\/(pre|script|style|textarea)>/i.test(line)) rawEnd = /<\/(pre|script|style|textarea)>/i;
    }
    prevBlank = blank;
  }
  out.push([start, text.length]);
  return out;
}

/** Flat blocks (headings included, not yet nested) of a Markdown text. */
export function markdownBlocks(anchorer: TextAnchorer, m: MappedText): DraftNode[] {
  const out: DraftNode[] = [];
  for (const [a, b] of markdownChunks(m.text)) {
    const piece = a === 0 && b === m.length ? m : m.slice(a, b);
    const tree = fromMarkdown(piece.text);
    blocksOf(anchorer, piece, tree.children as Nodes[], out);
  }
  return out;
}

/** YAML front matter at the very start: its extent and `title:` if any. */
function frontMatter(text: string): { end: number; title?: string } | undefined {
  const open = /^---[ \t]*\r?\n/.exec(text);
  if (!open) return undefined;
  const close = /\r?\n(---|\.\.\.)[ \t]*(\r?\n|$)/.exec(text.slice(open[0].length));
  if (!close) return undefined;
  const end = open[0].length + close.index + close[0].length;
  const body = text.slice(open[0].length, open[0].length + close.index);
  const t = /^title:\s*["']?(.*?)["']?\s*$/m.exec(body);
  return t?.[1] ? { end, title: t[1] } : { end };
}

export function parseMarkdown(file: string, text: string): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  const fm = frontMatter(text);
  // Blank the front matter out (keeping every offset and line) so CommonMark does not read it.
  const body = fm ? text.slice(0, fm.end).replace(/[^\r\n]/g, ' ') + text.slice(fm.end) : text;
  const blocks = markdownBlocks(anchorer, MappedText.identity(body, 0));
  const firstH1 = blocks.find((b) => b.kind === 'heading' && b.level === 1);
  return {
    file,
    format: 'markdown',
    title: fm?.title ?? firstH1?.title ?? titleFromPath(file),
    root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children: nestSections(blocks) },
    warnings: [],
  };
}
