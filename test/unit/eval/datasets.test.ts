// Every dataset schema on a small hand-made slice: detection, fields, and gold evidence mapping
// exactly onto the leaves of the trees the hierarchy code builds.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { leavesOf } from '../../../src/core/compress/baselines';
import { loadDataset } from '../../../src/eval/datasets/load';
import type { EvalQuestion } from '../../../src/eval/datasets/types';
import { resolveGold } from '../../../src/eval/gold';
import { buildContext, ParsedFileCache } from '../../../src/eval/items';
import { writePdf } from '../ingest/pdfWriter';

const fx = (p: string) => fileURLToPath(new URL(`../../fixtures/eval/${p}`, import.meta.url));

async function goldTexts(q: EvalQuestion, b = 2): Promise<string[][]> {
  const sources = await buildContext(q.context, 'q', b, new ParsedFileCache());
  const { gold, unresolved } = resolveGold(q.gold, sources);
  assert.equal(unresolved, 0, 'every gold unit resolves');
  const byId = new Map(sources.flatMap((s) => s.items.flatMap((it) => leavesOf(it.root))).map((l) => [l.id, l]));
  return gold.map((g) => g.leafIds.map((id) => byId.get(id)!.text));
}

describe('dataset readers', () => {
  it('HotpotQA: detected, sentence ids map to exactly the dataset sentences, at every B', async () => {
    const ds = loadDataset(fx('hotpotqa/dev.jsonl'));
    assert.equal(ds.schema, 'hotpotqa');
    assert.equal(ds.questions.length, 2);
    const q = ds.questions[0]!;
    assert.equal(q.answers[0], 'Saltmere');
    assert.deepEqual([...q.goldDocs.keys()], ['Marrow Lake', 'River Quill']);
    for (const b of [2, 3, 4]) {
      assert.deepEqual(await goldTexts(q, b), [['Its outflow feeds the river Quill.'], ['It reaches the sea at the port town of Saltmere.']]);
    }
    assert.equal(ds.pool?.kind, 'docs');
    const pool = ds.pool!.kind === 'docs' ? ds.pool!.read() : [];
    assert.equal(pool.length, 8);
    assert.deepEqual(pool[0]!.spans?.[1], [65, 100]);
  });

  it('2WikiMultiHopQA: told apart from HotpotQA by its evidences', async () => {
    const ds = loadDataset(fx('2wiki/dev.jsonl'));
    assert.equal(ds.schema, '2wikimultihopqa');
    assert.deepEqual(await goldTexts(ds.questions[0]!), [['Her father was Marco Ortiz.'], ['He was buried in Valdora.']]);
    assert.equal(ds.pool, undefined);
    assert.match(ds.noPoolReason!, /no pool-\*\.jsonl/);
  });

  it('MuSiQue: supporting paragraphs as paragraph units, pool ids, aliases', async () => {
    const ds = loadDataset(fx('musique/dev.jsonl'));
    assert.equal(ds.schema, 'musique');
    const q = ds.questions[0]!;
    assert.deepEqual(q.answers, ['Ivelford', 'Ivelford town']);
    assert.deepEqual([...q.goldDocs.keys()], ['m01', 'm02']);
    assert.deepEqual(
      q.gold.map((g) => g.granularity),
      ['paragraph', 'paragraph'],
    );
    const texts = await goldTexts(q);
    assert.deepEqual(texts[1], ['Norhold is a northern province.', 'Its capital is Ivelford, a river town.']);
    assert.equal(q.type, '2-hop');
  });

  it('SQuAD: the answer span maps to its sentence; a missing answer_start is found in the text', async () => {
    const ds = loadDataset(fx('squad/questions.jsonl'));
    assert.equal(ds.schema, 'squad');
    assert.deepEqual(await goldTexts(ds.questions[0]!), [['It stands on Mount Asher at 2,100 metres.']]);
    assert.deepEqual(await goldTexts(ds.questions[1]!), [['It reopened as a museum in 2004.']]);
    assert.deepEqual([...ds.questions[0]!.goldDocs.keys()], ['Corven_Observatory#0']);
    const pool = ds.pool!.kind === 'docs' ? ds.pool!.read() : [];
    assert.deepEqual(
      pool.map((d) => d.id),
      ['Corven_Observatory#0', 'Corven_Observatory#1'],
    );
    assert.equal(pool[0]!.title, 'Corven Observatory');
  });

  it('SciFact: judged queries only, rationale sentences via the corpus spans', async () => {
    const ds = loadDataset(fx('scifact/queries.jsonl'));
    assert.equal(ds.schema, 'scifact');
    assert.deepEqual(
      ds.questions.map((q) => q.id),
      ['1', '2'],
    );
    assert.ok(ds.notes.some((n) => /no relevance judgement/.test(n)));
    assert.deepEqual(await goldTexts(ds.questions[0]!), [['Supplementing zinc restored normal healing within ten days.']]);
    assert.deepEqual(ds.questions[1]!.gold, []);
    assert.deepEqual([...ds.questions[1]!.goldDocs.entries()], [['102', 1]]);
  });

  it('TAT-QA: mapped cells give rows, mapped spans give sentences, rel_paragraphs give paragraphs', async () => {
    const ds = loadDataset(fx('tatqa/dev.jsonl'));
    assert.equal(ds.schema, 'tatqa');
    assert.equal(ds.questions.length, 3);
    const [a, b, c] = ds.questions as [EvalQuestion, EvalQuestion, EvalQuestion];
    assert.deepEqual(await goldTexts(a), [['Profit | $ 40.4 | $ 22.7']]);
    const sources = await buildContext(a.context, 'q', 2, new ParsedFileCache());
    const row = leavesOf(sources[0]!.items[0]!.root).find((l) => l.text.startsWith('Profit'))!;
    assert.equal(row.header, ' | 2021 | 2020', 'the header row travels with every row');
    assert.equal(row.anchor.row, 2);
    assert.deepEqual(
      b.gold.map((g) => g.granularity),
      ['paragraph'],
    );
    assert.deepEqual(await goldTexts(c), [['Revenue grew because of new stores.']]);
  });

  it('FeTaQA: highlighted cells give their rows; the free-form answer is a reference', async () => {
    const ds = loadDataset(fx('fetaqa/dev.jsonl'));
    assert.equal(ds.schema, 'fetaqa');
    const q = ds.questions[0]!;
    assert.deepEqual(q.answers, []);
    assert.match(q.reference!, /Golden Lamp/);
    assert.deepEqual(await goldTexts(q), [['2017 | Golden Lamp | Won']]);
  });

  describe('FinanceBench (PDF written at test time)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-eval-fb-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    it('evidence pages map to the leaves on those pages of the parsed PDF', async () => {
      mkdirSync(join(dir, 'pdfs'));
      writeFileSync(
        join(dir, 'pdfs', 'ACME_2020_10K.pdf'),
        writePdf([
          [{ x: 72, y: 700, size: 11, text: 'Acme Corp annual report. Revenue was 12 million dollars.' }],
          [{ x: 72, y: 700, size: 11, text: 'Capital expenditure was 3 million dollars in 2020.' }],
        ]),
      );
      writeFileSync(
        join(dir, 'questions.jsonl'),
        `${JSON.stringify({
          financebench_id: 'fb1',
          question: 'What was Acme capital expenditure in 2020?',
          answer: '3 million dollars',
          evidence: [{ evidence_text: 'Capital expenditure was 3 million dollars in 2020.', doc_name: 'ACME_2020_10K', evidence_page_num: 1 }],
          pdf_file: 'pdfs/ACME_2020_10K.pdf',
        })}\n`,
      );
      const ds = loadDataset(join(dir, 'questions.jsonl'));
      assert.equal(ds.schema, 'financebench');
      assert.deepEqual(ds.pool, { kind: 'folder', root: join(dir, 'pdfs') });
      const q = ds.questions[0]!;
      assert.equal(q.context[0]!.kind === 'file' && q.context[0]!.relPath, 'ACME_2020_10K.pdf');
      assert.deepEqual(await goldTexts(q), [['Capital expenditure was 3 million dollars in 2020.']]);
    });
  });

  it('annotations: anchors map to the leaves they overlap; the workspace is found above the file', async () => {
    const ds = loadDataset(fx('annotation/ws/annotations.jsonl'));
    assert.equal(ds.schema, 'annotation');
    assert.deepEqual(ds.pool, { kind: 'folder', root: fx('annotation/ws') });
    const q = ds.questions[0]!;
    assert.deepEqual(q.answers, ['Oak saplings']);
    assert.deepEqual(await goldTexts(q), [['Oak saplings were planted there in spring.']]);
  });
});
