/**
 * Natural Questions (NQ-open) in the layout of the evaluation data: `queries.jsonl` (`{_id, text,
 * answers, gold_passage_id}` — real search-engine questions, lower case, no question mark) and the
 * passages in `corpus.jsonl` beside it (`{_id, title, text}`, about 100 words each). Gold = the
 * gold passage (any of its sentences holding an answer string answers); the pool is every passage,
 * and the given-items context is the gold passage alone.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Fields, type JsonLine } from './jsonl';
import type { EvalQuestion, PoolDoc } from './types';

export function nqCorpusPath(dir: string): string | undefined {
  const p = join(dir, 'corpus.jsonl');
  return existsSync(p) ? p : undefined;
}

export function readNq(lines: JsonLine[], path: string, corpus: ReadonlyMap<string, PoolDoc>, corpusPath: string): EvalQuestion[] {
  return lines.map(({ line, value }) => {
    const f = Fields.of(value, path, line);
    const passage = f.string('gold_passage_id');
    const doc = corpus.get(passage);
    if (!doc) return f.fail(`gold_passage_id "${passage}" is not in ${corpusPath}`);
    return {
      id: f.id('_id'),
      line,
      question: f.string('text'),
      answers: [...new Set(f.strings('answers'))],
      context: [{ kind: 'text', key: 'p', title: doc.title, text: doc.text }],
      gold: [{ granularity: 'paragraph', source: 'p' }],
      goldDocs: new Map([[passage, 1]]),
      poolIdOf: new Map([['p', passage]]),
    } satisfies EvalQuestion;
  });
}
