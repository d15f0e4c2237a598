/**
 * FinanceBench: questions over SEC-filing PDFs (`pdf_file`, relative to the questions file);
 * gold = the evidence pages (`evidence_page_num`, 0-based). The given items are the PDF's own
 * items as Canopy's parser builds them (page groups with their page → block → sentence trees);
 * the open pool is the folder of PDFs indexed with Canopy's workspace indexer.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { Fields, type JsonLine } from './jsonl';
import type { EvalQuestion, GoldUnit } from './types';

export function readFinancebench(lines: JsonLine[], path: string): { questions: EvalQuestion[]; pdfRoot: string | undefined } {
  const base = dirname(path);
  const pdfs = new Set<string>();
  const questions = lines.map(({ line, value }) => {
    const f = Fields.of(value, path, line);
    const pdfFile = f.string('pdf_file');
    const abs = resolve(base, pdfFile);
    if (!existsSync(abs)) f.fail(`pdf_file "${pdfFile}" does not exist (resolved to ${abs})`);
    pdfs.add(abs);
    const gold: GoldUnit[] = [];
    for (const e of f.objects('evidence')) {
      const page = e.number('evidence_page_num');
      if (!Number.isInteger(page) || page < 0) e.fail('evidence_page_num must be a 0-based page number');
      if (!gold.some((g) => g.granularity === 'page' && g.index === page)) gold.push({ granularity: 'page', source: 'pdf', index: page });
    }
    const answer = f.optString('answer');
    const q: EvalQuestion = {
      id: f.id('financebench_id'),
      line,
      question: f.string('question'),
      answers: answer ? [answer] : [],
      context: [{ kind: 'file', key: 'pdf', path: abs, relPath: pdfFile }],
      gold,
      goldDocs: new Map(),
    };
    if (answer) q.reference = answer;
    const type = f.optString('question_type');
    if (type) q.type = type;
    return q;
  });
  // The pool is the folder holding every PDF the questions name.
  let root: string | undefined;
  for (const p of pdfs) {
    const d = dirname(p);
    if (root === undefined) root = d;
    while (root !== undefined && relative(root, d).startsWith('..')) root = dirname(root);
  }
  if (root !== undefined) {
    const r = root;
    for (const q of questions) for (const c of q.context) if (c.kind === 'file') c.relPath = relative(r, c.path).split('\\').join('/');
  }
  return { questions, pdfRoot: root };
}
