/**
 * What parsing in a worker thread (ParsePool, the per-file memory limit) costs against parsing
 * in-process, on a normal corpus:
 *   1. parse only: every file parsed one after another (as the indexer does), in-process and
 *      through one reused worker, alternating, `--repeats` times; the worker's start-up is
 *      measured apart;
 *   2. the structured clone of each parsed document (`structuredClone` in this thread: the
 *      serialise + deserialise a document pays on its way back from the worker);
 *   3. the whole indexer (runIndexer with a cheap hashing encoder, so parsing is a large share of
 *      the time — an upper bound of the relative overhead; the real encoder takes far longer per
 *      file) with in-process parsing and with the pool.
 *
 *   node --import tsx tools/bench-parse-worker.ts [--limit N] [--repeats R] <folder>...
 * (--limit: files in all, taken from the folders in order)
 * (default folders: docs test/fixtures/ingest test/fixtures/demo)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runIndexer } from '../src/core/index/indexer';
import { LocalStore } from '../src/core/index/localStore';
import { discoverFiles, type Discovery } from '../src/core/ingest/discover';
import { parseFile } from '../src/core/ingest/parseFile';
import type { ParseOptions } from '../src/core/ingest/parsedDocument';
import { ParsePool } from '../src/core/ingest/parsePool';
import { hashEmbed, hashEmbeddings } from '../test/helpers/hashEmbeddings';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { limit: { type: 'string' }, repeats: { type: 'string' } } });
const folders = positionals.length > 0 ? positionals : ['docs', 'test/fixtures/ingest', 'test/fixtures/demo'];
const limit = values.limit ? Number(values.limit) : Infinity;
const repeats = values.repeats ? Number(values.repeats) : 3;

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
const mib = (b: number) => (b / 1048576).toFixed(0);

async function main(): Promise<void> {
  const discoveries: Discovery[] = [];
  const files: { rel: string; bytes: Uint8Array }[] = [];
  for (const folder of folders) {
    const d = await discoverFiles(folder, { include: ['**/*'], exclude: ['**/.canopy/**', '**/node_modules/**'], maxFileSizeMB: 50 });
    d.files = d.files.slice(0, Math.max(0, limit - files.length));
    discoveries.push(d);
    for (const f of d.files) files.push({ rel: `${folder}/${f.relPath}`, bytes: readFileSync(f.absPath) });
  }
  const totalBytes = files.reduce((a, f) => a + f.bytes.length, 0);
  console.log(`corpus: ${files.length} files, ${(totalBytes / 1048576).toFixed(2)} MB from ${folders.join(', ')}`);
  const options: ParseOptions = { embed: async (texts) => texts.map((t) => hashEmbed(t, 64)) };

  const pool = new ParsePool({ size: 1 });
  const t = performance.now();
  await pool.parse('start.md', Buffer.from('# a\n'));
  console.log(`worker start-up + first tiny parse: ${(performance.now() - t).toFixed(0)} ms`);

  // Warm both paths once (JIT, pdf.js loading) before timing.
  for (const f of files) {
    await parseFile(f.rel, f.bytes, options).catch(() => undefined);
    await pool.parse(f.rel, f.bytes, options).catch(() => undefined);
  }
  const inProc: number[] = [];
  const inWorker: number[] = [];
  const timeInProcess = async () => {
    const t0 = performance.now();
    for (const f of files) await parseFile(f.rel, f.bytes, options).catch(() => undefined);
    inProc.push(performance.now() - t0);
  };
  const timeInWorker = async () => {
    const t0 = performance.now();
    for (const f of files) await pool.parse(f.rel, f.bytes, options).catch(() => undefined);
    inWorker.push(performance.now() - t0);
  };
  // Alternate which goes first, so a machine getting busier or quieter favours neither.
  for (let r = 0; r < repeats; r++) {
    if (r % 2 === 0) {
      await timeInProcess();
      await timeInWorker();
    } else {
      await timeInWorker();
      await timeInProcess();
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const a = med(inProc);
  const b = med(inWorker);
  console.log(`parse only, median of ${repeats}: in-process ${a.toFixed(0)} ms, worker ${b.toFixed(0)} ms (+${(((b - a) / a) * 100).toFixed(1)}%, +${((b - a) / files.length).toFixed(2)} ms per file)`);
  console.log(`  runs in-process: ${inProc.map((x) => x.toFixed(0)).join(', ')} ms; worker: ${inWorker.map((x) => x.toFixed(0)).join(', ')} ms`);

  let cloneMs = 0;
  let biggest = { rel: '', ms: 0, json: 0 };
  let jsonBytes = 0;
  for (const f of files) {
    const doc = await parseFile(f.rel, f.bytes, options).catch(() => undefined);
    if (!doc) continue;
    const json = JSON.stringify(doc).length;
    jsonBytes += json;
    const t0 = performance.now();
    structuredClone(doc);
    const ms = performance.now() - t0;
    cloneMs += ms;
    if (ms > biggest.ms) biggest = { rel: f.rel, ms, json };
  }
  console.log(
    `structured clone of every parsed document: ${cloneMs.toFixed(1)} ms in all for ${(jsonBytes / 1048576).toFixed(1)} MB of JSON; slowest ${biggest.rel} ${biggest.ms.toFixed(1)} ms (${(biggest.json / 1048576).toFixed(2)} MB JSON)`,
  );

  for (const [name, parse] of [
    ['in-process', (rel: string, bytes: Uint8Array, signal?: AbortSignal) => parseFile(rel, bytes, { ...options, ...(signal ? { signal } : {}) })],
    ['worker', (rel: string, bytes: Uint8Array, signal?: AbortSignal) => pool.parse(rel, bytes, { ...options, ...(signal ? { signal } : {}) })],
  ] as const) {
    let seconds = 0;
    for (const d of discoveries) {
      const dir = mkdtempSync(join(tmpdir(), 'canopy-bench-pw-'));
      const summary = await runIndexer(d, { store: new LocalStore(dir), parse, embeddings: hashEmbeddings(), parserVersion: 'bench', branchingFactor: 2 });
      seconds += summary.seconds;
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(`indexer (hashing encoder), ${name}: ${seconds.toFixed(2)} s`);
  }
  await pool.close();
  clearInterval(sampler);
  console.log(`peak RSS of the process: ${mib(peakRss)} MiB; workers started: ${pool.counters.workersStarted}`);
}

void main();
