/**
 * Documents for the benchmarks from any pool-shaped files: the `{_id, title, text, ...}` JSONL
 * of pools and corpora, or SQuAD's `{title, paragraphs: [text]}` articles (one document per
 * paragraph). The union of several files is read in the order given.
 */
import { Fields, readJsonLines } from '../datasets/jsonl';
import { readPoolDocs } from '../datasets/pool';
import { squadPool } from '../datasets/squad';
import type { PoolDoc } from '../datasets/types';

export function readBenchDocs(files: string[]): PoolDoc[] {
  const out: PoolDoc[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const first = readJsonLines(file)[0];
    const f = first ? Fields.of(first.value, file, first.line) : undefined;
    const docs = f && f.has('paragraphs') && !f.has('_id') ? squadPool(file) : readPoolDocs([file]);
    for (const d of docs) {
      // Ids are unique per pool, not across pools: prefix repeats with the file.
      const id = seen.has(d.id) ? `${file}#${d.id}` : d.id;
      seen.add(id);
      out.push({ ...d, id });
    }
  }
  return out;
}

/** A question list for latency runs from any evaluation file (its questions' text). */
export { loadDataset } from '../datasets/load';
