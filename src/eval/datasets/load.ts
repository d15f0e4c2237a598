/**
 * Loads any evaluation file: detects its schema from the first record, reads every line with
 * that schema's reader (errors name the file and line), and finds the open pool beside it.
 * Nothing here knows a file name of the development splits; pools are found by the shapes the
 * data README describes (`pool-*.jsonl`, `corpus*.jsonl`, `articles.jsonl`, `qrels/*.tsv`).
 */
import { dirname, resolve } from 'node:path';
import { annotationQuestions } from '../annotations';
import { detectSchema } from './detect';
import { readFetaqa } from './fetaqa';
import { readFinancebench } from './financebench';
import { readHotpotLike } from './hotpot';
import { EvalDataError, readJsonLines } from './jsonl';
import { readMusique } from './musique';
import { nqCorpusPath, readNq } from './nq';
import { filesMatching, readPoolDocs } from './pool';
import { readScifact, scifactCorpusFiles, scifactQrels } from './scifact';
import { readSquad, readSquadArticles, squadArticlesPath, squadPool } from './squad';
import { readTatqa } from './tatqa';
import type { Dataset, PoolDoc } from './types';

export interface LoadOptions {
  /** Annotation files: the workspace folder their paths are relative to. */
  root?: string;
}

export function loadDataset(file: string, options: LoadOptions = {}): Dataset {
  const path = resolve(file);
  const lines = readJsonLines(path);
  if (lines.length === 0) throw new EvalDataError(path, 1, 'the file holds no records');
  const detected = detectSchema(lines[0]!.value);
  if ('error' in detected) throw new EvalDataError(path, lines[0]!.line, detected.error);
  const dir = dirname(path);
  const notes: string[] = [];
  const poolFiles = filesMatching(dir, /^pool.*\.jsonl$/);
  const docsPool = (files: string[], read: () => PoolDoc[]): Dataset['pool'] => (files.length > 0 ? { kind: 'docs', files, read } : undefined);
  switch (detected.schema) {
    case 'hotpotqa':
    case '2wikimultihopqa':
    case 'musique': {
      const questions = detected.schema === 'musique' ? readMusique(lines, path) : readHotpotLike(lines, path, notes);
      const pool = docsPool(poolFiles, () => readPoolDocs(poolFiles));
      return { schema: detected.schema, file: path, questions, ...(pool ? { pool } : { noPoolReason: `no pool-*.jsonl beside ${path}` }), notes };
    }
    case 'squad': {
      const articles = squadArticlesPath(dir);
      if (!articles) throw new EvalDataError(path, lines[0]!.line, `SQuAD questions need articles.jsonl beside them (in ${dir})`);
      const questions = readSquad(lines, path, readSquadArticles(articles), articles, notes);
      return { schema: 'squad', file: path, questions, pool: { kind: 'docs', files: [articles], read: () => squadPool(articles) }, notes };
    }
    case 'nq': {
      const corpusPath = nqCorpusPath(dir);
      if (!corpusPath) throw new EvalDataError(path, lines[0]!.line, `NQ-open queries need corpus.jsonl beside them (in ${dir})`);
      const corpus = readPoolDocs([corpusPath]);
      const questions = readNq(lines, path, new Map(corpus.map((d) => [d.id, d])), corpusPath);
      return { schema: 'nq', file: path, questions, pool: { kind: 'docs', files: [corpusPath], read: () => corpus }, notes };
    }
    case 'scifact': {
      const corpusFiles = scifactCorpusFiles(dir);
      if (corpusFiles.length === 0) throw new EvalDataError(path, lines[0]!.line, `SciFact queries need corpus*.jsonl beside them (in ${dir})`);
      const corpus = readPoolDocs(corpusFiles);
      const { files, qrels } = scifactQrels(dir);
      if (files.length > 0) notes.push(`relevance from ${files.map((f) => f.slice(dir.length + 1)).join(', ')}`);
      const questions = readScifact(lines, path, new Map(corpus.map((d) => [d.id, d])), qrels, notes);
      return { schema: 'scifact', file: path, questions, pool: { kind: 'docs', files: corpusFiles, read: () => corpus }, notes };
    }
    case 'tatqa':
      return { schema: 'tatqa', file: path, questions: readTatqa(lines, path), noPoolReason: 'TAT-QA has no open pool: each question comes with its own table and paragraphs', notes };
    case 'fetaqa':
      return { schema: 'fetaqa', file: path, questions: readFetaqa(lines, path), noPoolReason: 'FeTaQA has no open pool: each question comes with its own table', notes };
    case 'financebench': {
      const { questions, pdfRoot } = readFinancebench(lines, path);
      return { schema: 'financebench', file: path, questions, ...(pdfRoot ? { pool: { kind: 'folder', root: pdfRoot } } : {}), notes };
    }
    case 'annotation': {
      const { questions, root } = annotationQuestions(path, lines, options.root);
      return { schema: 'annotation', file: path, questions, pool: { kind: 'folder', root }, notes };
    }
    default: {
      const never: never = detected.schema;
      throw new Error(`unhandled schema ${String(never)}`);
    }
  }
}
