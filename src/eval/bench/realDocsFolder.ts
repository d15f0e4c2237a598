/**
 * A documentation folder in the real-document benchmark: a developer's folder of software docs
 * (commands, flags, identifiers) copied as it is — every file of a format Canopy reads, in its own
 * sub-folders — into a corpus of its own, and the questions a user of those projects asks,
 * `{question, answers, file}` lines: any answer string in the printed answer answers it, and
 * `file` (relative to the folder) is the file that holds the answer.
 *
 * The questions file is recognised by that shape; the folder is the one beside it (or the
 * questions file's own folder) in which every question's `file` exists — no name is assumed.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, relative } from 'node:path';
import { formatForPath } from '../../core/ingest/documentFormat';
import { detectSchema } from '../datasets/detect';
import { Fields, readJsonLines } from '../datasets/jsonl';
import type { RealDocsQuestion } from './realDocsCorpus';
import { answerHasGoldString } from './realDocsScore';

/** Whether a record is a documentation-folder question: `question`, `answers` (strings) and `file`, and no other dataset's schema. */
export function isFolderQuestion(first: unknown): boolean {
  if (typeof first !== 'object' || first === null || Array.isArray(first)) return false;
  const o = first as Record<string, unknown>;
  if (!('error' in detectSchema(o))) return false;
  return typeof o.question === 'string' && Array.isArray(o.answers) && typeof o.file === 'string';
}

export interface FolderSelection {
  questionsFile: string;
  folder: string;
  questions: RealDocsQuestion[];
  /** Corpus-relative path → source file. */
  files: Array<{ path: string; from: string }>;
  notes: string[];
}

/** Files under `dir` (sorted, recursive) whose format Canopy reads; hidden entries are skipped as the indexer does. */
function readableFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...readableFiles(p));
    else if (formatForPath(name) !== undefined) out.push(p);
  }
  return out;
}

/** A question's `file` as a safe relative path with forward slashes (no absolute paths, no `..`). */
function relFile(f: Fields): string {
  const raw = f.string('file');
  const n = normalize(raw).split(/[\\/]/).join('/');
  if (raw.trim() === '' || isAbsolute(raw) || n === '..' || n.startsWith('../')) f.fail(`field "file" must be a path inside the documentation folder (got "${raw}")`);
  return n.replace(/^\.\//, '');
}

/**
 * The documentation folder of a questions file: its own folder or a sub-folder of it in which
 * every question's file exists (the first such, in name order). An error names the questions file.
 */
export function findDocsFolder(questionsFile: string, files: readonly string[]): string {
  const dir = dirname(questionsFile);
  const subs = readdirSync(dir)
    .sort()
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).isDirectory());
  const found = [...subs, dir].find((d) => files.every((f) => existsSync(join(d, f)) && statSync(join(d, f)).isFile()));
  if (!found) throw new Error(`${questionsFile}: no folder beside it holds every question's "file" (looked in ${[...subs, dir].join(', ')})`);
  return found;
}

/** Reads the questions and finds the folder (given, or beside the questions); writes nothing. */
export function readFolderSource(questionsFile: string, folder?: string): FolderSelection {
  const lines = readJsonLines(questionsFile);
  if (lines.length === 0) throw new Error(`${questionsFile}: no questions`);
  const raw = lines.map(({ line, value }) => {
    const f = Fields.of(value, questionsFile, line);
    const answers = [...new Set(f.strings('answers'))];
    if (answers.length === 0) f.fail('field "answers" is empty: a question needs at least one answer string');
    return { line, f, question: f.string('question'), answers, file: relFile(f) };
  });
  const root = folder ?? findDocsFolder(questionsFile, raw.map((q) => q.file));
  // Copied as it is: the corpus's relative paths are the folder's.
  const files = readableFiles(root).map((abs) => ({ path: relative(root, abs).split(/[\\/]/).join('/'), from: abs }));
  const copied = new Map(files.map((x) => [x.path, x.from]));
  const questions = raw.map((q): RealDocsQuestion => {
    const from = copied.get(q.file);
    if (from === undefined) return q.f.fail(`file "${q.file}" is not a file Canopy reads in ${root}`);
    const goldHoldsAnswer = answerHasGoldString(q.answers, readFileSync(from, 'utf8'));
    return { id: `line${q.line}`, source: 'docs', question: q.question, answers: q.answers, gold: { kind: 'file', file: q.file }, goldHoldsAnswer };
  });
  return { questionsFile, folder: root, questions, files, notes: [] };
}

/** Copies the folder's readable files under `root` (emptied first). */
export function writeFolderCorpus(root: string, sel: FolderSelection): void {
  rmSync(root, { recursive: true, force: true });
  for (const f of sel.files) {
    mkdirSync(dirname(join(root, f.path)), { recursive: true });
    copyFileSync(f.from, join(root, f.path));
  }
}
