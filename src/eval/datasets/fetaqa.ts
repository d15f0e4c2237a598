/**
 * FeTaQA: one Wikipedia table per question (row 0 = header); gold rows = the rows of
 * `highlighted_cell_ids` `[row, col]` (table_array coordinates, header included); the answer is
 * a free-form sentence, kept as the reference for an LLM reader's F1.
 */
import { Fields, type JsonLine } from './jsonl';
import type { EvalQuestion, GoldUnit } from './types';

const HEADER_ROWS = 1;

export function readFetaqa(lines: JsonLine[], path: string): EvalQuestion[] {
  return lines.map(({ line, value }) => {
    const f = Fields.of(value, path, line);
    const rows = f.array('table_array').map((r, i) => {
      if (!Array.isArray(r)) return f.fail(`"table_array"[${i}] must be an array of cells`);
      return r.map((c) => (typeof c === 'string' ? c : String(c ?? '')));
    });
    const cells = f.tuples('highlighted_cell_ids', (t) => (t.length === 2 && t.every((x) => Number.isInteger(x)) ? (t as [number, number]) : undefined), '[row, col]');
    const gold: GoldUnit[] = [...new Set(cells.map(([r]) => r))]
      .filter((r) => r >= HEADER_ROWS && r < rows.length)
      .sort((a, b) => a - b)
      .map((r) => ({ granularity: 'row', source: 't', index: r - HEADER_ROWS }));
    const title = [f.optString('table_page_title'), f.optString('table_section_title')].filter((s) => s).join(' — ');
    return {
      id: f.id('feta_id'),
      line,
      question: f.string('question'),
      answers: [],
      reference: f.string('answer'),
      context: [{ kind: 'table', key: 't', title, rows, headerRows: Math.min(HEADER_ROWS, rows.length) }],
      gold,
      goldDocs: new Map(),
    } satisfies EvalQuestion;
  });
}
