/**
 * Which schema a file is in, from its first record: each dataset has fields no other has. A file
 * from a known dataset that is not a questions file (a pool, a corpus, SQuAD's articles) gets an
 * error saying which file to pass instead.
 */
import { looksLikeAnnotation } from '../annotations';
import type { SchemaName } from './types';

export type Detection = { schema: SchemaName } | { error: string };

export function detectSchema(first: unknown): Detection {
  if (typeof first !== 'object' || first === null || Array.isArray(first)) return { error: 'the first record is not a JSON object' };
  const o = first as Record<string, unknown>;
  const has = (...keys: string[]) => keys.every((k) => k in o);
  if (looksLikeAnnotation(o)) return { schema: 'annotation' };
  if (has('supporting_facts', 'context')) return { schema: has('evidences') || o.type === 'compositional' || o.type === 'inference' || o.type === 'bridge_comparison' ? '2wikimultihopqa' : 'hotpotqa' };
  if (has('paragraphs', 'question') && Array.isArray(o.paragraphs) && (has('question_decomposition') || (o.paragraphs as unknown[]).some((p) => typeof p === 'object' && p !== null && 'paragraph_text' in p))) {
    return { schema: 'musique' };
  }
  if (has('para_idx', 'answers', 'question')) return { schema: 'squad' };
  if (has('table', 'questions', 'paragraphs')) return { schema: 'tatqa' };
  if (has('table_array', 'highlighted_cell_ids')) return { schema: 'fetaqa' };
  if (has('evidence', 'question') && (has('financebench_id') || has('pdf_file'))) return { schema: 'financebench' };
  if (has('_id', 'text', 'answers', 'gold_passage_id')) return { schema: 'nq' };
  if (has('_id', 'text') && (has('cited_doc_ids') || (has('evidence') && !has('title')))) return { schema: 'scifact' };
  // Known non-question files.
  if (has('title', 'paragraphs') && Array.isArray(o.paragraphs) && (o.paragraphs as unknown[]).every((p) => typeof p === 'string')) {
    return { error: 'this is a SQuAD articles file; pass the questions file (questions.jsonl) beside it' };
  }
  if (has('_id', 'title', 'text')) return { error: 'this is a pool or corpus file (one document per line); pass the questions file beside it' };
  return {
    error: `unrecognised schema (fields: ${Object.keys(o).slice(0, 12).join(', ')}); expected HotpotQA, 2WikiMultiHopQA, MuSiQue, SQuAD, NQ-open, SciFact, TAT-QA, FeTaQA, FinanceBench or a Canopy annotation file`,
  };
}
