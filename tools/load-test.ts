/**
 * Load test of the ask pipeline (no LLM): N concurrent questions, then M sequential ones, against
 * an index of a folder, with latency percentiles and memory growth (heap after a forced GC, and
 * RSS) between the first and the last block of questions. Questions are drawn, seeded, from the
 * corpus's own sentences so they hit real evidence.
 *
 *   node --expose-gc --import tsx tools/load-test.ts <folder> [--concurrent 20] [--sequential 1000]
 *   npm run load -- --index <index dir> [--concurrent 20] [--sequential 1000]
 *
 * With `--index` an existing index is used as it is, not re-indexed: it is first copied into a
 * temporary folder (asking writes the embedding cache and traces beside the index), so the
 * original — e.g. an evaluation pool index — is never modified. An evaluation pool index keeps
 * its node vectors in the shared evaluation cache, not beside the index: give that cache with
 * `--embeddings <dir>` (its `*.emb` files are copied into the copy's cache), or every question
 * encodes its items' nodes as a lazy index would, and the cache's growth shows as memory growth.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { AdapterCheckpoints } from '../src/core/app/adapters';
import { AskService } from '../src/core/app/askService';
import { Embeddings } from '../src/core/app/embeddings';
import { IndexService } from '../src/core/app/indexService';
import { ParseWorkers } from '../src/core/app/parseWorkers';
import { resolveSettings } from '../src/core/config/settings';
import { VectraStore } from '../src/core/index/vectraStore';
import type { RegionNode } from '../src/contracts/region';
import { seedEmbeddingCache } from '../src/eval/bench/indexBench';
import { seededRandom } from '../src/core/random';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const mb = (n: number) => n / 1024 / 1024;
const gc = (globalThis as { gc?: () => void }).gc;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { concurrent: { type: 'string' }, sequential: { type: 'string' }, index: { type: 'string' }, seed: { type: 'string' }, embeddings: { type: 'string' } },
  });
  const concurrent = Number(values.concurrent ?? 20);
  const sequential = Number(values.sequential ?? 1000);
  const scratch = mkdtempSync(path.join(tmpdir(), 'canopy-load-'));
  let indexDir = scratch;
  if (values.index) {
    indexDir = path.join(scratch, 'index');
    const t = Date.now();
    cpSync(path.resolve(values.index), indexDir, { recursive: true });
    console.log(`copied ${values.index} to ${indexDir} in ${((Date.now() - t) / 1000).toFixed(1)} s (the original is not touched)`);
  }
  if (values.embeddings) {
    const n = seedEmbeddingCache(path.resolve(values.embeddings), indexDir);
    console.log(`seeded the index's embedding cache with ${n} file(s) from ${values.embeddings}`);
  }
  const folder = path.resolve(positionals[0] ?? (values.index ? '.' : 'test/fixtures/demo'));
  // The services wired as the hosts wire them, with the default settings.
  const settings = resolveSettings({});
  const embeddings = new Embeddings({ indexDir, encoder: () => ({ kind: 'builtin' }), builtinModelDir: path.resolve('models/use-lite'), baseDir: folder });
  const parseWorkers = new ParseWorkers();
  const store = new VectraStore(indexDir);
  const index = new IndexService({ root: folder, indexDir, embeddings, parseWorkers, storeFor: () => store });
  const asker = new AskService({ index, embeddings, adapters: new AdapterCheckpoints(folder) });
  const ask = async (q: string) => (await asker.ask(q, settings)).trace;
  const corpus = values.index ? await index.corpus(settings) : (await index.index(settings), await index.corpus(settings));
  const summary = {
    files: Object.keys(corpus.manifest.files).length,
    items: corpus.itemCount,
    nodes: Object.values(corpus.manifest.files).reduce((a, e) => a + e.nodes, 0),
  };
  const sentences: string[] = [];
  // Question seeds from at most 2,000 documents (a large index has many more; the rest add nothing).
  for (const file of Object.keys(corpus.manifest.files).slice(0, 2000)) {
    const doc = await corpus.document(file);
    const walk = (n: RegionNode) => {
      if (n.children.length === 0 && n.kind === 'sentence' && n.text.split(/\s+/).length >= 6) sentences.push(n.text);
      n.children.forEach(walk);
    };
    doc.items.forEach((i) => walk(i.root));
  }
  if (sentences.length === 0) throw new Error(`no sentences to ask about in ${folder}`);
  const rand = seededRandom(Number(values.seed ?? 1));
  const question = () => {
    const words = sentences[Math.floor(rand() * sentences.length)]!.split(/\s+/);
    return `What about ${words.slice(0, Math.min(12, words.length)).join(' ')}?`;
  };
  console.log(`index: ${summary.files} files, ${summary.items} items, ${summary.nodes} nodes; ${sentences.length} question seeds`);

  let t0 = Date.now();
  const conc = await Promise.all(Array.from({ length: concurrent }, () => ask(question())));
  const concMs = Date.now() - t0;
  console.log(`${concurrent} concurrent questions: ${concMs} ms in all, ${conc.filter((t) => t.answer.text.length > 0).length} answered`);

  const lat: number[] = [];
  const snapshots: Array<{ at: number; heap: number; rss: number }> = [];
  const block = Math.max(1, Math.floor(sequential / 10));
  for (let i = 0; i < sequential; i++) {
    t0 = performance.now();
    await ask(question());
    lat.push(performance.now() - t0);
    if (i % block === block - 1) {
      gc?.();
      const m = process.memoryUsage();
      snapshots.push({ at: i + 1, heap: m.heapUsed, rss: m.rss });
      const recent = lat.slice(-block).sort((a, b) => a - b);
      console.log(`  after ${i + 1}: heap ${mb(m.heapUsed).toFixed(1)} MB, rss ${mb(m.rss).toFixed(1)} MB; last ${block}: p50 ${percentile(recent, 50).toFixed(0)} ms`);
    }
  }
  const sorted = [...lat].sort((a, b) => a - b);
  console.log(`${sequential} sequential questions: p50 ${percentile(sorted, 50).toFixed(0)} ms, p95 ${percentile(sorted, 95).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`);
  const first = snapshots[0]!;
  const last = snapshots.at(-1)!;
  console.log(`heap growth from question ${first.at} to ${last.at}: ${mb(last.heap - first.heap).toFixed(1)} MB (${gc ? 'after forced GC' : 'run with --expose-gc for a clean figure'}); rss growth ${mb(last.rss - first.rss).toFixed(1)} MB`);
  await parseWorkers.close();
  await embeddings.dispose();
  rmSync(scratch, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
