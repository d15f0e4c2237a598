/**
 * An image file on its own: one item with one whole-image leaf. Nothing in the bytes is a
 * caption, so the leaf's text is the file name in words ("revenue-by-region.png" → "revenue by
 * region"); images referenced from documents get their alt text / caption in those parsers.
 */

import type { DraftDocument } from '../parsedDocument';
import { titleFromPath } from './titles';

export function captionFromFileName(file: string): string {
  const base = titleFromPath(file);
  const stem = base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base;
  return stem.replace(/[-_.]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim() || base;
}

export function parseImageFile(file: string): DraftDocument {
  const title = titleFromPath(file);
  return {
    file,
    format: 'image',
    title,
    root: {
      kind: 'document',
      modality: 'image',
      text: '',
      anchor: { file },
      children: [{ kind: 'image', modality: 'image', text: captionFromFileName(file), anchor: { file }, ref: title, children: [] }],
    },
    warnings: [],
  };
}
