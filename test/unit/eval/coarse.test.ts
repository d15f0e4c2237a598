// Coarse-chunk pools (src/eval/datasets/coarse.ts): grouping a pool's documents by title, by runs
// of one title and by runs in pool order; the groups' texts and shifted spans; and the questions'
// gold documents and gold units moved into the groups' coordinates, so that the gold still lies on
// the same text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coarsenPool, coarsenQuestion, parseCoarse } from '../../../src/eval/datasets/coarse';
import { pdfPagePool } from '../../../src/eval/pagePool';
import type { ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import type { RegionNode } from '../../../src/contracts/region';
import type { EvalQuestion, PoolDoc } from '../../../src/eval/datasets/types';

const docs: PoolDoc[] = [
  { id: 'a#0', title: 'Alpha', text: 'Alpha one. Alpha two.', spans: [[0, 10], [11, 21]] },
  { id: 'a#1', title: 'Alpha', text: 'Alpha three.', spans: [[0, 12]] },
  { id: 'a#2', title: 'Alpha', text: 'Alpha four. Alpha five.', spans: [[0, 11], [12, 23]] },
  { id: 'b#0', title: 'Beta', text: 'Beta one.', spans: [[0, 9]] },
  { id: 'b#1', title: 'Beta', text: 'Beta two is here.', spans: [[0, 17]] },
];

const question = (source: string, doc: string, gold: EvalQuestion['gold']): EvalQuestion => ({
  id: 'q',
  line: 1,
  question: 'which?',
  answers: [],
  context: [],
  gold,
  goldDocs: new Map([[doc, 1]]),
  poolIdOf: new Map([[source, doc]]),
});

describe('coarse-chunk pools', () => {
  it('parses title, title:N and N, and refuses anything else', () => {
    assert.deepEqual(parseCoarse('title'), { by: 'title' });
    assert.deepEqual(parseCoarse('title:4'), { by: 'title', size: 4 });
    assert.deepEqual(parseCoarse('10'), { by: 'run', size: 10 });
    assert.deepEqual(parseCoarse('page'), { by: 'page' });
    for (const bad of ['1', 'title:0', 'pages', '', 'title:x']) assert.throws(() => parseCoarse(bad), /pool chunks/);
  });

  it('groups every document of a title into one item, texts joined and spans shifted', () => {
    const pool = coarsenPool(docs, { by: 'title' });
    assert.deepEqual(
      pool.docs.map((d) => [d.id, d.title]),
      [
        ['a#0+2', 'Alpha'],
        ['b#0+1', 'Beta'],
      ],
    );
    const alpha = pool.docs[0]!;
    assert.equal(alpha.text, 'Alpha one. Alpha two.\n\nAlpha three.\n\nAlpha four. Alpha five.');
    // Every shifted span still cuts the same sentence out of the group's text.
    const sentences = alpha.spans!.map(([s, e]) => alpha.text.slice(s, e));
    assert.deepEqual(sentences, ['Alpha one.', 'Alpha two.', 'Alpha three.', 'Alpha four.', 'Alpha five.']);
  });

  it('cuts runs within a title and runs across titles, heading each member where titles differ', () => {
    assert.deepEqual(
      coarsenPool(docs, { by: 'title', size: 2 }).docs.map((d) => d.id),
      ['a#0+1', 'a#2', 'b#0+1'],
    );
    const runs = coarsenPool(docs, { by: 'run', size: 4 });
    assert.deepEqual(
      runs.docs.map((d) => d.id),
      ['a#0+3', 'b#1'],
    );
    const mixed = runs.docs[0]!;
    assert.equal(mixed.title, 'Alpha (+3)');
    assert.ok(mixed.text.includes('Beta\nBeta one.'), mixed.text);
    // The headings are sentences of their own; every member sentence is still where its span says.
    const sentences = mixed.spans!.map(([s, e]) => mixed.text.slice(s, e));
    assert.deepEqual(sentences, ['Alpha', 'Alpha one.', 'Alpha two.', 'Alpha', 'Alpha three.', 'Alpha', 'Alpha four.', 'Alpha five.', 'Beta', 'Beta one.']);
  });

  it('moves gold documents and gold units into the group, onto the same text', () => {
    const pool = coarsenPool(docs, { by: 'run', size: 4 });
    const group = pool.docs[0]!;
    const span = coarsenQuestion(question('p', 'a#2', [{ granularity: 'span', source: 'p', start: 12, end: 23 }]), pool);
    assert.deepEqual([...span.goldDocs], [['a#0+3', 1]]);
    assert.equal(span.poolIdOf!.get('p'), 'a#0+3');
    const u = span.gold[0]!;
    assert.ok(u.granularity === 'span');
    assert.equal(group.text.slice(u.start, u.end), 'Alpha five.');

    const sentence = coarsenQuestion(question('p', 'b#0', [{ granularity: 'sentence', source: 'p', index: 0 }]), pool);
    const s = sentence.gold[0]!;
    assert.ok(s.granularity === 'sentence');
    const [a, b] = group.spans![s.index]!;
    assert.equal(group.text.slice(a, b), 'Beta one.');

    const paragraph = coarsenQuestion(question('p', 'a#1', [{ granularity: 'paragraph', source: 'p' }]), pool);
    const p = paragraph.gold[0]!;
    assert.ok(p.granularity === 'span');
    assert.equal(group.text.slice(p.start, p.end), 'Alpha three.');
  });

  it('keeps the highest grade when two gold documents share a group', () => {
    const pool = coarsenPool(docs, { by: 'title' });
    const q: EvalQuestion = { ...question('p', 'a#0', []), goldDocs: new Map([['a#0', 1], ['a#2', 2], ['b#1', 1]]) };
    assert.deepEqual([...coarsenQuestion(q, pool).goldDocs], [['a#0+2', 2], ['b#0+1', 1]]);
  });

  it('a PDF page pool: each page of the questions\' PDFs one item, its leaves in order; gold = the evidence pages', async () => {
    let n = 0;
    const leaf = (text: string, page: number): RegionNode => ({ id: `n${n++}`, kind: 'sentence', modality: 'text', text, anchor: { file: 'r/a.pdf', page }, children: [] }) as unknown as RegionNode;
    const root = { id: 'root', kind: 'document', modality: 'text', text: '', anchor: { file: 'r/a.pdf' }, children: [leaf('Revenue rose.', 0), leaf('Costs fell.', 0), leaf('  ', 1), leaf('Net income was 5.', 2)] } as unknown as RegionNode;
    const parsed = { file: 'r/a.pdf', format: 'pdf', title: 'Filing A', items: [{ id: 'i', title: 'Filing A', root }], warnings: [] } as unknown as ParsedDocument;
    const asked: string[] = [];
    const cache = { get: async (path: string, relPath: string) => (asked.push(`${path}|${relPath}`), parsed) };
    const q: EvalQuestion = { id: 'q1', line: 1, question: 'net income?', answers: [], context: [{ kind: 'file', key: 'pdf', path: '/d/r/a.pdf', relPath: 'r/a.pdf' }], gold: [{ granularity: 'page', source: 'pdf', index: 2 }, { granularity: 'page', source: 'pdf', index: 7 }], goldDocs: new Map() };
    const { docs: pages, questions } = await pdfPagePool([q, { ...q, id: 'q2' }], cache);
    assert.deepEqual(asked, ['/d/r/a.pdf|r/a.pdf'], 'each PDF parsed once');
    // Page 1 has no text: no item.
    assert.deepEqual(pages.map((d) => [d.id, d.title, d.text]), [
      ['r/a.pdf#p0', 'Filing A, page 1', 'Revenue rose.\nCosts fell.'],
      ['r/a.pdf#p2', 'Filing A, page 3', 'Net income was 5.'],
    ]);
    assert.deepEqual(pages[0]!.spans!.map(([a, b]) => pages[0]!.text.slice(a, b)), ['Revenue rose.', 'Costs fell.']);
    // A gold page outside the parsed pages is not a gold document.
    assert.deepEqual([...questions[0]!.goldDocs], [['r/a.pdf#p2', 1]]);
  });
});
