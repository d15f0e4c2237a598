/**
 * Imports a dataset's gold evidence into Canopy annotations, so training and evaluation share
 * one path (design §10). Datasets whose context is not a file (HotpotQA, 2WikiMultiHopQA,
 * MuSiQue, TAT-QA, FeTaQA) have it written as a small file tree under the caller's folder — one
 * folder per question (per context for TAT-QA), one Markdown file per paragraph, one CSV per
 * table — and the gold is anchored into those files at the offsets this module wrote them:
 *   HotpotQA / 2Wiki  supporting_facts [title, sent_idx] → that sentence's char span;
 *   MuSiQue           paragraphs[].is_supporting       → the whole paragraph;
 *   TAT-QA            mappings table [row, col]        → the CSV row (header is row 0 of the
 *                     array); mappings paragraph_<order> [start, end] → that char span; without
 *                     mappings (dev), rel_paragraphs   → whole paragraphs;
 *   FeTaQA            highlighted_cell_ids [row, col]  → the CSV row (row 0 is the header);
 *   FinanceBench      evidence_page_num (0-based)      → that page of the PDF, which is copied
 *                     into the folder (path as `pdf_file` says, relative to the dataset file).
 * The dataset is recognised from the fields of its first line; file names are never assumed.
 */
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import type { Anchor } from '../../contracts/region';
import { textAnchor } from './relocate';
import { type Annotation, contextFingerprint, makeAnnotation } from './store';

export type GoldDataset = 'hotpotqa' | '2wiki' | 'musique' | 'tatqa' | 'fetaqa' | 'financebench';

export interface ImportOptions {
  /** Import at most this many records (lines) of the dataset file. */
  limit?: number;
  author?: string;
  /** Fixed time stamp (tests, reproducible imports); default now. */
  time?: string;
  signal?: AbortSignal;
}

export interface ImportResult {
  dataset: GoldDataset;
  /** Questions read, and those that got at least one gold annotation. */
  questions: number;
  questionsWithGold: number;
  annotations: Annotation[];
  /** Files written (workspace-relative). */
  files: string[];
  /** Records or gold references that could not be used, with the dataset line number. */
  skipped: Array<{ line: number; reason: string }>;
}

/** Which dataset a parsed record belongs to, from its fields. */
export function detectDataset(record: Record<string, unknown>): GoldDataset | undefined {
  if (Array.isArray(record.supporting_facts) && Array.isArray(record.context)) return Array.isArray(record.evidences) ? '2wiki' : 'hotpotqa';
  if (Array.isArray(record.paragraphs) && Array.isArray(record.question_decomposition)) return 'musique';
  if (typeof record.table === 'object' && record.table !== null && Array.isArray(record.questions)) return 'tatqa';
  if (Array.isArray(record.table_array) && Array.isArray(record.highlighted_cell_ids)) return 'fetaqa';
  if (Array.isArray(record.evidence) && typeof record.pdf_file === 'string') return 'financebench';
  return undefined;
}

/** A file-system-safe name part. */
export function slug(text: string, max = 60): string {
  const s = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max);
  return s || 'untitled';
}

function csvCell(cell: unknown): string {
  const s = String(cell ?? '');
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

interface WrittenCsv {
  text: string;
  /** Char span of each array row's line (index 0 = header). */
  rows: Array<[number, number]>;
}

function buildCsv(table: unknown[][]): WrittenCsv {
  let text = '';
  const rows: Array<[number, number]> = [];
  for (const row of table) {
    // Line breaks inside a cell would split the row for parsers that read line by line.
    const line = row.map((c) => csvCell(String(c ?? '').replace(/\s*[\r\n]+\s*/g, ' '))).join(',');
    rows.push([text.length, text.length + line.length]);
    text += `${line}\n`;
  }
  return { text, rows };
}

/** `# title\n\n` + paragraph; returns the text and where each sentence landed. */
function buildMarkdown(title: string, sentences: string[]): { text: string; spans: Array<[number, number]> } {
  const head = `# ${title.replace(/[\r\n]+/g, ' ')}\n\n`;
  const raw = sentences.join('');
  const lead = raw.length - raw.trimStart().length;
  const body = raw.trim();
  const spans: Array<[number, number]> = [];
  let at = 0;
  for (const s of sentences) {
    let start = at + (s.length - s.trimStart().length);
    let end = at + s.trimEnd().length;
    at += s.length;
    start = Math.max(0, start - lead);
    end = Math.min(body.length, end - lead);
    spans.push([head.length + start, head.length + Math.max(start, end)]);
  }
  return { text: `${head}${body}\n`, spans };
}

class TreeWriter {
  readonly files: string[] = [];
  constructor(readonly outDir: string) {}

  async write(rel: string, text: string): Promise<void> {
    const abs = path.join(this.outDir, ...rel.split('/'));
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, text);
    this.files.push(rel);
  }
}

interface GoldRef {
  question: string;
  questionId: string;
  file: string;
  source: string;
  anchor: Anchor;
}

function annotationFor(ref: GoldRef, options: ImportOptions): Annotation {
  const a = ref.anchor;
  const hasChars = a.charStart !== undefined && a.charEnd !== undefined;
  return makeAnnotation({
    question: ref.question,
    questionId: ref.questionId,
    anchor: a,
    text: hasChars ? ref.source.slice(a.charStart, a.charEnd) : ref.source,
    context: hasChars ? contextFingerprint(ref.source, a.charStart!, a.charEnd!) : { before: '', after: '' },
    author: options.author ?? 'import',
    ...(options.time ? { time: options.time } : {}),
    source: 'import',
  });
}

async function* records(file: string): AsyncGenerator<{ line: number; record?: Record<string, unknown>; error?: string }> {
  const rl = readline.createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of rl) {
    line++;
    if (!raw.trim()) continue;
    try {
      yield { line, record: JSON.parse(raw) as Record<string, unknown> };
    } catch (err) {
      yield { line, error: `invalid JSON: ${(err as Error).message}` };
    }
  }
}

/** Reads `datasetFile`, writes its contexts under `outDir`, and returns annotations anchored in them. */
export async function importGold(datasetFile: string, outDir: string, options: ImportOptions = {}): Promise<ImportResult> {
  const writer = new TreeWriter(outDir);
  const result: ImportResult = { dataset: 'hotpotqa', questions: 0, questionsWithGold: 0, annotations: [], files: writer.files, skipped: [] };
  let dataset: GoldDataset | undefined;
  let count = 0;
  for await (const { line, record, error } of records(datasetFile)) {
    throwIfCancelled(options.signal);
    if (options.limit !== undefined && count >= options.limit) break;
    count++;
    if (!record) {
      result.skipped.push({ line, reason: error! });
      continue;
    }
    dataset ??= detectDataset(record);
    if (!dataset) throw new CanopyError(ErrorCodes.unsupportedFormat, `${datasetFile}: line ${line} is not HotpotQA, 2WikiMultiHopQA, MuSiQue, TAT-QA, FeTaQA or FinanceBench`, { file: datasetFile });
    result.dataset = dataset;
    const refs: GoldRef[] = [];
    const skip = (reason: string) => result.skipped.push({ line, reason });
    const before = result.questions;
    switch (dataset) {
      case 'hotpotqa':
      case '2wiki':
        result.questions++;
        await importHotpot(record, writer, refs, skip);
        break;
      case 'musique':
        result.questions++;
        await importMusique(record, writer, refs, skip);
        break;
      case 'tatqa':
        result.questions += await importTatqa(record, writer, refs, skip);
        break;
      case 'fetaqa':
        result.questions++;
        await importFetaqa(record, writer, refs, skip);
        break;
      case 'financebench':
        result.questions++;
        await importFinanceBench(record, path.dirname(datasetFile), writer, refs, skip);
        break;
    }
    const withGold = new Set(refs.map((r) => r.questionId));
    result.questionsWithGold += Math.min(withGold.size, result.questions - before);
    for (const ref of refs) result.annotations.push(annotationFor(ref, options));
  }
  if (!dataset) throw new CanopyError(ErrorCodes.badInput, `${datasetFile} holds no records`, { file: datasetFile });
  return result;
}

type Skip = (reason: string) => void;

async function importHotpot(r: Record<string, unknown>, writer: TreeWriter, refs: GoldRef[], skip: Skip): Promise<void> {
  const qid = String(r._id ?? r.id ?? '');
  const question = String(r.question ?? '');
  const folder = slug(qid, 40);
  const context = r.context as Array<[string, string[]]>;
  const byTitle = new Map<string, { file: string; text: string; spans: Array<[number, number]> }>();
  for (let i = 0; i < context.length; i++) {
    const [title, sentences] = context[i]!;
    const file = `${folder}/${String(i).padStart(2, '0')}-${slug(title)}.md`;
    const md = buildMarkdown(title, sentences);
    await writer.write(file, md.text);
    if (!byTitle.has(title)) byTitle.set(title, { file, ...md });
  }
  for (const [title, idx] of r.supporting_facts as Array<[string, number]>) {
    const para = byTitle.get(title);
    const span = para?.spans[idx];
    if (!para || !span || span[1] <= span[0]) {
      skip(`question ${qid}: supporting fact [${JSON.stringify(title)}, ${idx}] is not in its context`);
      continue;
    }
    refs.push({ question, questionId: qid, file: para.file, source: para.text, anchor: textAnchor(para.file, para.text, span[0], span[1]) });
  }
}

async function importMusique(r: Record<string, unknown>, writer: TreeWriter, refs: GoldRef[], _skip: Skip): Promise<void> {
  const qid = String(r.id ?? '');
  const question = String(r.question ?? '');
  const folder = slug(qid, 40);
  const paragraphs = r.paragraphs as Array<{ idx: number; title: string; paragraph_text: string; is_supporting?: boolean }>;
  for (const p of paragraphs) {
    const file = `${folder}/${String(p.idx).padStart(2, '0')}-${slug(p.title)}.md`;
    const md = buildMarkdown(p.title, [p.paragraph_text]);
    await writer.write(file, md.text);
    const span = md.spans[0]!;
    if (p.is_supporting) refs.push({ question, questionId: qid, file, source: md.text, anchor: textAnchor(file, md.text, span[0], span[1]) });
  }
}

function rowAnchor(file: string, csv: WrittenCsv, arrayRow: number): Anchor | undefined {
  const span = csv.rows[arrayRow];
  if (arrayRow < 1 || !span) return undefined; // row 0 is the header, which travels with every row
  return { ...textAnchor(file, csv.text, span[0], span[1]), row: arrayRow - 1 };
}

/** One TAT-QA context (table + paragraphs) with several questions; returns the number of questions. */
async function importTatqa(r: Record<string, unknown>, writer: TreeWriter, refs: GoldRef[], skip: Skip): Promise<number> {
  const tableRec = r.table as { uid?: string; table?: unknown[][] };
  const folder = slug(String(tableRec.uid ?? 'context'), 40);
  const csvFile = `${folder}/table.csv`;
  const csv = buildCsv(tableRec.table ?? []);
  await writer.write(csvFile, csv.text);
  const paras = new Map<string, { file: string; text: string; span: [number, number] }>();
  for (const p of r.paragraphs as Array<{ uid: string; order: number; text: string }>) {
    const file = `${folder}/paragraph-${String(p.order).padStart(2, '0')}.md`;
    const md = buildMarkdown(`Paragraph ${p.order}`, [p.text]);
    await writer.write(file, md.text);
    paras.set(String(p.order), { file, text: md.text, span: md.spans[0]! });
  }
  const questions = r.questions as Array<{ uid: string; question: string; mappings?: Array<Record<string, [number, number]>>; rel_paragraphs?: string[] }>;
  for (const q of questions) {
    const add = (file: string, source: string, anchor: Anchor) => refs.push({ question: q.question, questionId: q.uid, file, source, anchor });
    const seenRows = new Set<number>();
    if (q.mappings && q.mappings.length > 0) {
      for (const m of q.mappings) {
        for (const [key, value] of Object.entries(m)) {
          if (key === 'table') {
            const row = value[0];
            if (seenRows.has(row)) continue;
            seenRows.add(row);
            const anchor = rowAnchor(csvFile, csv, row);
            if (anchor) add(csvFile, csv.text, anchor);
            else skip(`question ${q.uid}: table cell [${value.join(', ')}] is not a data row`);
          } else if (key.startsWith('paragraph_')) {
            const p = paras.get(key.slice('paragraph_'.length));
            // Offsets index the paragraph's own text; the file has a heading before it.
            const start = p ? p.span[0] + value[0] : -1;
            const end = p ? p.span[0] + value[1] : -1;
            if (!p || value[1] <= value[0] || end > p.span[1]) skip(`question ${q.uid}: ${key} [${value.join(', ')}] is outside the paragraph`);
            else add(p.file, p.text, textAnchor(p.file, p.text, start, end));
          }
        }
      }
    } else {
      for (const order of q.rel_paragraphs ?? []) {
        const p = paras.get(String(order));
        if (p) add(p.file, p.text, textAnchor(p.file, p.text, p.span[0], p.span[1]));
        else skip(`question ${q.uid}: rel_paragraph ${order} is not in the context`);
      }
    }
  }
  return questions.length;
}

async function importFetaqa(r: Record<string, unknown>, writer: TreeWriter, refs: GoldRef[], skip: Skip): Promise<void> {
  const qid = String(r.feta_id ?? '');
  const folder = `feta-${slug(qid, 40)}`;
  const file = `${folder}/${slug(`${String(r.table_page_title ?? '')} ${String(r.table_section_title ?? '')}`)}.csv`;
  const csv = buildCsv(r.table_array as unknown[][]);
  await writer.write(file, csv.text);
  const seen = new Set<number>();
  for (const [row, col] of r.highlighted_cell_ids as Array<[number, number]>) {
    if (seen.has(row)) continue;
    seen.add(row);
    const anchor = rowAnchor(file, csv, row);
    if (anchor) refs.push({ question: String(r.question ?? ''), questionId: qid, file, source: csv.text, anchor });
    else if (row !== 0) skip(`question ${qid}: cell [${row}, ${col}] is not in the table`);
  }
}

async function importFinanceBench(r: Record<string, unknown>, datasetDir: string, writer: TreeWriter, refs: GoldRef[], skip: Skip): Promise<void> {
  const qid = String(r.financebench_id ?? '');
  const pdfRel = String(r.pdf_file).split(/[\\/]/).join('/');
  const src = path.resolve(datasetDir, pdfRel);
  const dest = path.join(writer.outDir, ...pdfRel.split('/'));
  if (!writer.files.includes(pdfRel)) {
    try {
      await fs.mkdir(path.dirname(dest), { recursive: true });
      const have = await fs.stat(dest).catch(() => undefined);
      const want = await fs.stat(src);
      if (!have || have.size !== want.size) await fs.copyFile(src, dest);
      writer.files.push(pdfRel);
    } catch (err) {
      skip(`question ${qid}: cannot copy ${src}: ${(err as Error).message}`);
      return;
    }
  }
  for (const e of r.evidence as Array<{ evidence_text?: string; evidence_page_num?: number }>) {
    if (typeof e.evidence_page_num !== 'number') {
      skip(`question ${qid}: evidence without a page number`);
      continue;
    }
    refs.push({ question: String(r.question ?? ''), questionId: qid, file: pdfRel, source: e.evidence_text ?? '', anchor: { file: pdfRel, page: e.evidence_page_num } });
  }
}
