// The file watcher under a burst of 1,000 file changes: a real recursive fs.watch feeds the
// ReindexScheduler (the same one the extension's watcher drives), which runs the real incremental
// indexer. After the burst the index holds exactly the files on disk with their current content
// hashes, vectors and BM25 agree with the manifest, and the work stayed bounded: a few runs, and no
// more files parsed than were touched.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { watch, mkdtempSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ReindexScheduler } from '../../../src/core/app/reindexScheduler';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import type { IndexSummary } from '../../../src/core/index/indexer';
import { LocalStore } from '../../../src/core/index/localStore';
import { indexFolder } from '../../helpers/indexFolder';

const tmp = mkdtempSync(join(tmpdir(), 'canopy-burst-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('watcher burst', () => {
  it('scheduler: changes during a run cause exactly one follow-up run; a steady stream still runs every maxWait', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const s = new ReindexScheduler(
      () => {
        runs++;
        return new Promise<void>((r) => (release = r));
      },
      { delayMs: 20, maxWaitMs: 100 },
    );
    s.notify();
    await sleep(60);
    assert.equal(runs, 1);
    for (let i = 0; i < 50; i++) s.notify(); // during the run
    await sleep(60);
    assert.equal(runs, 1, 'no second run while one is in flight');
    release();
    await sleep(80);
    assert.equal(runs, 2, 'one follow-up run for all 50 changes');
    release();
    await s.idle();
    assert.equal(runs, 2);
    // A steady stream (a change every 10 ms, shorter than delayMs) is not starved.
    const t0 = Date.now();
    while (Date.now() - t0 < 350) {
      s.notify();
      await sleep(10);
      release();
    }
    assert.ok(runs >= 4, `runs during a 350 ms stream: ${runs - 2}`);
    s.dispose();
  });

  it('1,000 changes (creates, edits, deletes, renames) end in an index consistent with the files, with bounded work', async () => {
    const root = join(tmp, 'ws');
    const dir = join(tmp, 'index');
    mkdirSync(join(root, 'notes'), { recursive: true });
    const body = (i: number, v: number) => `# Note ${i}\n\nPlot ${i} revision ${v}: canopy cover ${(i * 7 + v) % 100} percent. Soil moisture was logged.\n`;
    for (let i = 0; i < 200; i++) writeFileSync(join(root, 'notes', `n${i}.md`), body(i, 0));
    const summaries: IndexSummary[] = [];
    const indexOnce = async () => {
      summaries.push(await indexFolder(root, dir));
    };
    await indexOnce();
    summaries.length = 0;
    const errors: unknown[] = [];
    const scheduler = new ReindexScheduler(indexOnce, { delayMs: 300, maxWaitMs: 3_000, onError: (e) => errors.push(e) });
    const watcher = watch(root, { recursive: true }, () => scheduler.notify());
    const touched = new Set<string>();
    let changes = 0;
    const change = (f: () => void, ...files: string[]) => {
      f();
      files.forEach((x) => touched.add(x));
      changes++;
    };
    const t0 = Date.now();
    // 1,000 changes in bursts of 50 with short pauses, so several land while a run is in flight.
    for (let k = 0; k < 1_000; k++) {
      const i = k % 200;
      const kind = k % 5;
      if (kind === 0) change(() => writeFileSync(join(root, 'notes', `new${k}.md`), body(1000 + k, 0)), `notes/new${k}.md`);
      else if (kind === 1 || kind === 2) change(() => writeFileSync(join(root, 'notes', `n${i}.md`), body(i, k)), `notes/n${i}.md`);
      else if (kind === 3) {
        const f = join(root, 'notes', `new${k - 3}.md`);
        change(() => rmSync(f, { force: true }), `notes/new${k - 3}.md`);
      } else {
        const from = `n${(k * 7) % 200}.md`;
        const to = `r${k}.md`;
        change(() => {
          try {
            renameSync(join(root, 'notes', from), join(root, 'notes', to));
          } catch {
            writeFileSync(join(root, 'notes', to), body(2000 + k, 0)); // already renamed away: a create instead
          }
        }, `notes/${from}`, `notes/${to}`);
      }
      if (k % 50 === 49) await sleep(40);
    }
    const burstMs = Date.now() - t0;
    // Wait for the watcher's last events, then for the scheduler to settle.
    await sleep(800);
    await scheduler.idle();
    watcher.close();
    scheduler.dispose();
    assert.equal(changes, 1_000);
    assert.deepEqual(errors, []);

    // Consistency: the live index holds exactly the files on disk, each at its current content.
    const onDisk = readdirSync(join(root, 'notes')).map((n) => `notes/${n}`).sort();
    const corpus = await CorpusIndex.open(new LocalStore(dir));
    assert.deepEqual(Object.keys(corpus.manifest.files).sort(), onDisk);
    for (const f of onDisk) {
      const hash = createHash('sha256').update(readFileSync(join(root, f))).digest('hex');
      assert.equal(corpus.manifest.files[f]!.hash, hash, `${f} is indexed at its current content`);
    }
    assert.equal(corpus.vectors.size, corpus.itemCount);
    assert.equal(corpus.lexical.size, corpus.itemCount);

    // Bounded work: a handful of runs, and never more files parsed than were touched.
    const parsed = summaries.reduce((a, s) => a + s.parsed, 0);
    const bound = Math.ceil(burstMs / 3_000) + 3;
    assert.ok(scheduler.runs <= bound, `${scheduler.runs} runs for a ${burstMs} ms burst (bound ${bound})`);
    assert.ok(parsed <= touched.size, `${parsed} files parsed, ${touched.size} touched`);
    console.log(
      `watcher burst: ${changes} changes to ${touched.size} files in ${burstMs} ms → ${scheduler.notifications} watcher events, ${scheduler.runs} index runs, ${parsed} files parsed in all; index = ${onDisk.length} files on disk, all hashes current`,
    );
  });
});
