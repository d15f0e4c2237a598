/**
 * Canopy's own gold-span annotations (design §10): JSONL, one marked span per line,
 *
 *   {"version": 1, "question": "…", "file": "docs/plots.md",
 *    "anchors": [{"charStart": 120, "charEnd": 188}], "text": "…", "answer": "…"?, "id": "…"?}
 *
 * `file` is workspace-relative (forward slashes); each anchor uses the fields of the region model
 * (`charStart`/`charEnd` for text formats, `page` (+ `bbox`) for PDF, `row` for tables) and may
 * omit `file` (it is the line's `file`). `text` is the marked text as the user saw it. Several
 * lines with the same question and file are one question with several gold spans. This module is
 * the only reader and writer of the format: the annotation issue extends it here, bumping
 * `ANNOTATION_FORMAT_VERSION` and reading older versions.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { CanopyError, ErrorCodes } from '../core/errors';
import type { Anchor } from '../contracts/region';
import { EvalDataError, Fields, readJsonLines } from './datasets/jsonl';
import type { EvalQuestion } from './datasets/types';

export const ANNOTATION_FORMAT_VERSION = 1;

export interface GoldAnnotation {
  version: typeof ANNOTATION_FORMAT_VERSION;
  id?: string;
  question: string;
  file: string;
  anchors: Anchor[];
  text: string;
  answer?: string;
}

/** True when a JSON value looks like an annotation line (used by schema detection). */
export function looksLikeAnnotation(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as Record<string, unknown>;
  return 'version' in o && 'question' in o && 'file' in o && 'anchors' in o;
}

const numericAnchorFields = ['charStart', 'charEnd', 'startLine', 'startColumn', 'endLine', 'endColumn', 'page', 'pageEnd', 'row', 'timeStart', 'timeEnd'] as const;

function parseAnchor(v: unknown, i: number, file: string, f: Fields): Anchor {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) f.fail(`"anchors"[${i}] must be an object`);
  const o = v as Record<string, unknown>;
  const a: Anchor = { file: typeof o.file === 'string' ? o.file : file };
  for (const k of numericAnchorFields) {
    if (o[k] === undefined) continue;
    if (typeof o[k] !== 'number' || !Number.isFinite(o[k]) || (o[k] as number) < 0) f.fail(`"anchors"[${i}].${k} must be a non-negative number`);
    a[k] = o[k] as number;
  }
  if (o.bbox !== undefined) {
    if (!Array.isArray(o.bbox) || o.bbox.length !== 4 || !o.bbox.every((x) => typeof x === 'number')) f.fail(`"anchors"[${i}].bbox must be [x0, y0, x1, y1]`);
    a.bbox = o.bbox as [number, number, number, number];
  }
  const hasChars = a.charStart !== undefined && a.charEnd !== undefined;
  if ((a.charStart === undefined) !== (a.charEnd === undefined)) f.fail(`"anchors"[${i}] needs both charStart and charEnd`);
  if (hasChars && a.charEnd! < a.charStart!) f.fail(`"anchors"[${i}] has charEnd before charStart`);
  if (!hasChars && a.page === undefined && a.row === undefined && a.timeStart === undefined) {
    f.fail(`"anchors"[${i}] locates nothing: give charStart/charEnd, page, row or timeStart/timeEnd`);
  }
  return a;
}

/** Validates one parsed line; errors name the file and line. */
export function parseAnnotation(value: unknown, path: string, line: number): GoldAnnotation {
  const f = Fields.of(value, path, line);
  const version = f.number('version');
  if (version !== ANNOTATION_FORMAT_VERSION) {
    f.fail(`annotation format version ${version} is not supported (this Canopy reads version ${ANNOTATION_FORMAT_VERSION})`);
  }
  const file = f.string('file').replace(/\\/g, '/');
  if (file === '' || isAbsolute(file) || file.split('/').includes('..')) f.fail(`"file" must be a workspace-relative path, not "${file}"`);
  const anchors = f.array('anchors').map((a, i) => parseAnchor(a, i, file, f));
  if (anchors.length === 0) f.fail('"anchors" is empty: an annotation marks at least one region');
  const out: GoldAnnotation = { version: ANNOTATION_FORMAT_VERSION, question: f.string('question'), file, anchors, text: f.string('text') };
  const id = f.has('id') ? f.id('id') : undefined;
  if (id !== undefined) out.id = id;
  const answer = f.optString('answer');
  if (answer !== undefined) out.answer = answer;
  return out;
}

export function readAnnotations(path: string, text?: string): GoldAnnotation[] {
  return readJsonLines(path, text).map(({ line, value }) => parseAnnotation(value, path, line));
}

/** One JSONL line for an annotation (the writer the annotation UI uses). */
export function formatAnnotation(a: Omit<GoldAnnotation, 'version'>): string {
  const anchors = a.anchors.map((x) => {
    const { file, ...rest } = x;
    return file === a.file ? rest : x;
  });
  return JSON.stringify({ version: ANNOTATION_FORMAT_VERSION, ...(a.id ? { id: a.id } : {}), question: a.question, file: a.file, anchors, text: a.text, ...(a.answer ? { answer: a.answer } : {}) });
}

/**
 * The workspace folder annotations are relative to: `root` when given, else the first of the
 * annotation file's folder and its parents in which the first annotated file exists.
 */
export function annotationRoot(path: string, annotations: GoldAnnotation[], root?: string): string {
  if (root) return resolve(root);
  const first = annotations[0];
  let dir = dirname(resolve(path));
  if (!first) return dir;
  for (;;) {
    if (existsSync(join(dir, first.file))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new CanopyError(ErrorCodes.notFound, `${path}: cannot find "${first.file}" in the annotation file's folder or above it; pass --root <workspace>`, { file: path });
    dir = up;
  }
}

/** Annotations → questions: lines with the same question and file are one question. */
export function annotationQuestions(path: string, lines: Array<{ line: number; value: unknown }>, root: string | undefined): { questions: EvalQuestion[]; root: string } {
  const annotations = lines.map(({ line, value }) => ({ line, a: parseAnnotation(value, path, line) }));
  const ws = annotationRoot(
    path,
    annotations.map((x) => x.a),
    root,
  );
  const byKey = new Map<string, EvalQuestion>();
  for (const { line, a } of annotations) {
    const abs = join(ws, a.file);
    if (!existsSync(abs)) throw new EvalDataError(path, line, `annotated file "${a.file}" does not exist under ${ws}`);
    const key = `${a.question}\0${a.file}`;
    let q = byKey.get(key);
    if (!q) {
      q = {
        id: a.id ?? `${path.split(/[\\/]/).pop()}:${line}`,
        line,
        question: a.question,
        answers: [],
        context: [{ kind: 'file', key: 'f', path: abs, relPath: a.file }],
        gold: [],
        goldDocs: new Map([[a.file, 1]]),
      };
      byKey.set(key, q);
    }
    q.gold.push({ granularity: 'anchor', source: 'f', anchors: a.anchors });
    if (a.answer && !q.answers.includes(a.answer)) q.answers.push(a.answer);
  }
  return { questions: [...byKey.values()], root: ws };
}
