// Dataset gold import on hand-made slices in the schemas of data/README.md: files are written
// under the given folder, gold is anchored into them exactly, the parsed trees see the gold, and
// references that do not resolve are reported rather than dropped silently.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importGold } from '../../../src/core/annotate/importGold';
import { goldStatus } from '../../../src/core/annotate/overlap';
import { parseFile } from '../../../src/core/ingest/parseFile';

const fixtures = path.resolve('test/fixtures/annotate');

describe('importGold', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'canopy-gold-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const textAt = async (out: string, file: string, s: number, e: number) => (await readFile(path.join(out, file), 'utf8')).slice(s, e);

  it('HotpotQA: one Markdown file per paragraph, supporting sentences anchored by char offsets', async () => {
    const out = path.join(dir, 'hotpot');
    const r = await importGold(path.join(fixtures, 'hotpot_slice.jsonl'), out, { time: 't' });
    assert.equal(r.dataset, 'hotpotqa');
    assert.equal(r.questions, 2);
    assert.equal(r.files.length, 5);
    assert.deepEqual(
      r.annotations.map((a) => a.text),
      ['In 1901 she founded the Byrne Museum.', 'The Byrne Museum is an art museum in Dunmore.', 'It is 90 metres deep.', 'Lake Brin is 40 metres deep.'],
    );
    for (const a of r.annotations) {
      assert.equal(await textAt(out, a.file, a.anchor.charStart!, a.anchor.charEnd!), a.text);
      assert.equal(a.source, 'import');
      assert.equal(a.file, a.anchor.file);
    }
    assert.equal(r.annotations[0]!.questionId, 'hq-1');
    assert.equal(r.annotations[0]!.anchor.startLine, 3);
    assert.deepEqual(r.skipped.map((s) => s.line), [2], 'the supporting fact with an unknown title is reported');
    // The parser's sentence leaves see the gold.
    const a = r.annotations[0]!;
    const doc = await parseFile(a.file, await readFile(path.join(out, a.file)), { branchingFactor: 2 });
    const status = goldStatus(doc.items[0]!.root, [a.anchor]);
    const fullLeaves = [...status.entries()].filter(([, s]) => s.full).map(([id]) => id);
    assert.equal(fullLeaves.length, 1);
  });

  it('2WikiMultiHopQA is recognised by its evidences field', async () => {
    const r = await importGold(path.join(fixtures, '2wiki_slice.jsonl'), path.join(dir, 'wiki'));
    assert.equal(r.dataset, '2wiki');
    assert.equal(r.annotations.length, 2);
  });

  it('MuSiQue: supporting paragraphs become whole-paragraph annotations', async () => {
    const out = path.join(dir, 'musique');
    const r = await importGold(path.join(fixtures, 'musique_slice.jsonl'), out);
    assert.equal(r.dataset, 'musique');
    assert.equal(r.files.length, 3);
    assert.deepEqual(
      r.annotations.map((a) => a.text),
      ['Ada Byrne founded the Byrne Museum in 1901.', 'The Byrne Museum is in Dunmore.'],
    );
  });

  it('TAT-QA: mapped cells become CSV rows, paragraph spans and rel_paragraphs become text spans', async () => {
    const out = path.join(dir, 'tatqa');
    const r = await importGold(path.join(fixtures, 'tatqa_slice.jsonl'), out);
    assert.equal(r.dataset, 'tatqa');
    assert.equal(r.questions, 3);
    const byQ = (id: string) => r.annotations.filter((a) => a.questionId === id);
    const [row] = byQ('tq-1');
    assert.equal(byQ('tq-1').length, 1, 'two cells of one row give one row annotation');
    assert.equal(row!.anchor.row, 2, 'array row 3 is data row 2 (the header is row 0)');
    assert.equal(row!.text, 'Profit,900,750');
    assert.equal(byQ('tq-2')[0]!.text, 'strong demand');
    assert.equal(byQ('tq-3')[0]!.text, 'Costs were stable.');
    const csvText = await readFile(path.join(out, row!.file), 'utf8');
    assert.match(csvText, /^Item,2019,2018\nRevenue,"\$1,200","\$1,000"\n"Cost, net"/);
    const doc = await parseFile(row!.file, Buffer.from(csvText), { branchingFactor: 2 });
    const status = goldStatus(doc.items[0]!.root, [row!.anchor]);
    const rows: string[] = [];
    const walk = (n: { id: string; kind: string; text: string; children: never[] }) => {
      if (n.kind === 'row' && status.get(n.id)!.full) rows.push(n.text);
      n.children.forEach(walk);
    };
    walk(doc.items[0]!.root as never);
    assert.deepEqual(rows, ['Profit,900,750']);
  });

  it('FeTaQA: highlighted cells become rows; header cells are not gold', async () => {
    const r = await importGold(path.join(fixtures, 'fetaqa_slice.jsonl'), path.join(dir, 'feta'));
    assert.equal(r.dataset, 'fetaqa');
    assert.deepEqual(
      r.annotations.map((a) => [a.anchor.row, a.text]),
      [[1, '1905,"The ""Lake"""']],
    );
    assert.equal(r.skipped.length, 0);
  });

  it('FinanceBench: evidence pages of the copied PDF; evidence without a page is reported', async () => {
    const out = path.join(dir, 'fb');
    const r = await importGold(path.join(fixtures, 'financebench_slice.jsonl'), out);
    assert.equal(r.dataset, 'financebench');
    assert.deepEqual(
      r.annotations.map((a) => a.anchor),
      [{ file: 'pdfs/ACME_2020_10K.pdf', page: 2 }],
    );
    assert.equal(r.annotations[0]!.text, 'Revenue 5');
    assert.match(await readFile(path.join(out, 'pdfs', 'ACME_2020_10K.pdf'), 'utf8'), /placeholder/);
    assert.equal(r.skipped.length, 1);
  });

  it('honours --limit and refuses an unknown schema', async () => {
    const r = await importGold(path.join(fixtures, 'hotpot_slice.jsonl'), path.join(dir, 'lim'), { limit: 1 });
    assert.equal(r.questions, 1);
    await assert.rejects(importGold(path.join(fixtures, 'pdfs', 'ACME_2020_10K.pdf'), path.join(dir, 'bad')), /not HotpotQA|invalid JSON|no records/);
  });
});
