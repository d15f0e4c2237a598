/**
 * CSV and TSV via papaparse. The file is one table; every data row is a leaf whose text is the
 * row's exact source line(s) (quotes and delimiters included), with the decoded cells in `cells`
 * and the header row in `header`. The first row is the header unless most of its cells are
 * numbers (then columns are named "column 1…" and a warning says so). Rows with a different cell
 * count than the header are kept and reported in one warning ("ragged rows").
 */

import Papa from 'papaparse';
import { leafFromSpan, trimSpan } from '../draftNodes';
import type { DraftDocument, DraftNode, ParseWarning } from '../parsedDocument';
import { MappedText, TextAnchorer } from '../textAnchors';
import { titleFromPath } from './titles';
import { maxOf } from '../../arrays';

interface RawRow {
  cells: string[];
  start: number;
  end: number;
}

function isNumeric(s: string): boolean {
  return /^[-+($€£]*\d[\d,.\s]*%?\)?$/.test(s.trim());
}

export function parseDelimited(file: string, text: string, format: 'csv' | 'tsv'): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  const warnings: ParseWarning[] = [];
  const rows: RawRow[] = [];
  let cursor = 0;
  const parseErrors: string[] = [];
  Papa.parse<string[]>(text, {
    delimiter: format === 'tsv' ? '\t' : '',
    delimitersToGuess: [',', ';', '\t', '|'],
    header: false,
    skipEmptyLines: false,
    step: (result) => {
      const start = cursor;
      const end = result.meta.cursor;
      cursor = end;
      for (const e of result.errors) if (parseErrors.length < 3) parseErrors.push(`${e.message} (row ${rows.length + 1})`);
      const span = trimSpan(text, start, end);
      if (!span) return;
      // Keep leading spaces of the first cell out of the anchor only when they are blank padding.
      rows.push({ cells: result.data, start: span[0], end: span[1] });
    },
  });
  if (parseErrors.length > 0) {
    warnings.push({ file, code: 'raggedRows', message: `${file}: malformed ${format.toUpperCase()} — ${parseErrors.join('; ')}.` });
  }
  if (rows.length === 0) {
    return { file, format, title: titleFromPath(file), root: { kind: 'document', modality: 'table', text: '', anchor: { file }, children: [] }, warnings };
  }
  const first = rows[0]!;
  const numericShare = first.cells.filter(isNumeric).length / Math.max(1, first.cells.length);
  const hasHeader = !(numericShare > 0.5 && rows.length > 1);
  const width = maxOf(rows, (r) => r.cells.length);
  let headerCells: string[];
  if (hasHeader) headerCells = first.cells.map((c, i) => c.trim() || `column ${i + 1}`);
  else {
    headerCells = Array.from({ length: width }, (_, i) => `column ${i + 1}`);
    warnings.push({ file, code: 'noHeader', message: `${file}: the first row looks like data (mostly numbers); columns are named "column 1…${width}".` });
  }
  for (let i = headerCells.length; i < width; i++) headerCells.push(`column ${i + 1}`);
  const header = headerCells.join(' | ');
  const expected = hasHeader ? first.cells.length : width;
  const m = MappedText.identity(text, 0);
  const leaves: DraftNode[] = [];
  const ragged: number[] = [];
  for (const r of hasHeader ? rows.slice(1) : rows) {
    const leaf = leafFromSpan(anchorer, m, r.start, r.end, 'row', 'table');
    leaf.cells = r.cells;
    leaf.header = header;
    leaf.anchor.row = leaves.length;
    if (r.cells.length !== expected) ragged.push(leaf.anchor.startLine ?? 0);
    leaves.push(leaf);
  }
  if (ragged.length > 0) {
    const shown = ragged.slice(0, 5).join(', ') + (ragged.length > 5 ? ', …' : '');
    warnings.push({
      file,
      code: 'raggedRows',
      message: `${file}: ${ragged.length} row(s) do not have ${expected} cells (line ${shown}); kept as they are.`,
    });
  }
  // The table's range covers the header row too (the header is not a leaf: it travels as `header`).
  const tableAnchor = leaves.length > 0 ? anchorer.anchor(rows[0]!.start, leaves[leaves.length - 1]!.anchor.charEnd!) : { file };
  const table: DraftNode = { kind: 'table', modality: 'table', text: '', anchor: tableAnchor, header, title: titleFromPath(file), children: leaves };
  return {
    file,
    format,
    title: titleFromPath(file),
    root: { kind: 'document', modality: 'table', text: '', anchor: { file }, children: leaves.length > 0 ? [table] : [] },
    warnings,
  };
}
