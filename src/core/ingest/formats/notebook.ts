/**
 * Jupyter notebooks (.ipynb). Markdown cells are parsed as Markdown and code cells become code
 * nodes; headings in markdown cells open sections that the following cells (code included) fall
 * in. Outputs are not indexed (they are often large and regenerated).
 *
 * Anchors map into the .ipynb file's own text, character by character: a cell's `source` (a
 * string or an array of line strings) is decoded with jsonSource, which keeps, for every decoded
 * character, the range of its JSON-escaped source characters. So a leaf's [charStart, charEnd)
 * covers exactly the escaped text of that leaf inside the cell's source strings (for a leaf that
 * crosses source lines it also spans the `", "` between them).
 */

import { CanopyError, ErrorCodes } from '../../errors';
import { codeNode, paragraphNode } from '../draftNodes';
import { JsonNode, JsonSyntaxError, mapJsonString, parseJsonWithPositions } from '../jsonSource';
import type { DraftDocument, DraftNode, ParseWarning } from '../parsedDocument';
import { nestSections } from '../sections';
import { MappedText, MappedTextBuilder, TextAnchorer } from '../textAnchors';
import { markdownBlocks } from './markdown';
import { titleFromPath } from './titles';
import { pushAll } from '../../arrays';

function field(node: JsonNode, key: string): JsonNode | undefined {
  return node.type === 'object' ? node.entries.find((e) => e.key === key)?.value : undefined;
}

function cellSource(text: string, source: JsonNode | undefined): MappedText | undefined {
  if (!source) return undefined;
  if (source.type === 'string') return mapJsonString(text, source);
  if (source.type !== 'array') return undefined;
  const b = new MappedTextBuilder();
  for (const line of source.items) if (line.type === 'string') b.pushMapped(mapJsonString(text, line));
  return b.build();
}

export function parseNotebook(file: string, text: string): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  let root: JsonNode;
  try {
    root = parseJsonWithPositions(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) {
      const pos = anchorer.lines.position(err.offset);
      throw new CanopyError(ErrorCodes.parseFailed, `${file}: not a valid notebook — JSON error at line ${pos.line}, column ${pos.column + 1}.`, { file, cause: err });
    }
    throw err;
  }
  const cells = field(root, 'cells');
  if (!cells || cells.type !== 'array') {
    throw new CanopyError(ErrorCodes.parseFailed, `${file}: not a Jupyter notebook (no "cells" array).`, { file });
  }
  const warnings: ParseWarning[] = [];
  const blocks: DraftNode[] = [];
  cells.items.forEach((cell, index) => {
    const typeNode = field(cell, 'cell_type');
    const type = typeNode?.type === 'string' ? typeNode.value : 'raw';
    const src = cellSource(text, field(cell, 'source'));
    if (!src || src.text.trim().length === 0) return;
    if (type === 'markdown') {
      pushAll(blocks, markdownBlocks(anchorer, src));
    } else if (type === 'code') {
      const code = codeNode(anchorer, src);
      if (code) {
        code.title = `cell ${index + 1}`;
        blocks.push(code);
      }
    } else {
      const p = paragraphNode(anchorer, src);
      if (p) blocks.push(p);
    }
  });
  const firstH1 = blocks.find((b) => b.kind === 'heading' && b.level === 1);
  return {
    file,
    format: 'notebook',
    title: firstH1?.title ?? titleFromPath(file),
    root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children: nestSections(blocks) },
    warnings,
  };
}
