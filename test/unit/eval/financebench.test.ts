// `canopy eval` on a tiny FinanceBench-schema slice built here from a generated ten-page PDF:
// page top-k, CANOPY over page top-k and the MAGE controller side by side, with paired
// intervals, the controller's trace statistics split by correct / incorrect, and the CLI.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';
import { runEval, type EvalOptions, type EvalReport } from '../../../src/eval/harness';
import { renderReport } from '../../../src/eval/render';
import { SHORT_ANSWER_PROMPT } from '../../../src/eval/shortAnswer';
import { longReportEvidencePage, longReportPdf } from '../../helpers/longReportPdf';

const modelDir = fileURLToPath(new URL('../../../models/use-lite', import.meta.url));

const questions = [
  { id: 'fb-1', question: 'How much was the capital expenditure on property, plant and equipment in 2023?', page: longReportEvidencePage, text: 'Capital expenditure on property, plant and equipment was 1,577 million in 2023.', answer: '1,577 million' },
  { id: 'fb-2', question: 'How many people did the company employ at the end of 2023?', page: 4, text: 'The company employed 1,240 people at the end of 2023.', answer: '1,240' },
  { id: 'fb-3', question: 'What are the capital expenditure commitments for 2024?', page: 7, text: 'Capital expenditure commitments for 2024 amount to 1,700 million.', answer: '1,700 million' },
];

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('canopy eval on FinanceBench: page top-k, CANOPY, the MAGE controller', () => {
  let dir: string;
  let cache: string;
  let file: string;
  let report: EvalReport;

  const options = (o: Partial<EvalOptions> = {}): EvalOptions => ({
    file,
    mode: 'given',
    topK: 10,
    rounds: 1,
    branching: 2,
    compressor: 'canopy',
    critic: 'none',
    retrieval: 'hybrid',
    encoder: { kind: 'builtin' },
    builtinModelDir: modelDir,
    seed: 1,
    resamples: 200,
    sweep: false,
    cacheDir: cache,
    peerChunkSize: 16,
    documentComparison: true,
    ...o,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-fb-'));
    cache = mkdtempSync(join(tmpdir(), 'canopy-fb-cache-'));
    mkdirSync(join(dir, 'pdfs'));
    writeFileSync(join(dir, 'pdfs', 'northwind-2023.pdf'), longReportPdf());
    file = join(dir, 'questions.jsonl');
    writeFileSync(
      file,
      questions
        .map((q) => JSON.stringify({ financebench_id: q.id, question: q.question, answer: q.answer, pdf_file: 'pdfs/northwind-2023.pdf', evidence: [{ evidence_text: q.text, evidence_page_num: q.page }] }))
        .join('\n'),
    );
    report = await runEval(options());
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('reports every method with evidence-page recall and tokens, with intervals', () => {
    assert.equal(report.dataset.schema, 'financebench');
    assert.deepEqual(
      report.results.rows.map((r) => r.config),
      ['page top-1', 'page top-3', 'page top-5', 'CANOPY over page top-1', 'CANOPY over page top-3', 'CANOPY over page top-5', 'controller'],
    );
    const m = (config: string) => report.results.rows.find((r) => r.config === config)!.metrics;
    for (const row of report.results.rows) {
      for (const key of ['goldRecall', 'tokens', 'allPages']) {
        const i = row.metrics[key]!;
        assert.ok(i && i.value >= 0 && i.lo <= i.value + 1e-9 && i.value <= i.hi + 1e-9, `${row.config} ${key}`);
        assert.equal(i.n, questions.length);
      }
    }
    // More pages cost more tokens; CANOPY keeps part of each page.
    assert.ok(m('page top-1').tokens!.value < m('page top-3').tokens!.value);
    assert.ok(m('page top-3').tokens!.value < m('page top-5').tokens!.value);
    for (const k of [1, 3, 5]) assert.ok(m(`CANOPY over page top-${k}`).tokens!.value <= m(`page top-${k}`).tokens!.value);
    // The reader input (numbered blocks, or the controller's XML) costs more than the kept text alone.
    for (const row of report.results.rows) assert.ok(row.metrics.readerTokens!.value > row.metrics.tokens!.value, `${row.config} reader input tokens`);
    assert.ok(m('page top-1').readerTokens!.value < m('page top-3').readerTokens!.value);
    assert.ok(m('page top-5').goldRecall!.value >= m('page top-1').goldRecall!.value);
    assert.equal(report.results.comparisons.length, 0);
  });

  it('gives the controller\'s trace statistics per question and split by correct / incorrect', () => {
    const d = report.document!;
    assert.ok(d, 'the report has the document comparison');
    assert.equal(d.perQuestion.length, questions.length);
    assert.match(d.correctDefinition, /every evidence page/);
    for (const [i, q] of d.perQuestion.entries()) {
      assert.equal(q.id, questions[i]!.id);
      assert.deepEqual(q.evidencePages, [questions[i]!.page]);
      assert.ok(q.actions > 0 && q.opened > 0, 'the controller acted and opened nodes');
      assert.ok(q.stop.length > 0);
      assert.equal(q.correct, q.evidencePages.every((p) => q.controllerPages.includes(p)));
    }
    // The controller's recall row is exactly what its pages say.
    const hits = d.perQuestion.reduce((a, q) => a + q.evidencePages.filter((p) => q.controllerPages.includes(p)).length, 0);
    const total = d.perQuestion.reduce((a, q) => a + q.evidencePages.length, 0);
    assert.equal(report.results.rows.find((r) => r.config === 'controller')!.metrics.goldRecall!.value, hits / total);
    assert.equal(d.controllerStats.all.runs, questions.length);
    assert.equal(d.controllerStats.correct.runs + d.controllerStats.incorrect.runs, questions.length);
    assert.equal(d.controllerStats.correct.runs, d.perQuestion.filter((q) => q.correct).length);
    assert.ok(d.controllerStats.all.mean.actions > 0);
    // Paired differences: the controller against the six other methods.
    assert.equal(d.versus.length, 6);
    const row = (c: string) => report.results.rows.find((r) => r.config === c)!.metrics;
    for (const v of d.versus) {
      assert.ok(Math.abs(v.recallDiff.value - (row('controller').goldRecall!.value - row(v.against).goldRecall!.value)) < 1e-9);
      assert.ok(Math.abs(v.tokensDiff.value - (row('controller').tokens!.value - row(v.against).tokens!.value)) < 1e-9);
      assert.ok(Math.abs(v.readerTokensDiff.value - (row('controller').readerTokens!.value - row(v.against).readerTokens!.value)) < 1e-9);
    }
  });

  it('renders the comparison and the trace tables', () => {
    const text = renderReport(report).join('\n');
    assert.match(text, /\| page top-3 \|/);
    assert.match(text, /## The controller against page top-k and CANOPY/);
    assert.match(text, /## Controller traces/);
    assert.match(text, /\| fb-1 \| 7 \|/, 'per question, with 1-based evidence pages');
  });

  it('runs from the CLI; --compressor keeps the item-level comparison', async () => {
    const io = capture();
    assert.equal(await main(['eval', file, '--cache', cache, '--resamples', '50', '--json'], io), 0);
    const r = JSON.parse(io.stdout.join('\n')) as EvalReport;
    assert.equal(r.results.rows.at(-1)!.config, 'controller');
    assert.deepEqual(r.document!.perQuestion.map((q) => q.stop), report.document!.perQuestion.map((q) => q.stop), 'the rule controller is deterministic');
    // Budgets from the command line reach the controller; unknown options are usage errors.
    const io3 = capture();
    assert.equal(await main(['eval', file, '--cache', cache, '--resamples', '50', '--controller-options', 'maxOpenedNodes=2', '--json'], io3), 0);
    const r3 = JSON.parse(io3.stdout.join('\n')) as EvalReport;
    assert.equal(r3.document!.budgets!.maxOpenedNodes, 2);
    assert.ok(r3.document!.perQuestion.every((q) => q.opened <= 2));
    const io4 = capture();
    assert.notEqual(await main(['eval', file, '--cache', cache, '--controller-options', 'maxOpened=2'], io4), 0);
    assert.match(io4.stderr.join('\n'), /--controller-options: "maxOpened=2"/);
    const io2 = capture();
    assert.equal(await main(['eval', file, '--cache', cache, '--resamples', '50', '--compressor', 'canopy', '--json'], io2), 0);
    const r2 = JSON.parse(io2.stdout.join('\n')) as EvalReport;
    assert.equal(r2.document, undefined);
    assert.deepEqual(r2.results.rows.map((x) => x.config), ['canopy B=2']);
  });

  it('with an LLM reader, reads the controller\'s subgraph as XML and page top-k as numbered blocks', async () => {
    const readerPrompts: string[] = [];
    const llm = {
      id: 'fake:fb',
      remote: false,
      async chat(messages: Array<{ role: string; content: string }>) {
        if (messages[0]!.content === SHORT_ANSWER_PROMPT) {
          readerPrompts.push(messages.at(-1)!.content);
          return { text: '1,577 million', model: 'fake', attempts: 1, ms: 1 };
        }
        // The controller's evaluator: open what can be opened, else activate.
        const candidates = [...messages.at(-1)!.content.matchAll(/<candidate index="(\d+)" action="(\w+)"/g)].map((m) => ({ index: Number(m[1]), action: m[2]! }));
        const pick = ['OPEN_NODE', 'ACTIVATE_NODE', 'ACTIVATE_PAGE'].map((a) => candidates.filter((c) => c.action === a)).find((l) => l.length > 0) ?? candidates;
        const actions = pick.slice(0, 2).map((c) => ({ index: c.index, utility: 0.8 }));
        return { text: JSON.stringify({ actions, search: '', stop: false, reason: 'open first' }), model: 'fake', attempts: 1, ms: 1 };
      },
    };
    const r = await runEval({ ...options({ limit: 1, controllerOptions: { maxIterations: 4 } }), llm });
    assert.equal(readerPrompts.length, 7, 'one short answer per method');
    const [top1, , , , , , controller] = readerPrompts;
    assert.match(top1!, /^Evidence:\n\[1\] northwind-2023\.pdf — Northwind Annual Report 2023\n/);
    assert.ok(!top1!.includes('<evidence_subgraph'));
    assert.match(controller!, /^Evidence:\n<evidence_subgraph document="[^"]*" file="northwind-2023\.pdf">\n {2}<page number="\d+"/);
    assert.match(controller!, /<(?:row|text) n="1">/);
    const ctl = r.results.rows.find((row) => row.config === 'controller')!.metrics;
    assert.equal(ctl.em!.value, 1, 'the short answer is scored');
  });

  it('names the file when a question\'s PDF is not a PDF', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(join(dir, 'pdfs', 'broken.pdf'), 'this is not a pdf');
    writeFileSync(bad, JSON.stringify({ financebench_id: 'x', question: 'q?', pdf_file: 'pdfs/broken.pdf', evidence: [{ evidence_text: 't', evidence_page_num: 0 }] }));
    await assert.rejects(runEval(options({ file: bad })), (e: Error) => /broken\.pdf/.test(e.message));
  });
});
