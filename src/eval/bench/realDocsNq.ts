/**
 * Natural Questions (NQ-open) in the real-document benchmark: every passage of the development
 * half written as one Markdown file (a `#` title heading, the passage text), in a corpus of its
 * own, and its questions asked over all of them, as a user with a folder of Wikipedia extracts
 * would ask them (lower case, no question mark: the search-engine questions as they are).
 *
 * The passages file is found beside the questions by its shape (`{_id, title, text}` lines that
 * hold every gold passage), never by its name. Which questions are asked is a seeded sample when
 * fewer than all are wanted; the CLI processes ask a seeded sample of those.
 */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { seededRandom } from '../../core/random';
import { detectSchema } from '../datasets/detect';
import { Fields, readJsonLines } from '../datasets/jsonl';
import { shuffled, type RealDocsQuestion } from './realDocsCorpus';
import { answerHasGoldString } from './realDocsScore';

/** One passage as written into the corpus. */
export interface NqPassage {
  id: string;
  title: string;
  /** Corpus-relative path of its Markdown file. */
  file: string;
  /** The file's whole text: `# Title`, a blank line, the passage. */
  markdown: string;
  /** Where the passage body lies in `markdown` (UTF-16, end exclusive) and its 1-based line. */
  charStart: number;
  charEnd: number;
  line: number;
}

export interface NqSelection {
  queries: string;
  passagesFile: string;
  passages: NqPassage[];
  /** The questions asked (all, or a seeded sample), in the file's order. */
  questions: RealDocsQuestion[];
  /** Ids of the questions also asked through a `canopy ask` process (a seeded sample of `questions`). */
  cliIds: string[];
  /** Questions in the file. */
  available: number;
  notes: string[];
}

/** A passage's Markdown: the title as a `#` heading, a blank line, the text on one line. */
export function passageMarkdown(title: string, text: string): Pick<NqPassage, 'markdown' | 'charStart' | 'charEnd' | 'line'> {
  const head = `# ${title.replace(/\s+/g, ' ').trim()}\n\n`;
  const body = text.replace(/\s*\r?\n\s*/g, ' ').trim();
  return { markdown: `${head}${body}\n`, charStart: head.length, charEnd: head.length + body.length, line: 3 };
}

/** A file name for a passage title (letters, digits, '-', '_' only). */
export function passageFileName(title: string): string {
  const base = title.replace(/[^A-Za-z0-9-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 120);
  return base === '' ? 'passage' : base;
}

/** Whether a JSONL file's first record is a passage (`_id`, `title`, `text`) and not a question. */
function isPassagesFile(path: string): boolean {
  const first = readJsonLines(path)[0]?.value;
  if (typeof first !== 'object' || first === null || Array.isArray(first)) return false;
  const d = detectSchema(first);
  return 'error' in d && ['_id', 'title', 'text'].every((k) => k in first);
}

/**
 * The passages file of an NQ questions file: the one JSONL file beside it, in passage shape,
 * holding every question's gold passage. An error names the questions file and says why.
 */
export function findNqPassages(queries: string, goldIds: ReadonlySet<string>): string {
  const dir = dirname(queries);
  const candidates = readdirSync(dir)
    .sort()
    .map((n) => join(dir, n))
    .filter((p) => p !== queries && p.endsWith('.jsonl') && statSync(p).isFile() && isPassagesFile(p));
  if (candidates.length === 0) throw new Error(`${queries}: no passages file beside it (a .jsonl file of {_id, title, text} lines in ${dir})`);
  const holding = candidates.filter((p) => {
    const ids = new Set(readJsonLines(p).map(({ value }) => (value as { _id?: unknown })._id).map(String));
    return [...goldIds].every((g) => ids.has(g));
  });
  if (holding.length === 0) throw new Error(`${queries}: no passages file beside it holds every gold_passage_id (looked in ${candidates.join(', ')})`);
  return holding[0]!;
}

/** A seeded sample of `n` of `xs`, kept in their original order (all of them when n ≥ their number). */
export function seededSubset<T>(xs: readonly T[], n: number, seed: number): T[] {
  if (n >= xs.length) return [...xs];
  const picked = new Set(shuffled(xs.map((_, i) => i), seededRandom(seed)).slice(0, n));
  return xs.filter((_, i) => picked.has(i));
}

export interface NqOptions {
  /** Questions asked (warm); undefined: all. */
  questions?: number;
  /** Of those, asked through the CLI process too. */
  cliQuestions: number;
  seed: number;
}

/** Reads the questions and their passages and picks what is asked; writes nothing. */
export function readNqSource(queries: string, o: NqOptions): NqSelection {
  const lines = readJsonLines(queries);
  if (lines.length === 0) throw new Error(`${queries}: no questions`);
  const raw = lines.map(({ line, value }) => {
    const f = Fields.of(value, queries, line);
    const answers = [...new Set(f.strings('answers'))];
    if (answers.length === 0) f.fail('field "answers" is empty: an NQ question needs at least one answer string');
    return { id: f.id('_id'), question: f.string('text'), answers, gold: f.id('gold_passage_id') };
  });
  const passagesFile = findNqPassages(queries, new Set(raw.map((q) => q.gold)));
  const used = new Set<string>();
  const passages: NqPassage[] = [];
  const byId = new Map<string, NqPassage>();
  for (const { line, value } of readJsonLines(passagesFile)) {
    const f = Fields.of(value, passagesFile, line);
    const id = f.id('_id');
    if (byId.has(id)) f.fail(`passage id "${id}" occurs twice`);
    const title = f.string('title');
    const base = passageFileName(title);
    let file = `nq/${base}.md`;
    for (let k = 2; used.has(file.toLowerCase()); k++) file = `nq/${base}-${k}.md`;
    used.add(file.toLowerCase());
    const p: NqPassage = { id, title, file, ...passageMarkdown(title, f.string('text')) };
    passages.push(p);
    byId.set(id, p);
  }
  const all: RealDocsQuestion[] = raw.map((q) => {
    const p = byId.get(q.gold)!;
    return {
      id: q.id,
      source: 'nq',
      question: q.question,
      answers: q.answers,
      gold: { kind: 'paragraph', file: p.file, paraIdx: 0, charStart: p.charStart, charEnd: p.charEnd, startLine: p.line, endLine: p.line },
      goldHoldsAnswer: answerHasGoldString(q.answers, p.markdown),
    };
  });
  const questions = o.questions === undefined ? all : seededSubset(all, o.questions, o.seed);
  const cliIds = seededSubset(questions, o.cliQuestions, o.seed).map((q) => q.id);
  const notes: string[] = [];
  if (o.questions !== undefined && o.questions > all.length) notes.push(`only ${all.length} NQ questions in ${queries}`);
  return { queries, passagesFile, passages, questions, cliIds, available: all.length, notes };
}

/** Writes every passage under `root` (emptied first). */
export function writeNqCorpus(root: string, sel: NqSelection): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, 'nq'), { recursive: true });
  for (const p of sel.passages) writeFileSync(join(root, p.file), p.markdown);
}
