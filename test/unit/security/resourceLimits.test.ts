// Per-file resource limits: a hostile-but-valid file (a small PDF whose one page holds a huge
// compressed content stream) ends in a per-file E_TIME_LIMIT error naming the file, the page and
// the limit, within the limit plus a little; a PDF whose later page is hostile keeps the pages
// read before the limit; and one such file never stops the rest of a workspace from indexing.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CanopyError } from '../../../src/core/errors';
import { runIndexer } from '../../../src/core/index/indexer';
import { LocalStore } from '../../../src/core/index/localStore';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { hashEmbeddings } from '../../helpers/hashEmbeddings';
import { hostilePdf } from './hostilePdf';

// 400,000 text runs on one page: a 1.8 MB file. 150,000 runs (0.66 MB) took 112.3 s wall (6.5 s
// CPU) on the loaded build machine, but in one CI run such a page finished inside a 1.5 s limit;
// 400,000 took 10.2 s here without a limit (session 3).
// The cost grows with the operator count — a file at the 50 MB size limit holds ~28 times as many.
const HOSTILE_RUNS = 400_000;
// Slack for a busy CI machine on top of the limit; without the limit the parse takes many times this.
const SLACK_MS = 4_000;

const timeLimitError = (file: string) => (err: unknown) =>
  err instanceof CanopyError && err.code === 'E_TIME_LIMIT' && err.file === file && err.message.includes(file) && /time limit/.test(err.message);

describe('per-file resource limits', () => {
  let hostile: Uint8Array;
  before(async () => {
    hostile = hostilePdf([HOSTILE_RUNS]);
    // Load pdf.js once, so its start-up is not charged to the first limited parse.
    await parseFile('warm.pdf', hostilePdf([2]), { graph: false });
  });

  it('the hostile generator makes valid PDFs: a small one parses with its text', async () => {
    const doc = await parseFile('ok.pdf', hostilePdf([5]), { graph: false });
    assert.equal(doc.warnings.length, 0);
    const text = JSON.stringify(doc.items.map((i) => i.root));
    assert.match(text, /Page 1 line 5 holds ordinary readable text/);
    const small = await parseFile('dense.pdf', hostilePdf([400]), { graph: false });
    assert.ok(small.items.length > 0, 'a dense page of the same shape, small enough, parses');
    assert.ok(hostile.length < 2 * 1024 * 1024, `the hostile file is small: ${hostile.length} bytes`);
  });

  it('a hostile page ends in E_TIME_LIMIT naming the file, the page and the limit, within the limit', async () => {
    const t0 = Date.now();
    await assert.rejects(parseFile('papers/hostile.pdf', hostile, { graph: false, timeLimitMs: 1_000 }), (err: unknown) => {
      assert.ok(timeLimitError('papers/hostile.pdf')(err), String(err));
      assert.match((err as Error).message, /page 1 of 1/);
      assert.match((err as Error).message, /1\.0 s/);
      return true;
    });
    const ms = Date.now() - t0;
    assert.ok(ms < 1_000 + SLACK_MS, `stopped after ${ms} ms`);
    // pdf.js stopped working on the page: the event loop is free again.
    let maxLag = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      const now = Date.now();
      maxLag = Math.max(maxLag, now - last - 25);
      last = now;
    }, 25);
    await new Promise((r) => setTimeout(r, 1_000));
    clearInterval(timer);
    assert.ok(maxLag < 500, `the event loop was blocked for ${maxLag} ms after the limit`);
  });

  it('a PDF whose second page is hostile keeps the first page, with a time-limit warning', async () => {
    const doc = await parseFile('mixed.pdf', hostilePdf([4, HOSTILE_RUNS]), { graph: false, timeLimitMs: 1_000 });
    assert.match(JSON.stringify(doc.items.map((i) => i.root)), /Page 1 line 4 holds ordinary readable text/);
    const w = doc.warnings.find((x) => x.code === 'timeLimit');
    assert.ok(w, JSON.stringify(doc.warnings));
    assert.match(w.message, /mixed\.pdf: stopped after 1 of 2 pages \(time limit\)/);
  });

  it('a text file that takes longer than its limit fails with E_TIME_LIMIT instead of going on', async () => {
    const big = `# Notes\n\n${'The canopy was measured at every plot in the survey. '.repeat(4_000)}\n`;
    await assert.rejects(parseFile('notes/big.md', Buffer.from(big), { timeLimitMs: 1 }), (err: unknown) => {
      assert.ok(timeLimitError('notes/big.md')(err), String(err));
      assert.match((err as Error).message, /parsing \(markdown\) took/);
      return true;
    });
    // The same file within a normal limit parses.
    const doc = await parseFile('notes/big.md', Buffer.from(big), { graph: false });
    assert.ok(doc.items.length > 0);
  });

  describe('in the indexer', () => {
    let root: string;
    let dir: string;
    after(() => {
      rmSync(root, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    });

    it('one hostile file is reported with its reason and the rest of the workspace is indexed', async () => {
      root = mkdtempSync(join(tmpdir(), 'canopy-limits-ws-'));
      dir = mkdtempSync(join(tmpdir(), 'canopy-limits-idx-'));
      mkdirSync(join(root, 'papers'));
      writeFileSync(join(root, 'papers', 'hostile.pdf'), hostile);
      writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
      writeFileSync(join(root, 'ash.md'), '# Ash\n\nAsh dieback is a fungal disease. It kills ash trees.\n');
      const t0 = Date.now();
      const summary = await runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 10 }), {
        store: new LocalStore(dir),
        parse: (rel, bytes, signal) => parseFile(rel, bytes, { graph: false, timeLimitMs: 1_000, ...(signal ? { signal } : {}) }),
        embeddings: hashEmbeddings(),
        parserVersion: 'test',
        branchingFactor: 2,
      });
      const ms = Date.now() - t0;
      assert.deepEqual(
        summary.errors.map((e) => [e.file, e.code]),
        [['papers/hostile.pdf', 'E_TIME_LIMIT']],
      );
      assert.match(summary.errors[0]!.reason, /papers\/hostile\.pdf: reading page 1 of 1 ran past the per-file time limit/);
      assert.equal(summary.files, 2);
      assert.equal(summary.parsed, 2);
      assert.ok(ms < 1_000 + SLACK_MS + 3_000, `indexing took ${ms} ms`);
    });
  });
});
