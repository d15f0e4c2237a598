/**
 * What every dataset reader produces: questions with their own context (the items of the
 * given-items mode), their gold evidence in the dataset's own terms (sentence ids, table rows,
 * PDF pages, char spans, paragraphs) and, where the dataset has one, the open pool the
 * open-pool mode indexes. Readers never build region trees; `../items.ts` does, and
 * `../gold.ts` maps gold units onto the trees' leaves.
 */
import type { Anchor } from '../../contracts/region';

export type SchemaName = 'hotpotqa' | '2wikimultihopqa' | 'musique' | 'squad' | 'nq' | 'scifact' | 'tatqa' | 'fetaqa' | 'financebench' | 'annotation';

export const schemaNames: readonly SchemaName[] = ['hotpotqa', '2wikimultihopqa', 'musique', 'squad', 'nq', 'scifact', 'tatqa', 'fetaqa', 'financebench', 'annotation'];

/** One source the given-items mode turns into one or more items. `key` is unique within a question. */
export type ContextSource =
  /** A paragraph in the dataset's own sentence split (HotpotQA, 2Wiki): gold sentence ids map exactly. */
  | { kind: 'sentences'; key: string; title: string; sentences: string[] }
  /** A paragraph of text; `spans` are the dataset's sentence spans when it has them, else Canopy's splitter cuts it. */
  | { kind: 'text'; key: string; title: string; text: string; spans?: Array<[number, number]> }
  /** A table: `rows[0..headerRows)` are the header, the rest data rows (leaves, each with the header). */
  | { kind: 'table'; key: string; title: string; rows: string[][]; headerRows: number }
  /** A file parsed with Canopy's own parser (PDF pages, an annotated workspace file). */
  | { kind: 'file'; key: string; path: string; relPath: string };

/**
 * A gold evidence unit, in the dataset's own coordinates:
 *  - sentence: the `index`-th sentence of source `source` (dataset numbering, 0-based);
 *  - row: data row `index` (0-based, header rows excluded) of a table source;
 *  - page: 0-based page `index` of a file source;
 *  - span: char range of a text source (mapped to the sentences it overlaps);
 *  - anchor: a region of a file source given by anchors (annotations);
 *  - paragraph: the whole source (datasets that mark only supporting paragraphs).
 */
export type GoldUnit =
  | { granularity: 'sentence'; source: string; index: number; text?: string }
  | { granularity: 'row'; source: string; index: number }
  | { granularity: 'page'; source: string; index: number }
  | { granularity: 'span'; source: string; start: number; end: number }
  | { granularity: 'anchor'; source: string; anchors: Anchor[] }
  | { granularity: 'paragraph'; source: string };

export interface EvalQuestion {
  id: string;
  /** 1-based line of the question in its file. */
  line: number;
  question: string;
  /** Acceptable short answers (EM/F1, answer-bearing recall); empty when the answer is free-form only. */
  answers: string[];
  /** True when every answer string must be present (multi-span answers). */
  answersAllRequired?: boolean;
  /** Free-form reference answer (FeTaQA, FinanceBench) kept for an LLM reader's F1. */
  reference?: string;
  /** Context sources of the given-items mode, in dataset order. */
  context: ContextSource[];
  gold: GoldUnit[];
  /** Pool document ids of the gold paragraphs/documents (open-pool retrieval metrics), graded. */
  goldDocs: Map<string, number>;
  /** Context source key → pool document id, where sources are pool documents. */
  poolIdOf?: Map<string, string>;
  /** Question type where the dataset has one (bridge/comparison, n-hop, …). */
  type?: string;
}

/** One document of an open pool. */
export interface PoolDoc {
  id: string;
  title: string;
  text: string;
  /** The dataset's own sentence spans, when it has them. */
  spans?: Array<[number, number]>;
}

export type PoolSpec =
  /** JSONL documents (pools, corpora, SQuAD articles) read by `readPool`. */
  | { kind: 'docs'; files: string[]; read: () => PoolDoc[] }
  /** A folder of real files indexed with Canopy's own workspace indexer (PDFs, annotated workspaces). */
  | { kind: 'folder'; root: string };

export interface Dataset {
  schema: SchemaName;
  /** Absolute path of the questions file. */
  file: string;
  questions: EvalQuestion[];
  /** Absent when the schema has no open pool beside the file. */
  pool?: PoolSpec;
  /** Why there is no pool (for the error when --mode pool is asked for). */
  noPoolReason?: string;
  notes: string[];
}
