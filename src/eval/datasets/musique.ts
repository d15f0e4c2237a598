/**
 * MuSiQue-Ans: twenty paragraphs per question (no sentence split: Canopy's splitter cuts them);
 * gold = the supporting paragraphs (`is_supporting`), their `pool_id` naming the pool documents.
 */
import { Fields, type JsonLine } from './jsonl';
import type { ContextSource, EvalQuestion, GoldUnit } from './types';

export function readMusique(lines: JsonLine[], path: string): EvalQuestion[] {
  return lines.map(({ line, value }) => {
    const f = Fields.of(value, path, line);
    const id = f.id('id');
    const question = f.string('question');
    const answer = f.string('answer');
    const aliases = f.has('answer_aliases') ? f.strings('answer_aliases') : [];
    const context: ContextSource[] = [];
    const gold: GoldUnit[] = [];
    const goldDocs = new Map<string, number>();
    const poolIdOf = new Map<string, string>();
    for (const p of f.objects('paragraphs')) {
      const idx = p.number('idx');
      const key = `p${idx}`;
      context.push({ kind: 'text', key, title: p.string('title'), text: p.string('paragraph_text') });
      const poolId = p.optString('pool_id');
      if (poolId) poolIdOf.set(key, poolId);
      if (p.boolean('is_supporting')) {
        gold.push({ granularity: 'paragraph', source: key });
        if (poolId) goldDocs.set(poolId, 1);
      }
    }
    const hops = f.has('question_decomposition') ? f.array('question_decomposition').length : undefined;
    const q: EvalQuestion = { id, line, question, answers: [answer, ...aliases], context, gold, goldDocs, poolIdOf };
    if (hops) q.type = `${hops}-hop`;
    return q;
  });
}
