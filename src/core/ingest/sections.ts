/**
 * Turns a flat run of blocks in reading order, some of them headings with a level, into nested
 * sections: each heading opens a section that holds the heading and everything after it up to
 * the next heading of the same or a higher level. Blocks before the first heading stay at the
 * top. Used by every format that has headings (Markdown, HTML, notebooks, PDF pages).
 */

import type { DraftNode } from './parsedDocument';

/** One open heading of an enclosing scope. */
export interface OpenHeading {
  title: string;
  level: number;
}

/** Joins a heading path for `context`. */
export function headingPath(path: string[]): string {
  return path.join(' › ');
}

/**
 * Nests `blocks` into sections. `outer` is the heading path already open when these blocks start
 * (a PDF page continues the previous page's section); it only feeds `context`, and is updated in
 * place to the path open after the last block so the next call can continue it.
 */
export function nestSections(blocks: DraftNode[], outer: OpenHeading[] = []): DraftNode[] {
  const top: DraftNode[] = [];
  // Sections opened in this call, outermost first.
  const stack: DraftNode[] = [];
  const pathOf = (): string[] => [...outer.map((o) => o.title), ...stack.map((s) => s.title ?? '')];
  for (const block of blocks) {
    if (block.kind === 'heading') {
      const level = block.level ?? 1;
      while (stack.length > 0 && (stack[stack.length - 1]!.level ?? 1) >= level) stack.pop();
      if (stack.length === 0) while (outer.length > 0 && outer[outer.length - 1]!.level >= level) outer.pop();
      const title = block.title ?? block.text.trim();
      const parentPath = pathOf();
      const section: DraftNode = {
        kind: 'section',
        modality: 'text',
        text: '',
        anchor: { file: block.anchor.file },
        level,
        title,
        children: [block],
      };
      if (parentPath.length > 0) block.context = headingPath(parentPath);
      section.context = headingPath([...parentPath, title]);
      (stack.length > 0 ? stack[stack.length - 1]!.children : top).push(section);
      stack.push(section);
      continue;
    }
    const path = pathOf();
    if (path.length > 0 && block.context === undefined) block.context = headingPath(path);
    (stack.length > 0 ? stack[stack.length - 1]!.children : top).push(block);
  }
  outer.push(...stack.map((s) => ({ title: s.title ?? '', level: s.level ?? 1 })));
  return top;
}
