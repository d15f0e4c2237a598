/**
 * HotpotQA (distractor setting) and 2WikiMultiHopQA: ten paragraphs per question in the
 * dataset's own sentence split; gold = `supporting_facts` `[title, sentence index]`; the pool
 * documents are keyed by title.
 */
import { Fields, type JsonLine } from './jsonl';
import type { ContextSource, EvalQuestion, GoldUnit } from './types';

export function readHotpotLike(lines: JsonLine[], path: string, notes: string[]): EvalQuestion[] {
  let unresolved = 0;
  const out = lines.map(({ line, value }) => {
    const f = Fields.of(value, path, line);
    const id = f.id('_id');
    const question = f.string('question');
    const answer = f.string('answer');
    const context: ContextSource[] = f.tuples(
      'context',
      (t) => (t.length === 2 && typeof t[0] === 'string' && Array.isArray(t[1]) && t[1].every((s) => typeof s === 'string') ? { title: t[0], sentences: t[1] as string[] } : undefined),
      '[title, [sentence, …]]',
    ).map((c, i) => ({ kind: 'sentences', key: `p${i}`, title: c.title, sentences: c.sentences }));
    const facts = f.tuples(
      'supporting_facts',
      (t) => (t.length >= 2 && typeof t[0] === 'string' && Number.isInteger(t[1]) && (t[1] as number) >= 0 ? { title: t[0], index: t[1] as number } : undefined),
      '[title, sentence index]',
    );
    const byTitle = new Map<string, ContextSource & { kind: 'sentences' }>();
    for (const c of context) if (c.kind === 'sentences' && !byTitle.has(c.title)) byTitle.set(c.title, c);
    const gold: GoldUnit[] = [];
    const goldDocs = new Map<string, number>();
    for (const fact of facts) {
      goldDocs.set(fact.title, 1);
      const src = byTitle.get(fact.title);
      if (!src || fact.index >= src.sentences.length) {
        unresolved++;
        continue;
      }
      gold.push({ granularity: 'sentence', source: src.key, index: fact.index, text: src.sentences[fact.index]! });
    }
    const q: EvalQuestion = {
      id,
      line,
      question,
      answers: [answer],
      context,
      gold,
      goldDocs,
      poolIdOf: new Map(context.map((c) => [c.key, (c as { title: string }).title])),
    };
    const type = f.optString('type');
    if (type) q.type = type;
    return q;
  });
  if (unresolved > 0) notes.push(`${unresolved} supporting fact(s) name a title or sentence index not in the question's context; left out of the gold sentences`);
  return out;
}
