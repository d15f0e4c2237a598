// The per-file memory limit: files are parsed in worker threads (ParsePool) with a V8 heap limit
// and a hard time limit. A file whose parse exhausts the limit fails with E_MEMORY_LIMIT naming
// the file and the limit while the other files index and nothing already indexed is lost; a
// worker that dies or loops fails only its file; normal files come back exactly as parsed
// in-process; without a worker the pool parses in-process and says so.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openServices } from '../../helpers/services';
import { CancelledError, CanopyError } from '../../../src/core/errors';
import { runIndexer } from '../../../src/core/index/indexer';
import { LocalStore } from '../../../src/core/index/localStore';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import type { ParsedDocument, ParseOptions } from '../../../src/core/ingest/parsedDocument';
import { hardTimeLimitMs, ParsePool } from '../../../src/core/ingest/parsePool';
import { hashEmbed, hashEmbeddings } from '../../helpers/hashEmbeddings';
import { longReportPdf } from '../../helpers/longReportPdf';
import { hostilePdf } from './hostilePdf';

const fixtures = fileURLToPath(new URL('../../fixtures/ingest', import.meta.url));
const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const hooks = fileURLToPath(new URL('../../helpers/parseWorkerHooks.js', import.meta.url));
const bundledWorker = fileURLToPath(new URL('../../../dist/parseWorker.js', import.meta.url));
const sourceWorker = fileURLToPath(new URL('../../../src/core/ingest/parseWorker.ts', import.meta.url));
const canopyBin = fileURLToPath(new URL('../../../bin/canopy.js', import.meta.url));
const execFileAsync = promisify(execFile);

// 150,000 unclosed emphasis openers (`_a `): 450 KB on disk. micromark keeps every one of them
// as a pending attention sequence, so the parse needs over 150 times the file in live heap and a
// 64 MB worker runs out within about a second, long before the 50 MB size limit would stop the
// file (a 1 GB one parses it). A list of 16,384 one-letter items (`- a`, 64 KB; over 1,000× the
// file in heap: tools/hostile-markdown.ts) runs out the same way but spends ~1.2 s more CPU
// getting there, and this file makes four of them.
const hostileMarkdown = () => Buffer.from('_a '.repeat(150_000));
const LIMIT_MB = 64;
// Slack for a busy 2-core CI machine.
const SLACK_MS = 8_000;

const embed = async (texts: string[]) => texts.map((t) => hashEmbed(t, 64));
// Timings are not content: the parse time and where it went (stats.stages) differ between any two runs.
const same = (doc: ParsedDocument) => {
  const { stages: _stages, ...stats } = doc.stats;
  return { ...doc, stats: { ...stats, parseMs: 0 } };
};

const memoryError = (file: string) => (err: unknown) => {
  assert.ok(err instanceof CanopyError, String(err));
  assert.equal(err.code, 'E_MEMORY_LIMIT');
  assert.equal(err.file, file);
  assert.ok(err.message.startsWith(`${file}: `), err.message);
  assert.match(err.message, new RegExp(`memory limit of ${LIMIT_MB} MB \\(canopy\\.maxParseMemoryMB\\)`));
  return true;
};

describe('per-file memory limit (parse workers)', () => {
  // The pools run the worker defaultWorkerFile() names: under npm test the bundle its build step
  // has just made (CANOPY_TEST_PARSE_WORKER), so the parity test below compares that bundle with
  // this source; run alone, this file's source through tsx. One test runs the source worker always.
  const pool = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 1, preload: hooks });
  // The hostile PDF's text extraction itself needs more than 64 MB within about a second; the
  // tests about time, crashes and cancellation give pdf.js room.
  const pdfPool = new ParsePool({ maxMemoryMB: 512, size: 1, preload: hooks });
  after(() => Promise.all([pool.close(), pdfPool.close()]));
  // The crash and cancellation cases parse the same 150,000-run page; it is made once (about
  // 0.5 s of CPU), and before any timed window opens: the bounds below time the worker, not the
  // making of its input (the 400,000-run page alone took 2.4–3.2 s of wall time on a busy machine).
  let slowPage: Uint8Array | undefined;
  const slowPdf = () => (slowPage ??= hostilePdf([150_000]));

  it('normal files parse through the worker exactly as in-process (every fixture format, with the graph and its encoder)', async () => {
    const files: [string, Uint8Array][] = [
      ...[fixtures, demo].flatMap((d) =>
        readdirSync(d, { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e): [string, Uint8Array] => [`${d === demo ? 'demo/' : ''}${e.name}`, readFileSync(join(d, e.name))]),
      ),
      ['reports/long-report.pdf', longReportPdf()],
      ['notes/long.md', Buffer.from(`# Survey\n\n${'The canopy was measured at every plot in the survey, twice a year. '.repeat(2_000)}\n\n## Plots\n\n| plot | trees |\n|---|---|\n${'| P1 | 12 |\n'.repeat(300)}`)],
    ];
    let compared = 0;
    const plain = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 1 });
    try {
      for (const [rel, bytes] of files) {
        const options: ParseOptions = { embed };
        const inProcess = await parseFile(rel, bytes, options).then(same, (e: CanopyError) => ({ error: e.code, message: e.message }));
        const inWorker = await plain.parse(rel, bytes, options).then(same, (e: CanopyError) => ({ error: e.code, message: e.message }));
        assert.deepStrictEqual(inWorker, inProcess, rel);
        // Byte-identical as stored by the indexer.
        assert.equal(JSON.stringify(inWorker), JSON.stringify(inProcess), rel);
        compared++;
      }
      assert.ok(compared >= 25, `${compared} files compared`);
      assert.equal(plain.counters.inProcess, 0);
    } finally {
      await plain.close();
    }
  });

  it('a file whose parse exhausts the heap fails with E_MEMORY_LIMIT naming the file and the limit; the next file parses', async () => {
    const t0 = Date.now();
    await assert.rejects(pool.parse('notes/hostile.md', hostileMarkdown()), memoryError('notes/hostile.md'));
    const ms = Date.now() - t0;
    assert.ok(ms < 30_000, `stopped after ${ms} ms`);
    const before = pool.counters.workersStarted;
    const doc = await pool.parse('notes/ok.md', Buffer.from('# Oaks\n\nThe pedunculate oak grows slowly.\n'));
    assert.equal(doc.items.length, 1);
    assert.equal(pool.counters.workersStarted, before + 1, 'a fresh worker replaced the one that ran out');
    // The calling thread's heap never held the hostile parse.
    assert.ok(process.memoryUsage().heapUsed < 512 * 1024 * 1024);
  });

  it('a parser that allocates without end is stopped the same way (test hook)', async () => {
    await assert.rejects(pool.parse('hog.json', Buffer.from('{"a": "one two three four"}')), memoryError('hog.json'));
  });

  it('a parser stuck in a synchronous loop is terminated at the hard time limit with E_TIME_LIMIT', async () => {
    const loopPool = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 1, preload: hooks, hardKillGraceMs: 500 });
    try {
      await loopPool.parse('warm.md', Buffer.from('# a\n')); // worker start-up is not part of the limit
      const t0 = Date.now();
      await assert.rejects(loopPool.parse('docs/loop.md', Buffer.from('# Loop\n\nNever parsed.\n'), { timeLimitMs: 500 }), (err: unknown) => {
        assert.ok(err instanceof CanopyError && err.code === 'E_TIME_LIMIT' && err.file === 'docs/loop.md', String(err));
        assert.match(err.message, /^docs\/loop\.md: parsing \(markdown\) did not finish within the per-file time limit of 0\.5 s; its parser was stopped after/);
        return true;
      });
      const ms = Date.now() - t0;
      assert.ok(ms >= 1_000 - 50 && ms < 1_000 + SLACK_MS, `stopped after ${ms} ms`);
      assert.equal((await loopPool.parse('after.md', Buffer.from('# After\n\nFine.\n'))).items.length, 1);
    } finally {
      await loopPool.close();
    }
    assert.equal(hardTimeLimitMs(120_000), 150_000);
    assert.equal(hardTimeLimitMs(1_000), 3_000);
  });

  it('a worker that dies mid-parse fails only its file (E_PARSE_FAILED); the pool goes on', async () => {
    await assert.rejects(pdfPool.parse('papers/crash.pdf', slowPdf(), { graph: false }), (err: unknown) => {
      assert.ok(err instanceof CanopyError && err.code === 'E_PARSE_FAILED' && err.file === 'papers/crash.pdf', String(err));
      assert.match(err.message, /^papers\/crash\.pdf: the parser stopped unexpectedly \(its worker thread exited with code 9\)/);
      return true;
    });
    assert.equal((await pdfPool.parse('ok.pdf', hostilePdf([5]), { graph: false })).items.length, 1);
  });

  it('a PDF keeps its own time limit inside the worker: E_TIME_LIMIT naming the page, or the pages read before it', async () => {
    await pdfPool.parse('warm.pdf', hostilePdf([2]), { graph: false });
    const hostile = hostilePdf([400_000]);
    const t0 = Date.now();
    await assert.rejects(pdfPool.parse('papers/hostile.pdf', hostile, { graph: false, timeLimitMs: 1_000 }), (err: unknown) => {
      assert.ok(err instanceof CanopyError && err.code === 'E_TIME_LIMIT', String(err));
      assert.match(err.message, /^papers\/hostile\.pdf: reading page 1 of 1 ran past the per-file time limit of 1\.0 s/);
      return true;
    });
    assert.ok(Date.now() - t0 < 1_000 + SLACK_MS, `stopped after ${Date.now() - t0} ms`);
    const doc = await pdfPool.parse('mixed.pdf', hostilePdf([4, 400_000]), { graph: false, timeLimitMs: 1_000 });
    assert.match(JSON.stringify(doc.items.map((i) => i.root)), /Page 1 line 4 holds ordinary readable text/);
    assert.ok(doc.warnings.some((w) => w.code === 'timeLimit'), JSON.stringify(doc.warnings));
  });

  it('time spent in the encoder (in the calling thread) does not count against the hard limit', async () => {
    const slowEmbed = async (texts: string[]) => {
      await new Promise((r) => setTimeout(r, 1_500));
      return embed(texts);
    };
    const bytes = readFileSync(join(fixtures, 'guide.md'));
    const timed = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 1, hardKillGraceMs: 200 });
    try {
      await timed.parse('warm.md', Buffer.from('# a\n'));
      const doc = await timed.parse('guide.md', bytes, { embed: slowEmbed, timeLimitMs: 800 });
      assert.ok(doc.graph!.edges.some((e) => e.type === 'semantic'));
      assert.deepStrictEqual(same(doc), same(await parseFile('guide.md', bytes, { embed })));
    } finally {
      await timed.close();
    }
  });

  it('cancellation stops the worker at once', async () => {
    const abort = new AbortController();
    const slow = slowPdf();
    const t0 = Date.now();
    setTimeout(() => abort.abort(), 300);
    await assert.rejects(pdfPool.parse('papers/slow.pdf', slow, { graph: false, signal: abort.signal }), (err: unknown) => err instanceof CancelledError);
    assert.ok(Date.now() - t0 < 300 + SLACK_MS);
    assert.equal((await pdfPool.parse('ok.md', Buffer.from('# a\n\nb c.\n'))).items.length, 1);
  });

  it('reuses one worker across files (the worker entry from source, through tsx)', async () => {
    const reuse = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 1, workerFile: sourceWorker });
    try {
      for (const name of ['guide.md', 'notes.txt', 'readings.csv', 'page.html', 'station.json']) {
        const bytes = readFileSync(join(fixtures, name));
        assert.deepStrictEqual(same(await reuse.parse(name, bytes)), same(await parseFile(name, bytes)), name);
      }
      assert.equal(reuse.counters.workersStarted, 1);
      assert.equal(reuse.counters.inWorker, 5);
    } finally {
      await reuse.close();
    }
  });

  it('runs at most `size` workers for concurrent callers, and each gets its own document', async () => {
    const two = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 2 });
    try {
      const names = ['guide.md', 'notes.txt', 'readings.csv', 'page.html', 'station.json', 'talk.vtt'];
      const docs = await Promise.all(names.map((n) => two.parse(n, readFileSync(join(fixtures, n)))));
      assert.deepEqual(
        docs.map((d) => d.file),
        names,
      );
      assert.ok(two.counters.workersStarted <= 2, `${two.counters.workersStarted} workers`);
      assert.ok(two.workers <= 2);
    } finally {
      await two.close();
    }
  });

  it('small files may share a worker: concurrent shared parses run in one worker, each with its own document', async () => {
    const shared = new ParsePool({ maxMemoryMB: LIMIT_MB, size: 1 });
    try {
      const names = ['guide.md', 'notes.txt', 'readings.csv', 'page.html'];
      const docs = await Promise.all(names.map((n) => shared.parse(n, readFileSync(join(fixtures, n)), {}, true)));
      for (const [i, n] of names.entries()) assert.deepEqual(same(docs[i]!), same(await parseFile(n, readFileSync(join(fixtures, n)))), n);
      assert.equal(shared.counters.workersStarted, 1);
      assert.equal(shared.counters.inWorker, names.length);
    } finally {
      await shared.close();
    }
  });

  it('parses in-process, and logs why, when no worker can start', async () => {
    const lines: string[] = [];
    const broken = new ParsePool({ workerFile: join(tmpdir(), 'no-such-canopy-parse-worker.js'), logger: { log: (level, m) => lines.push(`${level}: ${m}`) } });
    try {
      const bytes = readFileSync(join(fixtures, 'guide.md'));
      const doc = await broken.parse('guide.md', bytes);
      assert.deepStrictEqual(same(doc), same(await parseFile('guide.md', bytes)));
      assert.equal(broken.counters.inProcess, 1);
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /^warn: parse worker could not start \(.+\); parsing in this process WITHOUT the per-file memory limit/);
      await broken.parse('notes.txt', readFileSync(join(fixtures, 'notes.txt')));
      assert.equal(lines.length, 1, 'logged once, not per file');
    } finally {
      await broken.close();
    }
  });

  describe('in the indexer', () => {
    let root: string;
    let dir: string;
    before(() => {
      root = mkdtempSync(join(tmpdir(), 'canopy-memlimit-ws-'));
      dir = mkdtempSync(join(tmpdir(), 'canopy-memlimit-idx-'));
    });
    after(() => {
      rmSync(root, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    });

    it('the hostile file is reported, the others index, and its last good version stays', async () => {
      mkdirSync(join(root, 'notes'));
      writeFileSync(join(root, 'notes', 'list.md'), '# Shopping\n\n- acorns for the nursery beds\n- ash saplings from the tolerant stock\n');
      writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
      const run = async () =>
        runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 10 }), {
          store: new LocalStore(dir),
          parse: (rel, bytes, signal) => pool.parse(rel, bytes, { graph: false, ...(signal ? { signal } : {}) }),
          embeddings: hashEmbeddings(),
          parserVersion: 'test',
          branchingFactor: 2,
        });
      const first = await run();
      assert.deepEqual(first.errors, []);
      assert.equal(first.parsed, 2);

      // The list turns hostile; a new file arrives beside it.
      writeFileSync(join(root, 'notes', 'list.md'), hostileMarkdown());
      writeFileSync(join(root, 'ash.md'), '# Ash\n\nAsh dieback is a fungal disease. It kills ash trees.\n');
      const second = await run();
      assert.deepEqual(
        second.errors.map((e) => [e.file, e.code]),
        [['notes/list.md', 'E_MEMORY_LIMIT']],
      );
      assert.match(second.errors[0]!.reason, /^notes\/list\.md: parsing \(markdown\) needed more than the per-file memory limit of 64 MB/);
      assert.equal(second.parsed, 1, 'ash.md parsed');
      assert.equal(second.files, 3, 'the hostile file keeps its last good version');
      const manifest = JSON.parse(readFileSync(join(dir, `gen-${second.generation}.json`), "utf8"));
      assert.ok(manifest.files['notes/list.md'].staleError, 'marked stale');
      assert.equal(manifest.files['notes/list.md'].items.length, 1);
    });
  });

  describe('small files sharing a worker, in the indexer', () => {
    let root: string;
    let dir: string;
    before(() => {
      root = mkdtempSync(join(tmpdir(), 'canopy-memlimit-shared-ws-'));
      dir = mkdtempSync(join(tmpdir(), 'canopy-memlimit-shared-idx-'));
    });
    after(() => {
      rmSync(root, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    });

    it('a file that kills the shared worker fails alone: the files beside it are parsed again, alone, and indexed', async () => {
      for (let i = 0; i < 6; i++) writeFileSync(join(root, `a${i}.md`), `# Plot ${i}\n\nThe oak on plot ${i} grows slowly.\n`);
      writeFileSync(join(root, 'hog.json'), '{"a": "one two three four"}'); // the test hook allocates until the heap limit
      for (let i = 0; i < 6; i++) writeFileSync(join(root, `z${i}.md`), `# Stand ${i}\n\nAsh dieback reached stand ${i}.\n`);
      const summary = await runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 10 }), {
        store: new LocalStore(dir),
        parse: (rel, bytes, signal, _onProgress, share) => pool.parse(rel, bytes, { graph: false, ...(signal ? { signal } : {}) }, share),
        embeddings: hashEmbeddings(),
        parserVersion: 'test',
        branchingFactor: 2,
        semanticEdges: true,
      });
      assert.deepEqual(
        summary.errors.map((e) => [e.file, e.code]),
        [['hog.json', 'E_MEMORY_LIMIT']],
      );
      assert.equal(summary.parsed, 12);
    });
  });

  it('the bundled CLI starts the bundled worker (dist/parseWorker.js) and reports the hostile file', { skip: !existsSync(bundledWorker) && 'run npm run build first' }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'canopy-memlimit-cli-'));
    try {
      writeFileSync(join(root, 'hostile.md'), hostileMarkdown());
      writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
      const { stdout } = await execFileAsync(process.execPath, [canopyBin, 'index', root, '--max-parse-memory-mb', String(LIMIT_MB), '--json'], { env: { ...process.env, NODE_OPTIONS: '' } });
      const summary = JSON.parse(stdout.trim().split('\n').at(-1)!);
      assert.deepEqual(
        summary.errors.map((e: { file: string; code: string }) => [e.file, e.code]),
        [['hostile.md', 'E_MEMORY_LIMIT']],
      );
      assert.equal(summary.parsed, 1);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the IndexService indexes through the workers with canopy.maxParseMemoryMB', async () => {
    const root = mkdtempSync(join(tmpdir(), 'canopy-memlimit-app-'));
    const indexDir = mkdtempSync(join(tmpdir(), 'canopy-memlimit-app-idx-'));
    writeFileSync(join(root, 'hostile.md'), hostileMarkdown());
    writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
    const ws = openServices({ root, indexDir, settings: { maxParseMemoryMB: LIMIT_MB } });
    try {
      const summary = await ws.index.index(ws.settings);
      assert.deepEqual(
        summary.errors.map((e) => [e.file, e.code]),
        [['hostile.md', 'E_MEMORY_LIMIT']],
      );
      assert.equal(summary.parsed, 1);
    } finally {
      await ws.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(indexDir, { recursive: true, force: true });
    }
  });
});
