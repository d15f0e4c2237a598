// The real-document benchmark (issue 16): the corpus it writes, the scoring rules, and one run
// end to end on a tiny corpus built here (a ten-page PDF report, three small articles) in the
// FinanceBench and SQuAD schemas — through the built CLI and a warm in-process workspace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';
import type { AskTrace } from '../../../src/contracts/trace';
import { canopyCompressor, defaultSettings } from '../../../src/core/config/settings';
import { demoFromPackage, runRealDocsBench, type RealDocsReport } from '../../../src/eval/bench/realDocs';
import { articleMarkdown, buildRealDocsCorpus, findRealDocsInputs, pickFinancebench, type RealDocsQuestion } from '../../../src/eval/bench/realDocsCorpus';
import { compareRealDocs, criticText, renderRealDocsMarkdown, replaceRealDocsSection, summarise } from '../../../src/eval/bench/realDocsReport';
import { answerHasGoldString, factNumbers, keyFactCheck, onGold, scoreAnswer } from '../../../src/eval/bench/realDocsScore';

/** A saved trace file: gzip (what the TraceStore writes) or plain JSON. */
function savedTrace(file: string): AskTrace {
  const bytes = readFileSync(file);
  return JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as AskTrace;
}
import { longReportPdf } from '../../helpers/longReportPdf';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const shortPdf = join(repo, 'test', 'fixtures', 'ingest', 'report.pdf');

const articles = [
  {
    title: 'Corven_Observatory',
    paragraphs: [
      'The Corven Observatory opened in 1911. It stands on Mount Asher at 2,100 metres. Its main telescope has a mirror of 1.5 metres.',
      'The observatory closed to the public in 1990. It reopened as a museum in 2004.',
    ],
  },
  {
    title: 'Lake_Tamsin',
    paragraphs: [
      'Lake Tamsin is a glacial lake in the northern highlands. It covers 42 square kilometres.',
      'The lake is fed by the river Oru, which rises on the Pell glacier.\nFishing has been banned on the lake since 1987.',
    ],
  },
  { title: 'Harbour_Bridge_(Velm)', paragraphs: ['The harbour bridge of Velm was built from granite between 1840 and 1846.', 'It was widened for trams in 1902.'] },
];

const squadQuestions = [
  { id: 's1', title: 'Corven_Observatory', para_idx: 0, question: 'On which mountain does the Corven Observatory stand?', answers: { text: ['Mount Asher'], answer_start: [52] } },
  { id: 's2', title: 'Lake_Tamsin', para_idx: 1, question: 'Which river feeds Lake Tamsin?', answers: { text: ['the river Oru', 'Oru'], answer_start: [19, 29] } },
];

const fbQuestions = [
  {
    financebench_id: 'fb-capex',
    question: 'How much was the capital expenditure on property, plant and equipment in 2023?',
    answer: '$1577.00',
    evidence: [{ evidence_text: 'Capital expenditure ... 1,577 million', evidence_page_num: 6 }],
    pdf_file: 'pdfs/northwind.pdf',
  },
  {
    financebench_id: 'fb-commit',
    question: 'What are the capital expenditure commitments for 2024?',
    answer: 'Commitments of 1,700 million for 2024.',
    evidence: [{ evidence_text: 'Capital expenditure commitments for 2024 amount to 1,700 million.', evidence_page_num: 7 }],
    pdf_file: 'pdfs/northwind.pdf',
  },
  // A PDF with one question: the size rule leaves it out when two questions are asked for.
  { financebench_id: 'fb-other', question: 'What does the short report say?', answer: 'Nothing.', evidence: [{ evidence_text: 'x', evidence_page_num: 0 }], pdf_file: 'pdfs/short.pdf' },
];

const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

function writeData(dir: string): void {
  mkdirSync(join(dir, 'fb', 'pdfs'), { recursive: true });
  mkdirSync(join(dir, 'sq'), { recursive: true });
  writeFileSync(join(dir, 'fb', 'pdfs', 'northwind.pdf'), longReportPdf());
  copyFileSync(shortPdf, join(dir, 'fb', 'pdfs', 'short.pdf'));
  writeFileSync(join(dir, 'fb', 'questions.jsonl'), jsonl(fbQuestions));
  writeFileSync(join(dir, 'sq', 'articles.jsonl'), jsonl(articles));
  writeFileSync(join(dir, 'sq', 'questions.jsonl'), jsonl(squadQuestions));
  mkdirSync(join(dir, 'docs', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'docs', 'guide.md'), '# Guide\n\nHow to use the tool.\n');
  writeFileSync(join(dir, 'docs', 'sub', 'more.md'), '# More\n\nDetails.\n');
  writeFileSync(join(dir, 'docs', 'picture.svg'), '<svg/>');
}

describe('real-document benchmark: corpus and scoring rules', () => {
  it('writes an article as Markdown with exact paragraph ranges and lines', () => {
    const w = articleMarkdown('Lake_Tamsin', articles[1]!.paragraphs);
    assert.ok(w.text.startsWith('# Lake Tamsin\n\nLake Tamsin is'));
    const lines = w.text.split('\n');
    w.paragraphs.forEach((p, i) => {
      const expected = articles[1]!.paragraphs[i]!.replace(/\n/g, ' ');
      assert.equal(w.text.slice(p.charStart, p.charEnd), expected);
      assert.equal(lines[p.startLine - 1], expected);
      assert.equal(p.endLine, p.startLine);
    });
  });

  it('takes FinanceBench questions from the PDFs that carry the most, and only the PDFs they need', () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-realdocs-'));
    try {
      writeData(dir);
      const pick = pickFinancebench(join(dir, 'fb', 'questions.jsonl'), 2, 1);
      assert.deepEqual(pick.questions.map((q) => q.id).sort(), ['fb-capex', 'fb-commit']);
      assert.deepEqual(pick.pdfs.map((p) => p.rel), ['financebench/northwind.pdf']);
      const three = pickFinancebench(join(dir, 'fb', 'questions.jsonl'), 3, 1);
      assert.deepEqual(three.pdfs.map((p) => p.rel).sort(), ['financebench/northwind.pdf', 'financebench/short.pdf']);
      // Found by their fields, not their names.
      const found = findRealDocsInputs(dir);
      assert.equal(found.financebench, join(dir, 'fb', 'questions.jsonl'));
      assert.equal(found.squad, join(dir, 'sq', 'questions.jsonl'));
      const sel = buildRealDocsCorpus(join(dir, 'corpus'), { financebench: found.financebench!, squad: found.squad!, docs: join(dir, 'docs'), sampling: { seed: 3, squadArticles: 3, squadQuestions: 2, financebenchQuestions: 2 } });
      assert.deepEqual(readdirSync(join(dir, 'corpus')).sort(), ['canopy-docs', 'financebench', 'squad']);
      assert.deepEqual(sel.files.filter((f) => f.kind === 'doc').map((f) => f.path), ['canopy-docs/guide.md', 'canopy-docs/sub/more.md']);
      assert.ok(existsSync(join(dir, 'corpus', 'squad', 'Harbour_Bridge_Velm.md')));
      for (const q of sel.questions.filter((x) => x.gold.kind === 'paragraph')) {
        const g = q.gold as Extract<RealDocsQuestion['gold'], { kind: 'paragraph' }>;
        const text = readFileSync(join(dir, 'corpus', g.file), 'utf8').slice(g.charStart, g.charEnd);
        assert.ok(q.answers.some((a) => text.includes(a)), `${q.id}: the gold range holds the answer`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts a region on the gold only when at least half of it lies there', () => {
    const para = { kind: 'paragraph' as const, file: 'a.md', paraIdx: 1, charStart: 100, charEnd: 200, startLine: 5, endLine: 5 };
    assert.equal(onGold({ file: 'a.md', charStart: 120, charEnd: 160 }, para), true);
    assert.equal(onGold({ file: 'a.md', charStart: 0, charEnd: 400 }, para), false, 'a whole section that merely contains the paragraph');
    assert.equal(onGold({ file: 'b.md', charStart: 120, charEnd: 160 }, para), false);
    assert.equal(onGold({ file: 'a.md', charStart: 200, charEnd: 260 }, para), false);
    const pages = { kind: 'pages' as const, file: 'f.pdf', pages: [6] };
    assert.equal(onGold({ file: 'f.pdf', page: 6 }, pages), true);
    assert.equal(onGold({ file: 'f.pdf', page: 5, pageEnd: 6 }, pages), true);
    assert.equal(onGold({ file: 'f.pdf', page: 0, pageEnd: 9 }, pages), false, 'a page group spanning the document');
    assert.equal(onGold({ file: 'f.pdf', page: 7 }, pages), false);
  });

  it('checks answer strings as the SQuAD script normalises them, and FinanceBench key facts', () => {
    assert.equal(answerHasGoldString(['Mount Asher'], 'It stands on mount Asher, at 2,100 metres. [1]'), true);
    assert.equal(answerHasGoldString(['the river Oru'], 'Fed by the Oru river [1]'), false);
    assert.equal(answerHasGoldString(['1'], 'See [1]'), false, 'citation markers are not answers');
    // Punctuation inside a quoted sentence separates words: hyphens, possessives, dashes, parentheses.
    assert.equal(answerHasGoldString(['Six'], 'Six-time Grammy winner Lady Gaga sang. [1]'), true);
    assert.equal(answerHasGoldString(['Thoreau'], "Thoreau's essay was not published. [1]"), true);
    assert.equal(answerHasGoldString(['1679'], 'John Mayow (1641–1679) refined this work. [1]'), true);
    assert.equal(answerHasGoldString(['mass of the system'], 'divided by the mass of the system.:19-1 [1]'), true);
    assert.equal(answerHasGoldString(['Six'], 'Sixteen players were named. [1]'), false, 'still whole words');
    assert.equal(answerHasGoldString(['Thoreau'], 'Thoreauvian ideas spread. [1]'), false);
    assert.deepEqual(
      factNumbers('From 36.8% in FY 2021 to 34.6% in FY2022, $1,577.00 and Q2 of 2023').map((n) => n.text),
      ['36.8%', '34.6%', '$1,577.00'],
    );
    assert.equal(keyFactCheck('$1577.00', 'What was capex in FY2018?', 'Purchases of PP&E (1,577) [1]').ok, true);
    assert.equal(keyFactCheck('$1577.00', 'What was capex?', 'Purchases of PP&E 1,373').ok, false);
    assert.equal(keyFactCheck('~90%', 'Which region?', 'Las Vegas 89.6% of EBITDAR').ok, true);
    assert.equal(keyFactCheck('63.86', 'DPO?', 'DPO was 63.9').ok, false, 'a less precise number does not state the fact');
    const terms = keyFactCheck('Developed Rest of the World', 'Which region had the biggest drop?', 'Revenues in Developed Rest of World fell 12%');
    assert.equal(terms.kind, 'terms');
    assert.equal(terms.ok, true);
    assert.equal(keyFactCheck('Yes, it is spinning off Upjohn.', 'Is Pfizer spinning off any segments?', 'Pfizer is spinning off a unit.').ok, false, 'question words are not key facts');
  });
});

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('real-document benchmark: one run end to end', () => {
  let dir: string;
  let report: RealDocsReport;
  const logs: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-realdocs-run-'));
    writeData(dir);
    report = await runRealDocsBench({
      work: join(dir, 'work'),
      financebench: join(dir, 'fb', 'questions.jsonl'),
      squad: join(dir, 'sq', 'questions.jsonl'),
      docs: join(dir, 'docs'),
      // One SQuAD question and the two PDF ones: each question costs a CLI process and a warm ask, and
      // the second SQuAD question was checked by nothing the first does not check (the corpus test
      // above samples both). Seed 1 samples s1, the question the scoring tests below look at.
      sampling: { seed: 1, squadArticles: 3, squadQuestions: 1, financebenchQuestions: 2 },
      cli: [process.execPath, join(repo, 'bin', 'canopy.js')],
      builtinModelDir: join(repo, 'models', 'use-lite'),
      packageRoot: repo,
      demo: false,
      // A CANOPY setting other than the default, for the CLI processes (as flags) and the warm asks alike.
      ask: { settings: { compressorGlimpse: 2 }, cliArgs: ['--glimpse', '2'] },
      command: 'test',
      log: (l) => logs.push(l),
    });
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('indexes the corpus once and times every file', () => {
    assert.equal(report.index.reused, false);
    assert.equal(report.index.summary?.files, 6, 'one PDF, three articles, two docs (the SVG is not copied)');
    assert.equal(report.index.summary?.errors.length, 0);
    const pdf = report.index.files.find((f) => f.file === 'financebench/northwind.pdf')!;
    assert.equal(pdf.kind, 'pdf');
    assert.equal(pdf.pages, 10);
    for (const f of report.index.files) assert.ok(f.seconds !== undefined && f.seconds > 0, `${f.file} has a time`);
    const sum = report.index.files.reduce((a, f) => a + f.seconds!, 0);
    assert.ok(sum <= report.index.seconds! + 0.05, 'per-file times fit inside the index process');
  });

  it('asks every question through the CLI process and the warm workspace', () => {
    assert.equal(report.questions.length, 3);
    for (const q of report.questions) {
      assert.equal(q.cli?.exitCode, 0, q.cli?.error);
      assert.ok(q.cli?.metrics && q.warm?.metrics, q.id);
      assert.equal(q.cli.metrics.unresolvedKept, 0);
      assert.ok(q.cli.ms > 0 && q.warm.ms > 0);
      assert.ok(q.warm.cpuMs! > 0, 'warm CPU time from process.cpuUsage');
      if (process.platform === 'linux') assert.ok(q.cli.cpuMs! > 0 && q.cli.cpuMs! < q.cli.ms * 16, 'CLI CPU time from /proc (children)');
    }
    assert.ok(report.warmup && report.warmup.ms > 0);
  });

  it('scores a SQuAD question by its gold paragraph in the written article', () => {
    const q = report.questions.find((x) => x.id === 's1')!;
    const m = q.cli!.metrics!;
    // The only paragraph about the observatory's mountain is in a six-file corpus: it is kept.
    assert.equal(m.goldInEvidence, true);
    assert.equal(m.goldInEvidenceRound1, true);
    // The other flags agree with the printed answer and the citations' own lines (the paragraph is line 3).
    assert.equal(m.answerHasGold, /mount asher/i.test(m.answer), m.answer);
    assert.equal(m.citedAnyGold, m.citations.some((c) => c.file === 'squad/Corven_Observatory.md' && c.startLine === 3));
    assert.equal(m.cited1Gold, m.citations.some((c) => c.marker === 1 && c.file === 'squad/Corven_Observatory.md' && c.startLine === 3));
  });

  it('scores the long PDF questions by their 0-based gold pages', () => {
    for (const id of ['fb-capex', 'fb-commit']) {
      const q = report.questions.find((x) => x.id === id)!;
      const page = (q.gold as { pages: number[] }).pages[0]!;
      const m = q.cli!.metrics!;
      // One figure per page in a ten-page report: the gold page is kept, and the answer quoting it cites it.
      assert.equal(m.goldInEvidence, true, id);
      assert.equal(m.citedAnyGold, m.citations.some((c) => c.page === page && (c.pageEnd ?? page) === page), id);
      assert.equal(m.cited1Gold, m.citations.some((c) => c.marker === 1 && c.page === page), id);
      assert.equal(m.keyFacts?.kind, 'numbers');
    }
    const capex = report.questions.find((x) => x.id === 'fb-capex')!.cli!.metrics!;
    assert.equal(capex.answerHasGold, /1,577/.test(capex.answer), capex.answer);
  });

  it('re-scores a saved trace against a wrong gold as a miss', async () => {
    const tracesDir = join(report.corpus.index, 'traces');
    const traces = readdirSync(tracesDir)
      .filter((n) => !n.startsWith('.'))
      .map((n) => savedTrace(join(tracesDir, n)));
    const t = traces.find((x) => x.question === squadQuestions[0]!.question)!;
    const wrong: RealDocsQuestion = { id: 's1', source: 'squad', question: t.question, answers: ['Mount Pell'], gold: { kind: 'paragraph', file: 'squad/Lake_Tamsin.md', paraIdx: 0, charStart: 0, charEnd: 5, startLine: 1, endLine: 1 } };
    const m = scoreAnswer(t, wrong, () => undefined);
    assert.equal(m.answerHasGold, false);
    assert.equal(m.citedAnyGold, false);
    assert.equal(m.goldInEvidence, false);
    assert.ok(m.unresolvedKept > 0, 'kept regions the lookup cannot resolve are counted');
  });

  it("judges each critic verdict against the gold kept up to its round", () => {
    // A three-round trace: the gold leaf is kept only in round 2; the critic says "insufficient",
    // "insufficient", "sufficient" — one false negative (round 2) and one true positive (round 3).
    const gold: RealDocsQuestion['gold'] = { kind: 'paragraph', file: 'a.md', paraIdx: 0, charStart: 100, charEnd: 200, startLine: 3, endLine: 3 };
    const leaf = (id: string, charStart: number, charEnd: number) => ({ id, anchor: { file: 'a.md', charStart, charEnd }, children: [] });
    const nodes = new Map([leaf('off', 0, 50), leaf('on', 110, 190)].map((n) => [n.id, n]));
    const round = (n: number, kept: string, sufficient: boolean) => ({
      round: n,
      retrieved: [{ repeated: false, keptNodeIds: [kept] }],
      critic: { sufficient, missing: sufficient ? [] : ['x'], source: 'rule' },
    });
    const t = {
      rounds: [round(1, 'off', false), round(2, 'on', false), round(3, 'off', true)],
      stop: { reason: 'critic-sufficient' },
      totals: { items: 3, evidenceTokens: 10 },
      readerInput: { tokens: 10, truncated: false },
      ms: 1,
      answer: { text: 'x', citations: [] },
    } as unknown as AskTrace;
    const m = scoreAnswer(t, { id: 'c', source: 'squad', question: 'q?', answers: ['x'], gold }, (id) => nodes.get(id) as never);
    assert.deepEqual(
      m.criticVerdicts.map((v) => [v.round, v.sufficient, v.goldKept]),
      [
        [1, false, false],
        [2, false, true],
        [3, true, true],
      ],
    );
    const rows = [{ id: 'c', source: 'squad', question: 'q?', answers: ['x'], gold, warm: { ms: 1, metrics: m } }] as RealDocsReport['questions'];
    assert.deepEqual(summarise(rows).critic, { verdicts: 3, tp: 1, fp: 0, fn: 1, tn: 1 });
    assert.equal(criticText(summarise(rows).critic), 'precision 100% (1/1), recall 50% (1/2); 3 verdicts');
  });

  it('summarises per source from the rows', () => {
    const { all, squad, financebench } = report.summary;
    assert.equal(all.questions, 3);
    assert.equal(squad.questions, 1);
    assert.equal(financebench.questions, 2);
    const rows = report.questions.map((q) => q.cli!.metrics!);
    assert.equal(all.answerHasGold, rows.filter((m) => m.answerHasGold).length);
    assert.equal(all.goldInEvidence, rows.filter((m) => m.goldInEvidence).length);
    assert.equal(all.meanRounds, rows.reduce((a, m) => a + m.rounds, 0) / 3);
    assert.ok(all.cli && all.cli.p50 <= all.cli.p95 && all.cli.p95 <= all.cli.max);
    assert.ok(all.warmCpu && all.warmCpu.max > 0);
    assert.equal(all.warmSameAsCli?.of, 3);
    const verdicts = rows.flatMap((m) => m.criticVerdicts);
    assert.equal(all.critic.verdicts, verdicts.length);
    assert.equal(all.critic.tp + all.critic.fp, verdicts.filter((v) => v.sufficient).length);
  });

  it('runs every ask, CLI process and warm, with the CANOPY settings it was given', () => {
    const dirOf = join(dir, 'work', 'index', 'traces');
    const traces = readdirSync(dirOf).filter((f) => /\.json(\.gz)?$/.test(f) && !f.startsWith('.'));
    // Three questions through the CLI, the warm-up and three warm asks.
    assert.equal(traces.length, 7, traces.join(', '));
    for (const f of traces) {
      const t = savedTrace(join(dirOf, f));
      assert.deepEqual(t.settings.compressor, { ...canopyCompressor(defaultSettings), glimpse: 2 }, f);
    }
  });

  it('renders the table into its own section and compares two reports', async () => {
    const md = renderRealDocsMarkdown(report);
    assert.match(md, /^## Real documents \(issue 16\)/);
    assert.match(md, /\| gold paragraph \/ page in the kept evidence \| \d\/3 \|/);
    assert.match(md, /\| northwind\.pdf \| 10 \|/);
    // The settings the asks ran with are recorded and printed (the defaults, but the glimpse).
    assert.equal(report.settings?.topK, 10);
    assert.equal(report.settings?.compressor?.name === 'canopy' && report.settings.compressor.glimpse, 2);
    assert.match(md, /, CANOPY with rank gate 0.3 \(at least 4 items\), items ≤ 600 characters kept whole, glimpse 2, node score/);
    assert.match(md, new RegExp(`settings \\(k = 10, up to ${report.settings!.maxRounds} rounds, rule critic, extractive reader, input capped at [\\d,]+ tokens, MAGE controller for PDFs of ${report.settings!.controllerMinPages}\\+ pages`));
    const doc = '# Benchmarks\n\nIntro.\n\n## Encoder\n\nx\n';
    const once = replaceRealDocsSection(doc, md);
    assert.ok(once.indexOf('## Real documents') < once.indexOf('## Encoder'));
    assert.equal(replaceRealDocsSection(once, md), once);

    const worse: RealDocsReport = JSON.parse(JSON.stringify(report));
    const s1 = worse.questions.find((q) => q.id === 's1')!;
    s1.cli!.metrics!.answerHasGold = !s1.cli!.metrics!.answerHasGold;
    const cmp = compareRealDocs(worse, report);
    assert.match(cmp, /squad s1 "On which mountain[^"]*": gold answer (yes|no) → (yes|no)/);
    assert.match(cmp, /\| all: rounds, mean \| [\d.]+ \| [\d.]+ \|/);

    // The command: an existing report rendered and compared without running anything.
    const file = join(dir, 'report.json');
    writeFileSync(file, JSON.stringify(report));
    const io = capture();
    assert.equal(await main(['bench', 'realdocs', '--from', file, '--compare', file], io), 0);
    assert.match(io.stdout.join('\n'), /## Real documents \(issue 16\)[\s\S]*\| metric \| before \| after \|/);
    const rows = capture();
    assert.equal(await main(['bench', 'realdocs', '--from', file, '--per-question'], rows), 0);
    const s1row = rows.stdout.join('\n').split('\n').find((l) => l.startsWith('| squad s1 |'))!;
    const m1 = report.questions.find((q) => q.id === 's1')!.cli!.metrics!;
    assert.ok(s1row.includes('squad/Corven_Observatory.md:3'), s1row);
    assert.ok(s1row.includes(m1.answerHasGold ? 'answer ✓' : 'answer ✗'), s1row);
    assert.ok(s1row.includes(`${m1.rounds}, ${m1.stop}:`), s1row);
    // Citation [1]'s region kind comes from the index's documents.
    if (m1.citations.length > 0) assert.ok(m1.citations.every((c) => c.kind !== undefined && c.text.length > 0));
    const bad = capture();
    assert.equal(await main(['bench', 'realdocs', '--from', join(dir, 'fb', 'questions.jsonl')], bad), 2);
    assert.match(bad.stderr.join('\n'), /not a readable JSON report|not a real-document benchmark report/);
  });

  it('reads the demo folder and question from package.json', () => {
    const d = demoFromPackage(repo);
    assert.ok(d.includes.includes('docs/**'));
    assert.match(d.question, /\?$/);
  });
});
