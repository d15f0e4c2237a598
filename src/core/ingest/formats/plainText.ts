/**
 * Plain text: paragraphs are separated by blank lines; each paragraph's leaves are its
 * sentences. Hard-wrapped lines inside a paragraph do not end sentences.
 */

import { paragraphNode } from '../draftNodes';
import type { DraftDocument, DraftNode } from '../parsedDocument';
import { MappedText, TextAnchorer } from '../textAnchors';
import { titleFromPath } from './titles';

/** [start, end) spans of blank-line separated blocks of `text` (from `from` to `to`). */
export function blankLineBlocks(text: string, from = 0, to = text.length): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const re = /(?:\r\n|\n|\r)[ \t\f\v]*(?:\r\n|\n|\r)/g;
  re.lastIndex = from;
  let start = from;
  for (let m = re.exec(text); m && m.index < to; m = re.exec(text)) {
    if (m.index > start) out.push([start, m.index]);
    start = m.index + m[0].length;
  }
  if (to > start) out.push([start, to]);
  return out;
}

export function parsePlainText(file: string, text: string): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  const children: DraftNode[] = [];
  for (const [s, e] of blankLineBlocks(text)) {
    const node = paragraphNode(anchorer, MappedText.identity(text.slice(s, e), s));
    if (node) children.push(node);
  }
  return {
    file,
    format: 'text',
    title: titleFromPath(file),
    root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children },
    warnings: [],
  };
}
