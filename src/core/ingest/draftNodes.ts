/**
 * Small constructors for draft regions shared by the text-format parsers: a paragraph cut into
 * sentence leaves, a code block cut into blank-line chunks, a heading leaf. Every leaf's text is
 * the parser's (decoded) text of its span and its anchor the exact source range of that span.
 */

import type { Modality, RegionKind } from '../../contracts/region';
import type { DraftNode } from './parsedDocument';
import { sentenceSpans } from './sentences';
import { MappedText, TextAnchorer } from './textAnchors';

/** A leaf whose text is m.text[start, end). */
export function leafFromSpan(
  anchorer: TextAnchorer,
  m: MappedText,
  start: number,
  end: number,
  kind: RegionKind,
  modality: Modality,
): DraftNode {
  return { kind, modality, text: m.text.slice(start, end), anchor: anchorer.anchorMapped(m, start, end), children: [] };
}

/** [start, end) of m.text with surrounding whitespace removed, or undefined when blank. */
export function trimSpan(text: string, start = 0, end = text.length): [number, number] | undefined {
  let s = start;
  let e = end;
  while (s < e && /\s/.test(text[s]!)) s++;
  while (e > s && /\s/.test(text[e - 1]!)) e--;
  return e > s ? [s, e] : undefined;
}

/** A paragraph (or list item, caption…) of sentence leaves; undefined when the text is blank. */
export function paragraphNode(
  anchorer: TextAnchorer,
  m: MappedText,
  kind: RegionKind = 'paragraph',
  modality: Modality = 'text',
): DraftNode | undefined {
  const spans = sentenceSpans(m.text);
  if (spans.length === 0) return undefined;
  const children = spans.map(([s, e]) => leafFromSpan(anchorer, m, s, e, 'sentence', modality));
  return { kind, modality, text: '', anchor: { file: anchorer.file }, children };
}

/** A heading leaf; undefined when blank. */
export function headingNode(anchorer: TextAnchorer, m: MappedText, level: number): DraftNode | undefined {
  const span = trimSpan(m.text);
  if (!span) return undefined;
  const node = leafFromSpan(anchorer, m, span[0], span[1], 'heading', 'text');
  node.level = level;
  return node;
}

/**
 * A code block. Short blocks are one leaf; longer ones (more than one blank-line separated chunk)
 * become a code node whose leaves are the chunks, so a reader can keep one function of a cell.
 */
export function codeNode(anchorer: TextAnchorer, m: MappedText): DraftNode | undefined {
  const chunks: Array<[number, number]> = [];
  const re = /\n[ \t]*\r?\n|\r[ \t]*\r/g;
  let last = 0;
  for (let match = re.exec(m.text); match; match = re.exec(m.text)) {
    const span = trimEndSpan(m.text, last, match.index);
    if (span) chunks.push(span);
    last = match.index + match[0].length;
  }
  const tail = trimEndSpan(m.text, last, m.text.length);
  if (tail) chunks.push(tail);
  if (chunks.length === 0) return undefined;
  if (chunks.length === 1) return leafFromSpan(anchorer, m, chunks[0]![0], chunks[0]![1], 'code', 'code');
  return {
    kind: 'code',
    modality: 'code',
    text: '',
    anchor: { file: anchorer.file },
    children: chunks.map(([s, e]) => leafFromSpan(anchorer, m, s, e, 'code', 'code')),
  };
}

/** Like trimSpan but keeps leading indentation of the first line (it matters in code); drops leading blank lines. */
function trimEndSpan(text: string, start: number, end: number): [number, number] | undefined {
  let s = start;
  let e = end;
  while (e > s && /\s/.test(text[e - 1]!)) e--;
  if (e <= s) return undefined;
  // Skip whole blank lines at the start.
  for (let i = s; i < e; i++) {
    const c = text[i]!;
    if (c === '\n' || c === '\r') s = i + 1;
    else if (c !== ' ' && c !== '\t') break;
  }
  return e > s ? [s, e] : undefined;
}
