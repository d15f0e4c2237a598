// Progress inside one long file (pages read, leaves and tables encoded) — in this thread, across the parse
// worker, and through the indexer to a ProgressSink — and the per-file node cap.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runIndexer } from '../../../src/core/index/indexer';
import { LocalStore } from '../../../src/core/index/localStore';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import type { ParseProgress } from '../../../src/core/ingest/parsedDocument';
import { ParsePool } from '../../../src/core/ingest/parsePool';
import { CanopyError } from '../../../src/core/errors';
import { hashEmbed, hashEmbeddings } from '../../helpers/hashEmbeddings';
import { longReportPdf } from '../../helpers/longReportPdf';

const embed = async (texts: string[]) => texts.map((t) => hashEmbed(t));

function checkSteps(events: ParseProgress[], pages: number): void {
  const read = events.filter((e) => e.step === 'pages');
  assert.deepEqual(
    read.map((e) => [e.done, e.total]),
    Array.from({ length: pages }, (_, i) => [i + 1, pages]),
  );
  const enc = events.filter((e) => e.step === 'encoding');
  assert.ok(enc.length > 0, 'the graph reports its texts as they are encoded');
  assert.equal(enc[enc.length - 1]!.done, enc[enc.length - 1]!.total);
  assert.ok(events.indexOf(read[read.length - 1]!) < events.indexOf(enc[0]!), 'pages are read before anything is encoded');
}

describe('progress inside a long file', () => {
  const work = mkdtempSync(join(tmpdir(), 'canopy-progress-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('reports every page read and the leaves encoded, in this thread', async () => {
    const events: ParseProgress[] = [];
    await parseFile('report.pdf', longReportPdf(), { embed, onProgress: (p) => events.push(p) });
    checkSteps(events, 10);
  });

  it('brings the same reports across the parse worker', async () => {
    const pool = new ParsePool({ size: 1 });
    try {
      const events: ParseProgress[] = [];
      await pool.parse('report.pdf', longReportPdf(), { embed, onProgress: (p) => events.push(p) });
      assert.equal(pool.counters.inWorker, 1, 'parsed in the worker');
      checkSteps(events, 10);
    } finally {
      await pool.close();
    }
  });

  it('passes them to the indexer’s ProgressSink, naming the file and the page', async () => {
    const root = join(work, 'docs');
    const dir = join(work, 'index');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'annual-report.pdf'), longReportPdf());
    writeFileSync(join(root, 'notes.md'), '# Notes\n\nA short note.\n');
    const messages: Array<{ done: number; total: number; message?: string; file?: string; part?: { step: string; done: number; total: number } }> = [];
    const pool = new ParsePool({ size: 1 });
    try {
      await runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 5 }), {
        store: new LocalStore(dir),
        parse: (rel, bytes, signal, onProgress) => pool.parse(rel, bytes, { embed, ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) }),
        embeddings: hashEmbeddings(),
        parserVersion: 'test',
        branchingFactor: 2,
        progress: { report: (p) => messages.push(p) },
      });
    } finally {
      await pool.close();
    }
    const inside = messages.filter((m) => m.message?.startsWith('annual-report.pdf — '));
    assert.ok(inside.some((m) => m.message === 'annual-report.pdf — page 7 of 10'), inside.map((m) => m.message).join('\n'));
    // The same, as data for the inspector's progress bar: the file and how far within it.
    assert.ok(inside.some((m) => m.file === 'annual-report.pdf' && m.part?.step === 'pages' && m.part.done === 7 && m.part.total === 10));
    assert.ok(inside.every((m) => m.file === 'annual-report.pdf'));
    assert.ok(inside.some((m) => /encoding \d+ of \d+ sentences, rows and tables$/.test(m.message!)));
    assert.ok(inside.every((m) => m.done === 0 && m.total === 2), 'the file counter stays on the file being parsed');
    assert.deepEqual(messages[messages.length - 1], { done: 2, total: 2 });
  });
});

describe('the per-file node cap', () => {
  const sentences = (n: number) => Array.from({ length: n }, (_, i) => `Sentence ${i} of the long line.`).join(' ');

  it('keeps the first whole items within the cap and warns, naming the file and the cap', async () => {
    const bytes = Buffer.from(`${sentences(3000)}\n`);
    const all = await parseFile('long-line.md', bytes, { graph: false });
    assert.ok(all.stats.nodes > 1000, `${all.stats.nodes} nodes uncapped`);
    const capped = await parseFile('long-line.md', bytes, { graph: false, maxNodes: 1000 });
    assert.ok(capped.stats.nodes <= 1000 && capped.stats.nodes > 0, `${capped.stats.nodes} nodes`);
    assert.ok(capped.items.length < all.items.length);
    // The kept part is the file's beginning, exactly as uncapped.
    capped.items.forEach((it, i) => assert.deepEqual(it, all.items[i]));
    const w = capped.warnings.find((x) => x.code === 'nodeCap');
    assert.ok(w, 'a nodeCap warning');
    assert.match(w.message, /^long-line\.md: more than 1,000 regions, the per-file cap \(canopy\.maxNodesPerFile\); only its first \d+ of \d+ parts \(up to line 1\) are indexed/);
  });

  it('fails the file cleanly when not even its first part fits', async () => {
    await assert.rejects(
      parseFile('long-line.md', Buffer.from(`${sentences(3000)}\n`), { graph: false, maxNodes: 100 }),
      (err: unknown) => err instanceof CanopyError && err.code === 'E_FILE_TOO_LARGE' && /^long-line\.md: .*more than 100 regions/.test(err.message),
    );
  });

  it('leaves files under the cap alone', async () => {
    const doc = await parseFile('short.md', Buffer.from(`${sentences(40)}\n`), { graph: false });
    assert.equal(doc.warnings.length, 0);
  });
});
