/**
 * Storing a gold mark from the inspector (a node of a trace, or a box on a PDF page) as an
 * annotation, without VS Code: for text anchors the span's current text and the surrounding
 * fingerprint are read from the file itself (so re-location works later, as for an editor
 * selection); PDF pages and table rows keep the node's text. The store is the core's (locked,
 * atomic); the same span for the same question is stored once.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { annotationsPath, AnnotationStore, contextFingerprint, makeAnnotation, type Annotation } from '../core/annotate/store';
import { CanopyError, ErrorCodes } from '../core/errors';
import type { GoldMark } from './views/inspectorRequests';

export async function addGoldMark(root: string, mark: GoldMark, author: string, time?: string): Promise<{ annotation: Annotation; added: boolean }> {
  const a = mark.anchor;
  let text = mark.text ?? '';
  let context = { before: '', after: '' };
  if (a.page === undefined && a.charStart !== undefined && a.charEnd !== undefined) {
    const file = path.join(root, ...a.file.split('/'));
    const source = await fs.readFile(file, 'utf8').catch((err: Error) => {
      throw new CanopyError(ErrorCodes.notFound, `${a.file} cannot be read to mark it as gold: ${err.message}`, { file: a.file });
    });
    if (a.charEnd > source.length || a.charStart > a.charEnd) throw new CanopyError(ErrorCodes.badInput, `${a.file} changed since the answer: the node's span is past the end of the file; ask again first`, { file: a.file });
    text = source.slice(a.charStart, a.charEnd);
    context = contextFingerprint(source, a.charStart, a.charEnd);
  }
  if (!text.trim() && a.page === undefined) throw new CanopyError(ErrorCodes.badInput, `the node at ${a.file} has no text to mark`, { file: a.file });
  const annotation = makeAnnotation({ question: mark.question, anchor: a, text, context, author, ...(time ? { time } : {}), source: mark.source });
  const added = await new AnnotationStore(annotationsPath(root)).add([annotation]);
  return { annotation, added: added.length > 0 };
}
