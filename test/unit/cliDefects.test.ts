// The CLI defects a new user met on real documents (issue 16), one test each: warnings in the
// summary and --json, --verbose naming every file, each error printed once with its file named
// once, symlink loops, a missing --dir, no E_INTERNAL for user mistakes, kept tokens never above
// the item's, junk PDF titles, 1-based page numbers and the unknown-option message.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { droppedNote, formatAnchor, keptLine } from '../../src/cli/commands/ask';
import type { CliIO } from '../../src/cli/io';
import { main } from '../../src/cli/main';
import { parseFile } from '../../src/core/ingest/parseFile';
import { isJunkPdfTitle } from '../../src/core/ingest/pdf/pdfRuns';
import { keptTokens, placeLabel, readableId } from '../../webview/model';
import { writePdf } from './ingest/pdfWriter';

function capture(cwd = process.cwd()): CliIO & { stdout: string[]; stderr: string[]; all: () => string } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd, all: () => [...stdout, ...stderr].join('\n') };
}

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

describe('canopy CLI: the defects of the first real-document try', () => {
  let root: string;
  let work: string;

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'canopy-cli-defects-'));
    root = join(work, 'docs');
    mkdirSync(root);
    writeFileSync(join(root, 'empty.md'), '');
    // "Café costs € 5." in Windows-1252: no UTF-8 sequence at all.
    writeFileSync(join(root, 'latin.txt'), Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x63, 0x6f, 0x73, 0x74, 0x73, 0x20, 0x80, 0x20, 0x35, 0x2e, 0x0a]));
    writeFileSync(join(root, 'bad.json'), '{"a": ');
    writeFileSync(join(root, 'ok.md'), '# Plots\n\nThe north plot lost its ash trees to dieback in 2021.\n');
    symlinkSync('b.md', join(root, 'a.md'));
    symlinkSync('a.md', join(root, 'b.md'));
    writeFileSync(join(work, 'a-file.txt'), 'not a folder');
  });

  // One plain and one --json index of the folder, each into a fresh index, read by the tests of
  // the summary, the errors and the symlink loop (each `canopy index` loads the encoder and
  // starts parse workers: the tests share these two instead of running four).
  let plainRun: Promise<{ code: number; io: ReturnType<typeof capture> }> | undefined;
  let jsonRun: Promise<{ code: number; io: ReturnType<typeof capture> }> | undefined;
  const indexOnce = (args: string[]) => {
    const io = capture();
    return main(args, io).then((code) => ({ code, io }));
  };
  const plain = () => (plainRun ??= indexOnce(['index', root, '--index', join(work, 'idx-plain')]));
  const json = () => (jsonRun ??= indexOnce(['index', root, '--index', join(work, 'idx-json'), '--json']));

  after(() => rmSync(work, { recursive: true, force: true }));

  it('reports parse warnings (empty file, Windows-1252 text) in the summary and in --json', async () => {
    const { code, io } = await plain();
    assert.equal(code, 0);
    const out = io.stdout.join('\n');
    assert.match(out, /warning empty\.md: the file is empty/);
    assert.match(out, /warning latin\.txt: .*decoded as Windows-1252/);
    const j = await json();
    assert.equal(j.code, 0);
    const summary = JSON.parse(j.io.stdout.join('')) as { warnings: Array<{ file: string; message: string }> };
    assert.deepEqual(summary.warnings.map((w) => w.file).sort(), ['empty.md', 'latin.txt']);
    assert.match(summary.warnings.find((w) => w.file === 'latin.txt')!.message, /decoded as Windows-1252/);
  });

  it('--verbose logs every file, parsed, unchanged or failed', async () => {
    const idx = join(work, 'idx-verbose');
    for (const round of ['parsed', 'unchanged']) {
      const io = capture();
      assert.equal(await main(['index', root, '--index', idx, '--verbose'], io), 0);
      const log = io.stderr.join('\n');
      for (const f of ['empty.md', 'latin.txt', 'bad.json', 'ok.md']) assert.match(log, new RegExp(`^info: ${f.replace('.', '\\.')}: `, 'm'), `${round}: ${f} is logged`);
      if (round === 'unchanged') assert.match(log, /^info: ok\.md: unchanged$/m);
    }
  });

  it('prints each error once, naming its file once', async () => {
    const { code, io } = await plain();
    assert.equal(code, 0);
    const all = io.all();
    assert.equal(occurrences(all, 'invalid JSON'), 1, all);
    const line = all.split('\n').find((l) => l.includes('invalid JSON'))!;
    assert.equal(occurrences(line, 'bad.json'), 1, line);
    assert.match(line, /E_PARSE_FAILED/);
  });

  it('reports a two-file symlink loop as a loop, not as a broken link', async () => {
    const { code, io } = await json();
    assert.equal(code, 0);
    const { skipped } = JSON.parse(io.stdout.join('')) as { skipped: Array<{ file: string; reason: string }> };
    for (const f of ['a.md', 'b.md']) {
      const reason = skipped.find((s) => s.file === f)?.reason ?? '';
      assert.match(reason, /symlink loop/, f);
      assert.doesNotMatch(reason, /broken/, f);
    }
  });

  it('says that a --dir folder does not exist instead of asking to index it', async () => {
    const io = capture();
    assert.equal(await main(['ask', '--dir', join(work, 'no-such-folder'), 'What was planted?'], io), 1);
    const err = io.stderr.join('\n');
    assert.match(err, /no-such-folder does not exist \(E_NOT_FOUND\)/);
    assert.doesNotMatch(err, /index the folder first/);
  });

  it('never answers a user mistake with E_INTERNAL', async () => {
    const mistakes: string[][] = [
      ['index', join(work, 'no-such-folder')],
      ['index', join(work, 'a-file.txt')],
      ['ask', '--dir', join(work, 'a-file.txt'), 'What was planted?'],
      ['ask', '--dir', root, '--index', join(work, 'a-file.txt'), 'What was planted?'],
      ['topics', 'fit', '--dir', join(work, 'no-such-folder')],
    ];
    for (const args of mistakes) {
      const io = capture();
      assert.notEqual(await main(args, io), 0, args.join(' '));
      const err = io.stderr.join('\n');
      assert.doesNotMatch(err, /E_INTERNAL/, `${args.join(' ')}: ${err}`);
      assert.match(err, /\(E_[A-Z_]+\)/, args.join(' '));
    }
  });

  it('never shows more kept tokens on an item line than the item has', () => {
    // Regions tokenised one by one can count more than the joined item text.
    assert.equal(keptLine({ keptNodeIds: ['a', 'b'], tokens: { whole: 40, kept: 43 } }), 'kept 2 region(s), 40/40 tokens');
    assert.equal(keptLine({ keptNodeIds: ['a'], tokens: { whole: 40, kept: 12 } }), 'kept 1 region(s), 12/40 tokens');
    // The controller's carrier item holds regions from the whole PDF: no share of this item's tokens.
    const carrier = keptLine({ keptNodeIds: ['a', 'b', 'c'], tokens: { whole: 300, kept: 900 }, controller: {} as never });
    assert.doesNotMatch(carrier, /\/300/);
    assert.match(carrier, /from the whole PDF, 900 tokens/);
    // An item the rank gate dropped says so instead of "dropped 0" beside its glimpse.
    const leaf = (id: string, decision: string) => ({ id, decision, children: [] }) as never;
    const tree = { id: 'r', decision: 'descend', children: [leaf('a', 'dropped-sibling'), leaf('b', 'keep-whole')] } as never;
    assert.equal(droppedNote({ tree }), 'dropped 1');
    assert.equal(droppedNote({ tree, gate: { kept: true, why: 'rank 1 of 10' } }), 'dropped 1');
    assert.equal(droppedNote({ tree, gate: { kept: false, why: 'rank 9 of 10' } }), 'outside the rank gate (a glimpse of it)');
    // The inspector's and the Evidence view's item lines follow the same rule.
    assert.deepEqual(keptTokens({ tokens: { whole: 40, kept: 43 } }), { kept: 40, whole: 40 });
    assert.deepEqual(keptTokens({ tokens: { whole: 300, kept: 900 }, controller: {} }), { kept: 900 });
  });

  it('titles a PDF by its first heading or file name when the metadata title is junk', async () => {
    for (const junk of ['0000078003-22-000027', '  ', '2023-05-05', 'Microsoft Word - draft.docx', 'Microsoft Word - Document1', 'Writer - Untitled 1', 'report.pdf']) assert.equal(isJunkPdfTitle(junk), true, junk);
    for (const good of ['ADBE 10-K FY22', 'Form 8-K for Pepsico INC filed 05/05/2023', '10-K - 02/07/2019 - 3M Company', 'Word Power - A History', 'Excellence in Reporting']) assert.equal(isJunkPdfTitle(good), false, good);
    const page = [
      { x: 72, y: 700, size: 20, text: 'Annual Report on Form 10-Q', bold: true },
      { x: 72, y: 660, size: 10, text: 'Revenue grew by eight percent in the second quarter of the year.' },
    ];
    const withHeading = await parseFile('filings/q2.pdf', writePdf([page], undefined, { title: '0000078003-22-000027' }), { graph: false });
    assert.equal(withHeading.title, 'Annual Report on Form 10-Q');
    const bare = await parseFile('filings/q3.pdf', writePdf([[page[1]!]], undefined, { title: '0000078003-22-000027' }), { graph: false });
    assert.equal(bare.title, 'q3.pdf');
    const named = await parseFile('filings/q4.pdf', writePdf([page], undefined, { title: 'Pfizer Quarterly Report' }), { graph: false });
    assert.equal(named.title, 'Pfizer Quarterly Report');
  });

  it('shows page numbers 1-based (anchors keep them 0-based)', () => {
    assert.equal(formatAnchor({ file: 'r.pdf', page: 0 }), 'r.pdf p.1');
    assert.equal(formatAnchor({ file: 'r.pdf', page: 4, pageEnd: 6 }), 'r.pdf pp.5–7');
    assert.equal(formatAnchor({ file: 'r.pdf', page: 11, bbox: [10.4, 20.6, 30, 40] }), 'r.pdf p.12 [10,21,30,40]');
    assert.equal(formatAnchor({ file: 't.csv', startLine: 3, startColumn: 0, row: 1 }), 't.csv:3:1 row 2');
    // The inspector's labels.
    assert.equal(placeLabel({ file: 'r.pdf', page: 0 }), 'r.pdf p.1');
    assert.equal(placeLabel({ file: 'r.pdf', page: 4, pageEnd: 6 }), 'r.pdf p.5–7');
    assert.equal(readableId('reports/r.pdf#p0'), 'page 1');
    assert.equal(readableId('reports/r.pdf#3/0.1'), 'reports/r.pdf#3/0.1');
  });

  it('quotes an unknown option correctly', async () => {
    const io = capture();
    assert.equal(await main(['ask', 'What was planted?', '--bogus'], io), 2);
    const first = io.stderr.join('\n').split('\n')[0]!;
    assert.equal(first, 'canopy ask: unknown option --bogus; an argument that starts with "-" goes after "--", as in: canopy ask -- "--bogus"');
    assert.equal(occurrences(first, '"') % 2, 0);
    assert.equal(occurrences(first, "'") % 2, 0);
  });
});
