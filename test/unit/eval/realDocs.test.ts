// The real-document benchmark (issue 16): the corpus it writes, the scoring rules, and one run
// end to end on a tiny corpus built here (a ten-page PDF report, three small articles) in the
// FinanceBench and SQuAD schemas — through the built CLI and a warm in-process workspace. And
// its two sources of issue 32 on fixtures of their own: NQ-open passages written one file each
// with the flat BM25 baseline, and a documentation folder copied as it is.
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
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { demoFromPackage, equalTokens, runRealDocsBench, type RealDocsReport, type RealDocsRow } from '../../../src/eval/bench/realDocs';
import { answerWithinBudget, bm25Curve, bm25Ranker, firstAnswerRank, shareAtTokens, type RankedPassages } from '../../../src/eval/bench/realDocsBm25';
import { articleMarkdown, buildRealDocsCorpus, findRealDocsInputs, pickFinancebench, type RealDocsQuestion } from '../../../src/eval/bench/realDocsCorpus';
import { readFolderSource, writeFolderCorpus } from '../../../src/eval/bench/realDocsFolder';
import { folderDumpRecord, leafHoldsAnswer } from '../../../src/eval/bench/realDocsDump';
import { deserializeRegion } from '../../../src/eval/judgeDump';
import type { RegionNode } from '../../../src/contracts/region';
import { questionRows, readDumps } from '../../../tools/judge/readerData';
import { passageMarkdown, readNqSource, seededSubset, writeNqCorpus } from '../../../src/eval/bench/realDocsNq';
import { compareRealDocs, criticText, renderFolderMarkdown, renderNqMarkdown, renderRealDocsMarkdown, renderRealDocsQuestions, replaceRealDocsSection, summarise } from '../../../src/eval/bench/realDocsReport';
import { answerHasGoldString, answerOutcome, factNumbers, keyFactCheck, onGold, scoreAnswer, type AnswerMetrics } from '../../../src/eval/bench/realDocsScore';
import { longReportPdf } from '../../helpers/longReportPdf';

/** A saved trace file: gzip (what the TraceStore writes) or plain JSON. */
function savedTrace(file: string): AskTrace {
  const bytes = readFileSync(file);
  return JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as AskTrace;
}

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

// NQ-open's shape: passages `{_id, title, text}` (two share a title) and questions as search-engine
// queries. The file names are not the data's: the benchmark finds them by their fields.
const nqPassages = [
  { _id: 'w1', title: 'Corven Observatory', text: 'The Corven Observatory opened in 1911. It stands on Mount Asher at 2,100 metres.' },
  { _id: 'w2', title: 'Lake Tamsin', text: 'Lake Tamsin is a glacial lake. It is fed by the river Oru, which rises on the Pell glacier.' },
  { _id: 'w3', title: 'Lake Tamsin', text: 'Fishing has been banned on the lake since 1987,\nwhen the trout stock collapsed.' },
  { _id: 'w4', title: 'Harbour bridge of Velm', text: 'The harbour bridge of Velm was built from granite between 1840 and 1846.' },
];
const nqQueries = [
  { _id: 'n1', text: 'which river feeds lake tamsin', answers: ['Oru', 'the river Oru'], gold_passage_id: 'w2' },
  { _id: 'n2', text: 'since when is fishing banned on lake tamsin', answers: ['1987'], gold_passage_id: 'w3' },
  { _id: 'n3', text: 'what is the harbour bridge of velm built from', answers: ['granite'], gold_passage_id: 'w4' },
  { _id: 'n4', text: 'on which mountain does the corven observatory stand', answers: ['Mount Asher'], gold_passage_id: 'w1' },
];

// A documentation folder: nested Markdown, a file Canopy does not read and a hidden folder (both
// left out), and questions `{question, answers, file}` beside it.
const folderFiles: Record<string, string> = {
  'tool/README.md': '# Tool\n\nTool indexes a folder.\n\n## Cache\n\nTool keeps its cache in `~/.cache/tool/` and never writes elsewhere.\n',
  'tool/docs/flags.md': '# Flags\n\n## Watching\n\nPass `--watch` to re-index whenever a file changes.\n\n## Quiet\n\nPass `--quiet` to print nothing.\n',
  'tool/logo.bin': 'not a document',
  '.drafts/secret.md': '# Draft\n\nThe cache moves to /tmp.\n',
};
const folderQuestions = [
  { question: 'Which flag re-indexes whenever a file changes?', answers: ['--watch'], file: 'tool/docs/flags.md' },
  { question: 'Where does the tool keep its cache?', answers: ['~/.cache/tool/', 'the home cache folder'], file: 'tool/README.md' },
];

function writeNqAndFolder(dir: string): void {
  mkdirSync(join(dir, 'open'), { recursive: true });
  writeFileSync(join(dir, 'open', 'wiki.jsonl'), jsonl(nqPassages));
  writeFileSync(join(dir, 'open', 'asked.jsonl'), jsonl(nqQueries));
  for (const [rel, text] of Object.entries(folderFiles)) {
    mkdirSync(join(dir, 'dev', 'site', rel, '..'), { recursive: true });
    writeFileSync(join(dir, 'dev', 'site', rel), text);
  }
  writeFileSync(join(dir, 'dev', 'qs.jsonl'), jsonl(folderQuestions));
}

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
  writeNqAndFolder(dir);
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
      assert.equal(found.nq, join(dir, 'open', 'asked.jsonl'), 'NQ questions by their fields, not the passages beside them');
      assert.equal(found.docsFolder, join(dir, 'dev', 'qs.jsonl'));
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

describe('real-document benchmark: NQ passages and a documentation folder (issue 32)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-realdocs-src-'));
    writeNqAndFolder(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every NQ passage as one Markdown file, its gold range on the passage', () => {
    const sel = readNqSource(join(dir, 'open', 'asked.jsonl'), { cliQuestions: 2, seed: 5 });
    assert.equal(sel.passagesFile, join(dir, 'open', 'wiki.jsonl'), 'the passages beside the questions, found by their fields');
    assert.deepEqual(
      sel.passages.map((p) => p.file),
      ['nq/Corven_Observatory.md', 'nq/Lake_Tamsin.md', 'nq/Lake_Tamsin-2.md', 'nq/Harbour_bridge_of_Velm.md'],
      'a repeated title gets a file of its own',
    );
    writeNqCorpus(join(dir, 'nq-corpus'), sel);
    assert.deepEqual(readdirSync(join(dir, 'nq-corpus', 'nq')).sort(), ['Corven_Observatory.md', 'Harbour_bridge_of_Velm.md', 'Lake_Tamsin-2.md', 'Lake_Tamsin.md']);
    const fishing = readFileSync(join(dir, 'nq-corpus', 'nq', 'Lake_Tamsin-2.md'), 'utf8');
    assert.equal(fishing, '# Lake Tamsin\n\nFishing has been banned on the lake since 1987, when the trout stock collapsed.\n');
    // Every question is asked (no --nq-questions), over every passage; each gold range is its passage's text.
    assert.deepEqual(sel.questions.map((q) => q.id), ['n1', 'n2', 'n3', 'n4']);
    for (const q of sel.questions) {
      assert.equal(q.source, 'nq');
      assert.equal(q.gold.kind, 'paragraph');
      const g = q.gold as Extract<RealDocsQuestion['gold'], { kind: 'paragraph' }>;
      const text = readFileSync(join(dir, 'nq-corpus', g.file), 'utf8');
      const passage = nqPassages.find((p) => p._id === nqQueries.find((x) => x._id === q.id)!.gold_passage_id)!;
      assert.equal(text.slice(g.charStart, g.charEnd), passage.text.replace(/\n/g, ' '));
      assert.equal(text.split('\n')[g.startLine - 1], passage.text.replace(/\n/g, ' '));
      assert.equal(q.goldHoldsAnswer, true);
    }
    assert.equal(sel.cliIds.length, 2);
    assert.ok(sel.cliIds.every((id) => sel.questions.some((q) => q.id === id)));
    assert.deepEqual(readNqSource(join(dir, 'open', 'asked.jsonl'), { cliQuestions: 2, seed: 5 }).cliIds, sel.cliIds, 'seeded');
    // A sample of the questions: seeded, in file order; the corpus still holds every passage.
    const two = readNqSource(join(dir, 'open', 'asked.jsonl'), { questions: 2, cliQuestions: 5, seed: 5 });
    assert.equal(two.questions.length, 2);
    assert.equal(two.available, 4);
    assert.equal(two.passages.length, 4);
    assert.deepEqual(two.cliIds, two.questions.map((q) => q.id), 'no more CLI asks than asked questions');
    assert.deepEqual(seededSubset(['a', 'b', 'c', 'd', 'e'], 3, 9), seededSubset(['a', 'b', 'c', 'd', 'e'], 3, 9));
    const picked = seededSubset(['a', 'b', 'c', 'd', 'e'], 3, 9);
    assert.deepEqual(picked, [...picked].sort(), 'kept in the original order');
    assert.deepEqual(passageMarkdown('A  title', 'x').markdown, '# A title\n\nx\n');
  });

  it('names the file and the reason for bad NQ input', () => {
    const bad = join(dir, 'bad-nq');
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, 'passages.jsonl'), jsonl(nqPassages.slice(0, 2)));
    writeFileSync(join(bad, 'q.jsonl'), jsonl([nqQueries[0], nqQueries[1]]));
    assert.throws(() => readNqSource(join(bad, 'q.jsonl'), { cliQuestions: 0, seed: 1 }), (e: Error) => e.message.includes(join(bad, 'q.jsonl')) && /holds every gold_passage_id/.test(e.message));
    writeFileSync(join(bad, 'q.jsonl'), jsonl([{ ...nqQueries[0], answers: [] }]));
    assert.throws(() => readNqSource(join(bad, 'q.jsonl'), { cliQuestions: 0, seed: 1 }), (e: Error) => e.message.startsWith(`${join(bad, 'q.jsonl')}:1:`) && /"answers" is empty/.test(e.message));
    rmSync(join(bad, 'passages.jsonl'));
    writeFileSync(join(bad, 'q.jsonl'), jsonl([nqQueries[0]]));
    assert.throws(() => readNqSource(join(bad, 'q.jsonl'), { cliQuestions: 0, seed: 1 }), /no passages file beside it/);
  });

  it('copies a documentation folder as it is, the files Canopy reads only', () => {
    const sel = readFolderSource(join(dir, 'dev', 'qs.jsonl'));
    assert.equal(sel.folder, join(dir, 'dev', 'site'), 'the folder beside the questions that holds every file');
    assert.deepEqual(sel.files.map((f) => f.path), ['tool/README.md', 'tool/docs/flags.md']);
    writeFolderCorpus(join(dir, 'folder-corpus'), sel);
    assert.equal(readFileSync(join(dir, 'folder-corpus', 'tool', 'docs', 'flags.md'), 'utf8'), folderFiles['tool/docs/flags.md']);
    assert.equal(existsSync(join(dir, 'folder-corpus', 'tool', 'logo.bin')), false);
    assert.equal(existsSync(join(dir, 'folder-corpus', '.drafts')), false);
    assert.deepEqual(
      sel.questions.map((q) => [q.source, q.gold, q.goldHoldsAnswer]),
      [
        ['docs', { kind: 'file', file: 'tool/docs/flags.md' }, true],
        ['docs', { kind: 'file', file: 'tool/README.md' }, true],
      ],
    );
  });

  it('names the file and the reason for bad documentation-folder input', () => {
    const bad = join(dir, 'bad-folder');
    mkdirSync(join(bad, 'site'), { recursive: true });
    writeFileSync(join(bad, 'site', 'a.md'), '# A\n\nText.\n');
    const q = join(bad, 'q.jsonl');
    writeFileSync(q, jsonl([{ question: 'Where?', answers: ['here'], file: 'missing.md' }]));
    assert.throws(() => readFolderSource(q), (e: Error) => e.message.startsWith(q) && /no folder beside it holds every question's "file"/.test(e.message));
    writeFileSync(q, jsonl([{ question: 'Where?', answers: ['here'], file: '../a.md' }]));
    assert.throws(() => readFolderSource(q), (e: Error) => e.message.startsWith(`${q}:1:`) && /must be a path inside the documentation folder/.test(e.message));
    writeFileSync(q, jsonl([{ question: 'Where?', answers: [], file: 'a.md' }]));
    assert.throws(() => readFolderSource(q), (e: Error) => e.message.startsWith(`${q}:1:`) && /"answers" is empty/.test(e.message));
    writeFileSync(join(bad, 'site', 'data.bin'), 'x');
    writeFileSync(q, jsonl([{ question: 'Where?', answers: ['x'], file: 'data.bin' }]));
    assert.throws(() => readFolderSource(q), /"data\.bin" is not a file Canopy reads/);
  });

  it('refuses another checkout\'s CLI beside the warm asks, which run this build', async () => {
    const io = capture();
    assert.equal(await main(['bench', 'realdocs', '--data', dir, '--cli-of', dir], io), 2);
    assert.match(io.stderr.join('\n'), /--cli-of needs --no-warm/);
    const bare = capture();
    assert.equal(await main(['bench', 'realdocs', '--data', dir, '--cli-of', dir, '--no-warm'], bare), 2);
    assert.match(bare.stderr.join('\n'), /run "npm run build" in .* first/);
  });

  it('ranks the passages with BM25 and finds the answer strings in them', () => {
    const sel = readNqSource(join(dir, 'open', 'asked.jsonl'), { cliQuestions: 0, seed: 1 });
    const counter = bpeTokenCounter();
    const ranker = bm25Ranker(
      sel.passages.map((p) => ({ id: p.file, title: p.title, text: p.markdown.slice(p.charStart, p.charEnd), written: p.markdown })),
      3,
      counter,
    );
    const r = ranker.rank('which river feeds lake tamsin', ['Oru']);
    assert.equal(r.ids[0], 'nq/Lake_Tamsin.md');
    assert.ok(r.ids.length <= 3);
    assert.deepEqual(r.hasAnswer, r.ids.map((id) => id === 'nq/Lake_Tamsin.md'));
    assert.equal(r.tokens[0], counter.count(sel.passages[1]!.markdown));
    assert.equal(firstAnswerRank(r), 1);
    assert.equal(firstAnswerRank(ranker.rank('which river feeds lake tamsin', ['Danube'])), undefined);
  });

  it('draws the top-k curve and reads it at equal tokens', () => {
    const lists: RankedPassages[] = [
      { ids: ['a', 'b', 'c'], tokens: [100, 100, 100], hasAnswer: [false, true, false] },
      { ids: ['d', 'e', 'f'], tokens: [50, 50, 50], hasAnswer: [true, false, false] },
      { ids: ['g', 'h'], tokens: [80, 80], hasAnswer: [false, false] },
    ];
    const curve = bm25Curve(lists, 3);
    assert.deepEqual(
      curve.map((p) => [p.k, p.withAnswer, Math.round(p.meanTokens * 100) / 100]),
      [
        [1, 1, 76.67],
        [2, 2, 153.33],
        [3, 2, 203.33],
      ],
      'a list shorter than k counts all it has',
    );
    const close = (x: number | undefined, y: number) => assert.ok(x !== undefined && Math.abs(x - y) < 1e-9, `${x} ≈ ${y}`);
    close(shareAtTokens(curve, 230 / 6), 1 / 6); // half-way to k = 1, from (0, 0)
    close(shareAtTokens(curve, 230 / 3), 1 / 3);
    close(shareAtTokens(curve, 115), 0.5); // half-way between k = 1 and k = 2
    close(shareAtTokens(curve, 180), 2 / 3);
    assert.equal(shareAtTokens(curve, 204), undefined, 'past the curve: no reading');
    // The top passages that fit whole in a budget.
    assert.equal(answerWithinBudget(lists[0]!, 199), false);
    assert.equal(answerWithinBudget(lists[0]!, 200), true);
    assert.equal(answerWithinBudget(lists[1]!, 49), false);
    assert.equal(answerWithinBudget(lists[2]!, 1000), false);
    // Against the ask: its answer-in-evidence share at its mean tokens beside the curve there.
    const row = (id: string, tokens: number, inEvidence: boolean, within: boolean): RealDocsRow => ({
      id,
      source: 'nq',
      question: id,
      answers: ['x'],
      gold: { kind: 'file', file: 'f.md' },
      bm25: { top1: 'a', withinAskTokens: within },
      warm: { ms: 1, metrics: { evidenceTokens: tokens, answerInEvidence: inEvidence } as AnswerMetrics },
    });
    const e = equalTokens([row('1', 100, true, true), row('2', 130, true, false), row('3', 115, false, false), { ...row('4', 0, false, false), warm: { ms: 1, error: 'x' } }], curve);
    assert.equal(e.questions, 3, 'a failed ask is not scored');
    assert.equal(e.askTokens, 115);
    close(e.askShare, 2 / 3);
    close(e.bm25Share, 0.5);
    close(e.bm25OwnTokensShare, 1 / 3);
  });

  it('tells where an answer was lost', () => {
    const m = (answerHasGold: boolean, answerInEvidence: boolean | undefined, goldFileRetrieved: boolean) => ({ answerHasGold, answerInEvidence, goldFileRetrieved }) as AnswerMetrics;
    assert.equal(answerOutcome(m(true, true, true)), 'answered');
    assert.equal(answerOutcome(m(false, true, true)), 'in evidence, not quoted');
    assert.equal(answerOutcome(m(false, false, true), false), 'gold lacks the answer string');
    assert.equal(answerOutcome(m(false, false, true), true), 'gold file retrieved, answer not kept');
    assert.equal(answerOutcome(m(false, false, false)), 'gold file not retrieved');
    assert.equal(answerOutcome(m(false, undefined, true)), undefined, 'FinanceBench key facts are not strings to find');
  });

  it('scores a documentation question by its file, and the answer string in the kept text', () => {
    const gold: RealDocsQuestion['gold'] = { kind: 'file', file: 'tool/docs/flags.md' };
    const leaf = (id: string, file: string, text: string) => ({ id, kind: 'sentence', text, anchor: { file, charStart: 0, charEnd: text.length, startLine: 5 }, children: [] });
    const nodes = new Map([leaf('w', 'tool/docs/flags.md', 'Pass `--watch` to re-index whenever a file changes.'), leaf('q', 'tool/docs/flags.md', 'Pass `--quiet` to print nothing.'), leaf('r', 'tool/README.md', 'Tool indexes a folder.')].map((n) => [n.id, n]));
    const trace = (kept: string[], cited: string, files: string[]) =>
      ({
        rounds: [{ round: 1, retrieved: files.map((file) => ({ file, repeated: false, keptNodeIds: kept.filter((k) => nodes.get(k)!.anchor.file === file) })) }],
        stop: { reason: 'critic-sufficient' },
        totals: { items: files.length, evidenceTokens: 20 },
        readerInput: { tokens: 20, truncated: false },
        ms: 1,
        answer: { text: `${nodes.get(cited)!.text} [1]`, citations: [{ marker: 1, nodeId: cited, anchor: nodes.get(cited)!.anchor, text: nodes.get(cited)!.text }] },
      }) as unknown as AskTrace;
    const q: RealDocsQuestion = { id: 'd1', source: 'docs', question: folderQuestions[0]!.question, answers: ['--watch'], gold };
    const lookup = (id: string) => nodes.get(id) as never;
    const quoted = scoreAnswer(trace(['w', 'q'], 'w', ['tool/docs/flags.md']), q, lookup);
    assert.deepEqual([quoted.answerHasGold, quoted.answerInEvidence, quoted.citedAnyGold, quoted.cited1Gold, quoted.goldInEvidence, quoted.goldFileRetrieved], [true, true, true, true, true, true]);
    const other = scoreAnswer(trace(['w', 'q'], 'q', ['tool/docs/flags.md']), q, lookup);
    assert.deepEqual([other.answerHasGold, other.answerInEvidence, other.citedAnyGold], [false, true, true], 'the right file, another sentence quoted');
    assert.equal(answerOutcome(other), 'in evidence, not quoted');
    const elsewhere = scoreAnswer(trace(['r'], 'r', ['tool/README.md']), q, lookup);
    assert.deepEqual([elsewhere.answerInEvidence, elsewhere.citedAnyGold, elsewhere.goldInEvidence, elsewhere.goldFileRetrieved], [false, false, false, false]);
    assert.equal(answerOutcome(elsewhere, true), 'gold file not retrieved');
    const fb = scoreAnswer(trace(['w'], 'w', ['tool/docs/flags.md']), { ...q, source: 'financebench', answers: ['$5'] }, lookup);
    assert.equal(fb.answerInEvidence, undefined, 'FinanceBench is scored by key facts, not strings in the evidence');
  });

  it('takes as gold of a dumped folder question only the leaves of its own file that hold an answer string', () => {
    const sentence = (id: string, file: string, text: string): RegionNode => ({ id, kind: 'sentence', modality: 'text', text, anchor: { file, charStart: 0, charEnd: text.length }, children: [] });
    const section = (id: string, file: string, kids: RegionNode[]): RegionNode => ({ id, kind: 'section', modality: 'text', text: kids.map((k) => k.text).join(' '), anchor: { file, charStart: 0, charEnd: 1 }, children: kids });
    const region = (file: string, node: RegionNode) => ({ itemId: `${file}#0`, itemTitle: file, file, node, score: 0.5, leafScores: new Map([[node.id, 0.5]]) });
    const flags = section('f/0', 'tool/docs/flags.md', [sentence('f/0.0', 'tool/docs/flags.md', 'Pass `--watch` to re-index whenever a file changes.'), sentence('f/0.1', 'tool/docs/flags.md', 'Pass `--quiet` to print nothing.')]);
    const readme = sentence('r/0', 'tool/README.md', 'The `--watch` flag is described in the flags page.');
    const row: RealDocsRow = { id: 'line1', source: 'docs', question: 'Which flag re-indexes whenever a file changes?', answers: ['--watch'], gold: { kind: 'file', file: 'tool/docs/flags.md' } };
    const trace = { rounds: [{ round: 1, query: row.question, addedItemIds: ['a', 'b'] }], stop: { reason: 'critic-sufficient', round: 1 } } as unknown as AskTrace;
    const input = { text: '', tokens: 10, truncated: false, regions: [region('tool/README.md', readme), region('tool/docs/flags.md', flags)] };
    const rec = folderDumpRecord('docs', row, trace, input as never);
    assert.deepEqual(rec.gold, [{ leafIds: ['f/0.0'], mode: 'any' }], "the README's sentence names the flag too, but the question's file is the flags page");
    assert.equal(rec.regions.length, 2);
    assert.deepEqual(rec.rounds, [{ round: 1, query: row.question, added: ['a', 'b'] }]);
    const none = folderDumpRecord('docs', row, trace, { ...input, regions: [region('tool/README.md', readme)] } as never);
    assert.deepEqual(none.gold, [], "no leaf of the question's file kept: no gold (the labels fall back to the answer-bearing leaves)");
    assert.equal(leafHoldsAnswer(sentence('x', 'f', 'Pass --watchful to …'), ['--watch']), false, 'at word boundaries');
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
      // Issue 32's sources, each on its own corpus: one NQ question through the CLI, all four warm.
      nq: { queries: join(dir, 'open', 'asked.jsonl'), cliQuestions: 1 },
      docsFolder: join(dir, 'dev', 'qs.jsonl'),
      // The folder's warm asks as reader-model training data (tools/judge/collect.ts's documentation set).
      dumpJudge: { file: join(dir, 'judge', 'docs.jsonl'), dataset: 'docs' },
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
    // Files finish in a pipeline, small ones written together (a time of 0 when written in the same millisecond as the one before).
    for (const f of report.index.files) assert.ok(f.seconds !== undefined && f.seconds >= 0, `${f.file} has a time`);
    assert.ok(pdf.seconds! > 0, 'the PDF, written alone, has a time of its own');
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
    assert.match(md, /, CANOPY with rank gate 0.3 \(at least 4 items\), items ≤ 800 characters kept whole, glimpse 2, node score/);
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

  it('asks NQ over its own corpus of passages, warm for all and cold for the seeded few', () => {
    const nq = report.nq!;
    assert.equal(nq.corpus.files, 4);
    assert.equal(nq.index.summary?.files, 4, 'its own index: the passages only');
    assert.equal(nq.questions.length, 4);
    assert.equal(nq.questions.filter((q) => q.cli).length, 1);
    assert.deepEqual(nq.sampling, { seed: 1, questions: 4, of: 4, cliQuestions: 1 });
    for (const q of nq.questions) {
      const m = q.warm?.metrics;
      assert.ok(m, q.id);
      // Four passages and k = 10: every passage is retrieved, and so the answer's.
      assert.equal(m.goldFileRetrieved, true, q.id);
      assert.equal(m.answerHasGold, answerHasGoldString(q.answers, m.answer), q.id);
      assert.equal(q.goldHoldsAnswer, true);
      assert.ok(q.bm25 && q.bm25.withinAskTokens !== undefined);
    }
    assert.equal(nq.questions.find((q) => q.id === 'n1')!.bm25!.top1, 'nq/Lake_Tamsin.md');
    const s = nq.summary;
    assert.equal(s.scored, 4, 'quality from the warm asks of every question');
    assert.equal(s.answerHasGold, nq.questions.filter((q) => q.warm!.metrics!.answerHasGold).length);
    assert.equal(s.answerInEvidence, nq.questions.filter((q) => q.warm!.metrics!.answerInEvidence).length);
    assert.equal(Object.values(s.outcomes!).reduce((a, b) => a + b, 0), 4);
    assert.ok(s.cli && s.warm);
    assert.equal(s.warmSameAsCli?.of, 1);
    assert.equal(nq.bm25.depth, 4);
    assert.equal(nq.bm25.curve.length, 4);
    assert.equal(nq.bm25.curve[3]!.withAnswer, 4, 'all four passages hold every answer');
    const e = nq.bm25.atAskTokens;
    assert.equal(e.askTokens, nq.questions.reduce((a, q) => a + q.warm!.metrics!.evidenceTokens, 0) / 4);
    // The main sample is the same as without NQ: its corpus holds no passage.
    assert.ok(report.index.files.every((f) => !f.file.startsWith('nq/')));
  });

  it('asks the documentation folder on its own copy, cold and warm', () => {
    const d = report.docsFolder!;
    assert.equal(d.corpus.files, 2);
    assert.deepEqual(d.index.files.map((f) => f.file).sort(), ['tool/README.md', 'tool/docs/flags.md']);
    assert.equal(d.questions.length, 2);
    for (const q of d.questions) {
      assert.equal(q.cli?.exitCode, 0, q.cli?.error);
      const m = q.cli!.metrics!;
      assert.ok(q.warm?.metrics);
      assert.equal(m.citedAnyGold, m.citations.some((c) => c.file === q.gold.file), q.id);
      assert.equal(m.answerHasGold, answerHasGoldString(q.answers, m.answer), q.id);
    }
    assert.equal(d.summary.scored, 2);
    assert.equal(d.summary.answerHasGold, d.questions.filter((q) => q.cli!.metrics!.answerHasGold).length);
  });

  it("dumps the folder's warm asks as training data: gold leaves of the question's file that hold an answer string", () => {
    const records = readDumps(join(dir, 'judge'));
    assert.equal(records.length, 2, 'one record per folder question (and none for NQ or the main sample)');
    for (const r of records) {
      const q = report.docsFolder!.questions.find((x) => x.id === r.questionId)!;
      assert.equal(r.dataset, 'docs');
      assert.equal(r.question, q.question);
      assert.deepEqual(r.answers, q.answers);
      assert.ok(r.regions.length > 0 && r.rounds.length > 0);
      const regions = r.regions.map(deserializeRegion);
      const leaves = new Map<string, { file: string; node: RegionNode }>();
      const walk = (file: string, n: RegionNode) => (n.children.length === 0 ? leaves.set(n.id, { file, node: n }) : n.children.forEach((c) => walk(file, c)));
      for (const reg of regions) walk(reg.file, reg.node);
      // Each question's answer sits in one sentence of its file, which the folder's ask keeps.
      assert.equal(r.gold.length, 1, r.question);
      for (const id of r.gold[0]!.leafIds) {
        const leaf = leaves.get(id)!;
        assert.equal(leaf.file, q.gold.file);
        assert.ok(leafHoldsAnswer(leaf.node, q.answers), leaf.node.text);
      }
      // The reader model's training reads it back with the answering leaf as its positive.
      const rows = questionRows(r, 1);
      assert.ok(rows.answerable, r.question);
      for (const row of rows.rows.filter((x) => x.label === 1)) assert.ok(r.gold[0]!.leafIds.includes(row.leafId));
    }
  });

  it('renders a table for NQ and for the documentation folder, and compares them', () => {
    const md = renderRealDocsMarkdown(report);
    assert.ok(md.indexOf('## Real documents (issue 16)') < md.indexOf('### NQ development half'));
    const nqMd = renderNqMarkdown(report.nq!);
    assert.match(nqMd, /\| k \| 1 \| 2 \| 3 \| 4 \|/);
    const c = report.nq!.bm25.curve;
    assert.ok(nqMd.includes(`| answer string in the top k | ${c.map((p) => `${(100 * p.share).toFixed(1)}%`).join(' | ')} |`));
    const e = report.nq!.bm25.atAskTokens;
    assert.ok(nqMd.includes(`holds an answer string for ${(100 * e.askShare).toFixed(1)}% of the 4 questions`), nqMd);
    assert.match(nqMd, new RegExp(`\\| answer string in the printed answer \\(target ≥ 80%\\) \\| ${report.nq!.summary.answerHasGold}/4 `));
    const folderMd = renderFolderMarkdown(report.docsFolder!);
    const rows = folderMd.split('\n').filter((l) => /^\| \d \| /.test(l));
    assert.equal(rows.length, 2);
    assert.ok(rows[0]!.includes(folderQuestions[0]!.question) && rows[0]!.includes('tool/docs/flags.md'));
    const m0 = report.docsFolder!.questions[0]!.cli!.metrics!;
    assert.ok(rows[0]!.includes(`| ${m0.answerHasGold ? '✓' : '✗'} | ${m0.citedAnyGold ? '✓' : '✗'} | ${m0.answerInEvidence ? '✓' : '✗'} |`), rows[0]);
    const per = renderRealDocsQuestions(report);
    assert.match(per, /Documentation folder:[\s\S]*\| docs line1 \|[\s\S]*NQ \(warm asks[\s\S]*\| nq n1 \|/);
    const worse: RealDocsReport = JSON.parse(JSON.stringify(report));
    const n1 = worse.nq!.questions.find((q) => q.id === 'n1')!;
    n1.warm!.metrics!.answerHasGold = !n1.warm!.metrics!.answerHasGold;
    const cmp = compareRealDocs(worse, report);
    assert.match(cmp, /\| NQ: answer string in the printed answer \| /);
    assert.match(cmp, /\| documentation folder: answer string in the kept evidence \| /);
    assert.match(cmp, /- NQ n1 "which river feeds lake tamsin": answer string (yes|no) → (yes|no)/);
  });

  it('reads the demo folder and question from package.json', () => {
    const d = demoFromPackage(repo);
    assert.ok(d.includes.includes('docs/**'));
    assert.match(d.question, /\?$/);
  });
});
