/**
 * SQuAD v1.1 in the per-article layout: `questions.jsonl` names its paragraph by article title and
 * index into `articles.jsonl` (beside it). Gold = the sentence(s) holding the first answer's span
 * (Canopy's splitter cuts the paragraph; SQuAD has no sentence split); the pool is every paragraph
 * of every article, id `<title>#<index>`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Fields, readJsonLines, type JsonLine } from './jsonl';
import type { EvalQuestion, GoldUnit, PoolDoc } from './types';

export function squadArticlesPath(dir: string): string | undefined {
  const p = join(dir, 'articles.jsonl');
  return existsSync(p) ? p : undefined;
}

export function readSquadArticles(path: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { line, value } of readJsonLines(path)) {
    const f = Fields.of(value, path, line);
    out.set(f.string('title'), f.strings('paragraphs'));
  }
  return out;
}

export const squadDocId = (title: string, index: number): string => `${title}#${index}`;
export const squadTitle = (title: string): string => title.replace(/_/g, ' ');

export function squadPool(path: string): PoolDoc[] {
  const docs: PoolDoc[] = [];
  for (const [title, paragraphs] of readSquadArticles(path)) {
    paragraphs.forEach((text, i) => docs.push({ id: squadDocId(title, i), title: squadTitle(title), text }));
  }
  return docs;
}

export function readSquad(lines: JsonLine[], path: string, articles: Map<string, string[]>, articlesPath: string, notes: string[]): EvalQuestion[] {
  let noSpan = 0;
  const out = lines.map(({ line, value }) => {
    const f = Fields.of(value, path, line);
    const id = f.id('id');
    const title = f.string('title');
    const paraIdx = f.number('para_idx');
    const paragraphs = articles.get(title);
    if (!paragraphs) return f.fail(`article "${title}" is not in ${articlesPath}`);
    const text = paragraphs[paraIdx];
    if (text === undefined) return f.fail(`para_idx ${paraIdx} is out of range: article "${title}" has ${paragraphs.length} paragraphs`);
    const answersF = f.object('answers');
    const answers = answersF.strings('text');
    const starts = answersF.has('answer_start') ? answersF.array('answer_start') : [];
    const gold: GoldUnit[] = [];
    const first = answers[0];
    if (first !== undefined) {
      let start = typeof starts[0] === 'number' ? (starts[0] as number) : -1;
      if (start < 0 || text.slice(start, start + first.length) !== first) start = text.indexOf(first);
      if (start >= 0) gold.push({ granularity: 'span', source: 'p', start, end: start + first.length });
      else noSpan++;
    }
    const docId = squadDocId(title, paraIdx);
    return {
      id,
      line,
      question: f.string('question'),
      answers: [...new Set(answers)],
      context: [{ kind: 'text', key: 'p', title: squadTitle(title), text }],
      gold,
      goldDocs: new Map([[docId, 1]]),
      poolIdOf: new Map([['p', docId]]),
    } satisfies EvalQuestion;
  });
  if (noSpan > 0) notes.push(`${noSpan} question(s) whose answer text does not occur in its paragraph: no gold sentence`);
  return out;
}
