/**
 * Open-pool documents in the shared JSONL shape `{_id, title, text, sentence_spans?}` (the
 * HotpotQA, 2Wiki and MuSiQue pools, the SciFact corpus), found beside a questions file.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EvalDataError, Fields, readJsonLines } from './jsonl';
import type { PoolDoc } from './types';

/** Files in `dir` whose names match `re`, sorted (pool-00.jsonl, pool-01.jsonl, …). */
export function filesMatching(dir: string, re: RegExp): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => re.test(n))
    .sort()
    .map((n) => join(dir, n));
}

export function readPoolDocs(files: string[]): PoolDoc[] {
  const docs: PoolDoc[] = [];
  const seen = new Map<string, string>();
  for (const path of files) {
    for (const { line, value } of readJsonLines(path)) {
      const f = Fields.of(value, path, line);
      const id = f.id('_id');
      const text = f.string('text');
      const doc: PoolDoc = { id, title: f.optString('title') ?? '', text };
      if (f.has('sentence_spans')) {
        doc.spans = f.tuples(
          'sentence_spans',
          (t) =>
            t.length === 2 && Number.isInteger(t[0]) && Number.isInteger(t[1]) && (t[0] as number) >= 0 && (t[1] as number) >= (t[0] as number) && (t[1] as number) <= text.length
              ? ([t[0], t[1]] as [number, number])
              : undefined,
          `[start, end] within the text (length ${text.length})`,
        );
      }
      const where = `${path}:${line}`;
      if (seen.has(id)) throw new EvalDataError(path, line, `duplicate document id "${id}" (first at ${seen.get(id)})`);
      seen.set(id, where);
      docs.push(doc);
    }
  }
  return docs;
}
