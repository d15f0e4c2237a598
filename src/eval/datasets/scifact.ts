/**
 * BEIR SciFact: `queries.jsonl` `{_id, text, cited_doc_ids, evidence}` beside `corpus-*.jsonl`
 * and `qrels/*.tsv`. Relevance comes from the qrels (every qrels file beside the queries, merged;
 * `cited_doc_ids` when there are none) and only judged queries are evaluated, as BEIR does. Given
 * items = the judged documents; gold sentences = the rationale sentence indices.
 */
import { join } from 'node:path';
import { Fields, readQrels, type JsonLine } from './jsonl';
import { filesMatching } from './pool';
import type { EvalQuestion, GoldUnit, PoolDoc } from './types';

export function scifactCorpusFiles(dir: string): string[] {
  return filesMatching(dir, /^corpus.*\.jsonl$/);
}

export function scifactQrels(dir: string): { files: string[]; qrels: Map<string, Map<string, number>> } {
  const files = filesMatching(join(dir, 'qrels'), /\.tsv$/);
  const qrels = new Map<string, Map<string, number>>();
  for (const file of files) for (const [q, m] of readQrels(file)) qrels.set(q, new Map([...(qrels.get(q) ?? []), ...m]));
  return { files, qrels };
}

export function readScifact(lines: JsonLine[], path: string, corpus: Map<string, PoolDoc>, qrels: Map<string, Map<string, number>>, notes: string[]): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  let unjudged = 0;
  let missingDocs = 0;
  for (const { line, value } of lines) {
    const f = Fields.of(value, path, line);
    const id = f.id('_id');
    const text = f.string('text');
    const cited = f.has('cited_doc_ids') ? f.array('cited_doc_ids').map((v) => String(v)) : [];
    const judged = qrels.size > 0 ? qrels.get(id) : cited.length > 0 ? new Map(cited.map((d) => [d, 1])) : undefined;
    if (!judged || ![...judged.values()].some((r) => r > 0)) {
      unjudged++;
      continue;
    }
    const gold: GoldUnit[] = [];
    const docIds = [...judged.entries()].filter(([, r]) => r > 0).map(([d]) => d);
    if (f.has('evidence')) {
      const ev = f.object('evidence');
      for (const docId of Object.keys(ev.obj)) {
        for (const entry of ev.objects(docId)) {
          for (const s of entry.array('sentences')) {
            if (!Number.isInteger(s)) entry.fail(`sentence indices must be integers`);
            const doc = corpus.get(docId);
            const span = doc?.spans?.[s as number];
            gold.push({ granularity: 'sentence', source: `d:${docId}`, index: s as number, ...(doc && span ? { text: doc.text.slice(span[0], span[1]) } : {}) });
          }
        }
        if (!docIds.includes(docId)) docIds.push(docId);
      }
    }
    const context = docIds.flatMap((d) => {
      const doc = corpus.get(d);
      if (!doc) {
        missingDocs++;
        return [];
      }
      return [{ kind: 'text' as const, key: `d:${d}`, title: doc.title, text: doc.text, ...(doc.spans ? { spans: doc.spans } : {}) }];
    });
    out.push({ id, line, question: text, answers: [], context, gold, goldDocs: judged, poolIdOf: new Map(docIds.map((d) => [`d:${d}`, d])) });
  }
  if (unjudged > 0) notes.push(`${unjudged} quer${unjudged === 1 ? 'y has' : 'ies have'} no relevance judgement and ${unjudged === 1 ? 'is' : 'are'} left out (as BEIR does)`);
  if (missingDocs > 0) notes.push(`${missingDocs} judged document id(s) are not in the corpus`);
  return out;
}
