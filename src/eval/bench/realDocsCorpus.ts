/**
 * The corpus and questions of the real-document benchmark (issue 16), chosen from development
 * data by stated, seeded rules and written to a work folder outside the repository:
 *
 *  - FinanceBench: questions are grouped by the PDF they need; the groups are put in a seeded
 *    random order and then stably sorted by size (most questions first), and the first N
 *    questions of that sequence are taken. The corpus holds every PDF a taken question needs —
 *    so a few filings carry all the questions, as a user's folder of filings would.
 *  - SQuAD: a seeded sample of articles, each written as one Markdown file (the title as a `#`
 *    heading, paragraphs separated by blank lines); the questions are a seeded sample of the
 *    questions on those articles. The character range of every paragraph in the written file is
 *    kept: a question's gold paragraph is `para_idx` of its article.
 *  - The project's own Markdown documentation (distractors the user has in the folder too).
 *
 * Input files are found by their shape under the data folder (detectSchema), never by name.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { seededRandom } from '../../core/random';
import { detectSchema } from '../datasets/detect';
import { Fields, readJsonLines } from '../datasets/jsonl';
import { readSquadArticles, squadArticlesPath, squadTitle } from '../datasets/squad';
import { isFolderQuestion } from './realDocsFolder';

/** Where a question's gold evidence lies in the written corpus. */
export type RealDocsGold =
  /** A SQuAD paragraph: its character range (UTF-16, end exclusive) and 1-based lines in the Markdown file. */
  | { kind: 'paragraph'; file: string; paraIdx: number; charStart: number; charEnd: number; startLine: number; endLine: number }
  /** FinanceBench evidence pages, 0-based as in the data and in Canopy's anchors. */
  | { kind: 'pages'; file: string; pages: number[] }
  /** A documentation-folder question: the file that holds the answer, anywhere in it. */
  | { kind: 'file'; file: string };

/** Where a question comes from: the main sample (SQuAD, FinanceBench), NQ's passages, or a documentation folder. */
export type RealDocsSource = 'squad' | 'financebench' | 'nq' | 'docs';

export interface RealDocsQuestion {
  id: string;
  source: RealDocsSource;
  question: string;
  /** SQuAD, NQ, documentation folder: every accepted answer string; FinanceBench: the reference answer. */
  answers: string[];
  gold: RealDocsGold;
  /** Whether the gold (NQ passage, documentation file) holds an answer string by the printed answer's rule; unset for the main sample. */
  goldHoldsAnswer?: boolean;
}

export interface RealDocsSelection {
  questions: RealDocsQuestion[];
  /** Corpus-relative path → where it comes from (copied PDF, written article, copied doc). */
  files: Array<{ path: string; from: string; kind: 'pdf' | 'squad-article' | 'doc' }>;
  inputs: { financebench?: string; squad?: string; articles?: string; docs?: string };
  notes: string[];
}

export interface RealDocsSampling {
  seed: number;
  squadArticles: number;
  squadQuestions: number;
  financebenchQuestions: number;
}

export const defaultSampling: RealDocsSampling = { seed: 16, squadArticles: 30, squadQuestions: 15, financebenchQuestions: 10 };

/** A seeded Fisher–Yates shuffle (a copy). */
export function shuffled<T>(xs: readonly T[], rand: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** The question files the benchmark can ask, found under a data folder by their fields. */
export interface RealDocsInputs {
  financebench?: string;
  squad?: string;
  /** NQ-open questions (their passages lie beside them). */
  nq?: string;
  /** A documentation folder's questions (`{question, answers, file}`; the folder lies beside them). */
  docsFolder?: string;
  notes: string[];
}

const INPUT_FLAGS = { financebench: '--financebench', squad: '--squad', nq: '--nq', docsFolder: '--docs-folder' } as const;

/** The FinanceBench, SQuAD, NQ and documentation-folder question files under `data` (two folder levels deep), by schema. */
export function findRealDocsInputs(data: string): RealDocsInputs {
  const found: Record<keyof typeof INPUT_FLAGS, string[]> = { financebench: [], squad: [], nq: [], docsFolder: [] };
  const walk = (dir: string, depth: number) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (depth < 2) walk(p, depth + 1);
      } else if (name.endsWith('.jsonl')) {
        const first = readJsonLines(p)[0];
        if (!first) continue;
        const d = detectSchema(first.value);
        if ('schema' in d && (d.schema === 'financebench' || d.schema === 'squad' || d.schema === 'nq')) found[d.schema].push(p);
        else if (isFolderQuestion(first.value)) found.docsFolder.push(p);
      }
    }
  };
  walk(data, 0);
  const notes: string[] = [];
  const out: RealDocsInputs = { notes };
  for (const k of Object.keys(INPUT_FLAGS) as Array<keyof typeof INPUT_FLAGS>) {
    if (found[k].length > 1) notes.push(`${found[k].length} ${k} question files under ${data}; using ${found[k][0]} (pass ${INPUT_FLAGS[k]} to choose)`);
    if (found[k][0]) out[k] = found[k][0];
  }
  return out;
}

interface FinancebenchPick {
  questions: RealDocsQuestion[];
  pdfs: Array<{ abs: string; rel: string }>;
}

/** FinanceBench questions grouped by PDF, largest groups first (ties in seeded order); the first `n`. */
export function pickFinancebench(file: string, n: number, seed: number): FinancebenchPick {
  const base = dirname(file);
  const groups = new Map<string, RealDocsQuestion[]>();
  const pdfOf = new Map<string, string>();
  for (const { line, value } of readJsonLines(file)) {
    const f = Fields.of(value, file, line);
    const pdfFile = f.string('pdf_file');
    const abs = resolve(base, pdfFile);
    if (!existsSync(abs)) f.fail(`pdf_file "${pdfFile}" does not exist (resolved to ${abs})`);
    const pages: number[] = [];
    for (const e of f.objects('evidence')) {
      if (!e.has('evidence_page_num')) continue;
      const page = e.number('evidence_page_num');
      if (!Number.isInteger(page) || page < 0) e.fail('evidence_page_num must be a 0-based page number');
      if (!pages.includes(page)) pages.push(page);
    }
    if (pages.length === 0) continue; // no gold page: cannot be scored
    const answer = f.optString('answer');
    const rel = `financebench/${basename(abs)}`;
    pdfOf.set(rel, abs);
    const q: RealDocsQuestion = {
      id: f.id('financebench_id'),
      source: 'financebench',
      question: f.string('question'),
      answers: answer ? [answer] : [],
      gold: { kind: 'pages', file: rel, pages: pages.sort((a, b) => a - b) },
    };
    groups.set(rel, [...(groups.get(rel) ?? []), q]);
  }
  const order = shuffled([...groups.keys()], seededRandom(seed)).sort((a, b) => groups.get(b)!.length - groups.get(a)!.length);
  const questions = order.flatMap((k) => groups.get(k)!).slice(0, n);
  const needed = [...new Set(questions.map((q) => q.gold.file))];
  return { questions, pdfs: needed.map((rel) => ({ abs: pdfOf.get(rel)!, rel })) };
}

/** A file name for an article title (letters, digits, '-', '_' only). */
export function articleFileName(title: string): string {
  return `${title.replace(/[^A-Za-z0-9-]+/g, '_').replace(/^_+|_+$/g, '') || 'article'}.md`;
}

export interface WrittenArticle {
  text: string;
  /** Per paragraph: char range and 1-based lines in `text`. */
  paragraphs: Array<{ charStart: number; charEnd: number; startLine: number; endLine: number }>;
}

/** One article as Markdown: `# Title`, then the paragraphs (line breaks inside one made spaces), blank lines between. */
export function articleMarkdown(title: string, paragraphs: readonly string[]): WrittenArticle {
  let text = `# ${squadTitle(title)}\n`;
  let line = 1;
  const out: WrittenArticle['paragraphs'] = [];
  for (const p of paragraphs) {
    const body = p.replace(/\s*\r?\n\s*/g, ' ').trim();
    text += '\n';
    line += 1;
    out.push({ charStart: text.length, charEnd: text.length + body.length, startLine: line + 1, endLine: line + 1 });
    text += `${body}\n`;
    line += 1;
  }
  return { text, paragraphs: out };
}

interface SquadPick {
  questions: RealDocsQuestion[];
  articles: Array<{ rel: string; title: string; written: WrittenArticle }>;
}

/** A seeded sample of `articleCount` articles and `questionCount` of their questions. */
export function pickSquad(questionsFile: string, articlesFile: string, articleCount: number, questionCount: number, seed: number): SquadPick {
  const articles = readSquadArticles(articlesFile);
  const rand = seededRandom(seed);
  const titles = shuffled([...articles.keys()], rand).slice(0, articleCount);
  const chosen = new Set(titles);
  const written = new Map<string, { rel: string; written: WrittenArticle }>();
  const used = new Set<string>();
  for (const t of titles) {
    let rel = `squad/${articleFileName(t)}`;
    for (let k = 2; used.has(rel); k++) rel = `squad/${articleFileName(t).replace(/\.md$/, `-${k}.md`)}`;
    used.add(rel);
    written.set(t, { rel, written: articleMarkdown(t, articles.get(t)!) });
  }
  const candidates: RealDocsQuestion[] = [];
  for (const { line, value } of readJsonLines(questionsFile)) {
    const f = Fields.of(value, questionsFile, line);
    const title = f.string('title');
    if (!chosen.has(title)) continue;
    const paraIdx = f.number('para_idx');
    const w = written.get(title)!;
    const para = w.written.paragraphs[paraIdx];
    if (!para) return f.fail(`para_idx ${paraIdx} is out of range: article "${title}" has ${w.written.paragraphs.length} paragraphs`);
    const answers = [...new Set(f.object('answers').strings('text'))];
    if (answers.length === 0) continue;
    candidates.push({ id: f.id('id'), source: 'squad', question: f.string('question'), answers, gold: { kind: 'paragraph', file: w.rel, paraIdx, ...para } });
  }
  return { questions: shuffled(candidates, rand).slice(0, questionCount), articles: titles.map((t) => ({ title: t, ...written.get(t)! })) };
}

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...markdownFiles(p));
    else if (name.toLowerCase().endsWith('.md')) out.push(p);
  }
  return out;
}

export interface BuildCorpusOptions {
  financebench?: string;
  squad?: string;
  /** The project's documentation folder (its Markdown files are copied), or undefined for none. */
  docs?: string;
  sampling: RealDocsSampling;
}

/** Writes the corpus under `root` (emptied first) and returns what it holds and the questions. */
export function buildRealDocsCorpus(root: string, o: BuildCorpusOptions): RealDocsSelection {
  const notes: string[] = [];
  const inputs: RealDocsSelection['inputs'] = {};
  const files: RealDocsSelection['files'] = [];
  const questions: RealDocsQuestion[] = [];
  const writes: Array<() => void> = [];
  if (o.squad && o.sampling.squadQuestions > 0) {
    const articles = squadArticlesPath(dirname(o.squad));
    if (!articles) throw new Error(`no SQuAD articles file beside ${o.squad} (the questions name their paragraphs by article title and index into it)`);
    const pick = pickSquad(o.squad, articles, o.sampling.squadArticles, o.sampling.squadQuestions, o.sampling.seed);
    inputs.squad = o.squad;
    inputs.articles = articles;
    questions.push(...pick.questions);
    if (pick.questions.length < o.sampling.squadQuestions) notes.push(`only ${pick.questions.length} SQuAD questions on the ${pick.articles.length} sampled articles`);
    for (const a of pick.articles) {
      files.push({ path: a.rel, from: `${articles} (article "${a.title}")`, kind: 'squad-article' });
      writes.push(() => writeFileSync(join(root, a.rel), a.written.text));
    }
  }
  if (o.financebench && o.sampling.financebenchQuestions > 0) {
    const pick = pickFinancebench(o.financebench, o.sampling.financebenchQuestions, o.sampling.seed);
    inputs.financebench = o.financebench;
    questions.push(...pick.questions);
    if (pick.questions.length < o.sampling.financebenchQuestions) notes.push(`only ${pick.questions.length} FinanceBench questions with a gold page`);
    for (const p of pick.pdfs) {
      files.push({ path: p.rel, from: p.abs, kind: 'pdf' });
      writes.push(() => copyFileSync(p.abs, join(root, p.rel)));
    }
  }
  if (o.docs) {
    inputs.docs = o.docs;
    for (const f of markdownFiles(o.docs)) {
      const rel = `canopy-docs/${relative(o.docs, f).split(/[\\/]/).join('/')}`;
      files.push({ path: rel, from: f, kind: 'doc' });
      writes.push(() => copyFileSync(f, join(root, rel)));
    }
  }
  if (questions.length === 0) throw new Error('no questions: give FinanceBench and/or SQuAD question files (or a data folder holding them)');
  rmSync(root, { recursive: true, force: true });
  for (const f of files) mkdirSync(dirname(join(root, f.path)), { recursive: true });
  for (const w of writes) w();
  return { questions, files, inputs, notes };
}
