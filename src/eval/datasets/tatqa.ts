/**
 * TAT-QA: one line per context (a table and its paragraphs) holding several questions. Row 0 of
 * the table is its header (it travels with every row). Gold: the rows of the mapped table cells
 * and the char spans of the mapped paragraph text when `mappings` exist (the gold test file);
 * otherwise the related paragraphs (`rel_paragraphs`) and, when the answer comes from the table,
 * the table as a whole (paragraph-level units).
 */
import { Fields, type JsonLine } from './jsonl';
import type { ContextSource, EvalQuestion, GoldUnit } from './types';

const HEADER_ROWS = 1;

function cellText(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v);
}

export function readTatqa(lines: JsonLine[], path: string): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  for (const { line, value } of lines) {
    const f = Fields.of(value, path, line);
    const table = f.object('table');
    const rows = table.array('table').map((r, i) => {
      if (!Array.isArray(r)) return table.fail(`"table.table"[${i}] must be an array of cells`);
      return r.map(cellText);
    });
    const paragraphs = f.objects('paragraphs').map((p) => ({ order: p.id('order'), text: p.string('text') }));
    const title = `table ${table.optString('uid') ?? ''}`.trim();
    const context: ContextSource[] = [
      { kind: 'table', key: 't', title, rows, headerRows: Math.min(HEADER_ROWS, rows.length) },
      ...paragraphs.map((p) => ({ kind: 'text' as const, key: `p${p.order}`, title: `paragraph ${p.order}`, text: p.text })),
    ];
    for (const q of f.objects('questions')) {
      const gold: GoldUnit[] = [];
      const mappings = q.optArray('mappings');
      if (mappings && mappings.length > 0) {
        for (const m of q.objects('mappings')) {
          for (const [k, v] of Object.entries(m.obj)) {
            if (!Array.isArray(v) || v.length !== 2 || !v.every((x) => Number.isInteger(x))) m.fail(`mapping "${k}" must be [a, b] integers`);
            const [a, b] = v as [number, number];
            if (k === 'table') {
              if (a >= HEADER_ROWS) gold.push({ granularity: 'row', source: 't', index: a - HEADER_ROWS });
            } else {
              const order = /^paragraph_(\w+)$/.exec(k)?.[1];
              if (order === undefined) m.fail(`unknown mapping key "${k}" (expected "table" or "paragraph_<order>")`);
              gold.push({ granularity: 'span', source: `p${order}`, start: a, end: b });
            }
          }
        }
      } else {
        for (const p of q.has('rel_paragraphs') ? q.array('rel_paragraphs') : []) gold.push({ granularity: 'paragraph', source: `p${String(p)}` });
        const from = q.optString('answer_from') ?? '';
        if (from.includes('table')) gold.push({ granularity: 'paragraph', source: 't' });
      }
      const rawAnswer = q.obj.answer;
      const answers = Array.isArray(rawAnswer) ? rawAnswer.map(cellText).filter((a) => a !== '') : rawAnswer === undefined || rawAnswer === null ? [] : [cellText(rawAnswer)];
      const type = q.optString('answer_type');
      const eq: EvalQuestion = { id: q.id('uid'), line, question: q.string('question'), answers, context, gold, goldDocs: new Map() };
      if (type === 'multi-span') eq.answersAllRequired = true;
      if (type) eq.type = type;
      out.push(eq);
    }
  }
  return out;
}
