// The benchmarks run end to end on a tiny corpus (shapes and invariants only: timing goals belong
// in BENCHMARKS.md, not in tests), and BENCHMARKS.md keeps every section it does not own.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main';
import { renderBenchMarkdown, replaceBenchSection, type BenchResults } from '../../../src/eval/bench/benchReport';
import { canopyBuild, canopyQuery, canopyQueryInTurn, prepareBenchCache, replicateDocs, runCorpusBench } from '../../../src/eval/bench/corpusBench';
import { benchReindex, writeMarkdownWorkspace } from '../../../src/eval/bench/indexBench';
import { machine } from '../../../src/eval/bench/measure';
import { readBenchDocs } from '../../../src/eval/bench/poolDocs';
import { runStoreBench } from '../../../src/eval/bench/storeBench';
import { runVectorsBench } from '../../../src/eval/bench/vectorsBench';
import { loadDataset } from '../../../src/eval/bench/poolDocs';
import { pgliteTemplate } from '../../helpers/pglite';
import { openEvalEmbeddings } from '../../../src/eval/embeddings';

const fx = (p: string) => fileURLToPath(new URL(`../../fixtures/eval/${p}`, import.meta.url));
const modelDir = fileURLToPath(new URL('../../../models/use-lite', import.meta.url));

describe('benchmarks on a tiny corpus', () => {
  const dir = mkdtempSync(join(tmpdir(), 'canopy-bench-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const docs = readBenchDocs([fx('hotpotqa/pool-00.jsonl'), fx('squad/articles.jsonl')]);
  const queries = ['Where does the river Quill reach the sea?', 'Who designed the lighthouse?'];

  it('reads the union of pool files and SQuAD articles', () => {
    assert.equal(docs.length, 10);
    assert.equal(docs[9]!.id, 'Corven_Observatory#1');
  });

  it('corpus: both engines index and answer; a prepared cache leaves nothing to encode', async () => {
    const results: BenchResults = { createdAt: new Date().toISOString(), inputs: { pools: [{ file: 'x/pool.jsonl', docs: 10 }], queries: 'x/q.jsonl', pdfDir: null }, queryCount: 2, corpus: [] };
    for (const engine of ['canopy', 'vectra'] as const) {
      const source = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: modelDir, cacheDir: join(dir, 'shared') });
      const prepared = await prepareBenchCache({ engine, docs, queries, cacheDir: join(dir, engine, 'emb'), source, branchingFactor: 2, peerChunkSize: 512 });
      await source.dispose();
      assert.ok(prepared.texts >= docs.length);
      const emb = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: modelDir, cacheDir: join(dir, engine, 'emb') });
      const r = await runCorpusBench({ engine, docs, queries, workDir: join(dir, engine), embeddings: emb, repeats: 1, branchingFactor: 2, topK: 3, rounds: 2, peerChunkSize: 512, peerBudget: 200 });
      await emb.dispose();
      assert.equal(r.engine, engine);
      assert.equal(r.documents, 10);
      assert.equal(r.first.encodedTexts, 0, `${engine}: every vector came from the prepared cache`);
      assert.equal(r.warm.length, 1);
      assert.ok(r.nodes >= 10 && r.indexBytes > 0 && r.peakRssMiB > 0);
      assert.equal(r.query.cold.n, 2);
      assert.ok(r.query.warm.p50 >= 0 && r.query.warm.p95 >= r.query.warm.p50);
      results.corpus!.push({ machine: machine(), result: r });
    }
    const md = renderBenchMarkdown(results);
    assert.match(md, /\| canopy \| 10 \|/);
    assert.match(md, /Canopy ÷ vectra in the same run/);
  });

  it('corpus: replicas get fresh ids and the originals\' texts; indexing them encodes nothing new; a separate query phase answers', async () => {
    const replicated = replicateDocs(docs, 25);
    assert.equal(replicated.length, 25);
    assert.equal(new Set(replicated.map((d) => d.id)).size, 25, 'every copy has its own id');
    assert.equal(replicated[10]!.id, `${docs[0]!.id}~1`);
    assert.equal(replicated[24]!.text, docs[4]!.text);
    assert.deepEqual(replicateDocs(docs, 4), docs.slice(0, 4));
    const source = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: modelDir, cacheDir: join(dir, 'shared') });
    await prepareBenchCache({ engine: 'canopy', docs, queries, cacheDir: join(dir, 'rep', 'emb'), source, branchingFactor: 2, peerChunkSize: 512 });
    await source.dispose();
    const emb = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: modelDir, cacheDir: join(dir, 'rep', 'emb') });
    try {
      const once = await canopyBuild({ docs, workDir: join(dir, 'once'), embeddings: emb, repeats: 0, branchingFactor: 2 });
      const b = await canopyBuild({ docs: replicated, workDir: join(dir, 'rep'), embeddings: emb, repeats: 0, branchingFactor: 2 });
      assert.equal(b.first.encodedTexts, 0, 'the cache, keyed by text, serves every replica');
      assert.equal(b.items, 25);
      const nodesOf = (n: number) => (once.nodes / docs.length) * n;
      assert.ok(b.nodes > once.nodes * 2 && b.nodes < nodesOf(30), `${b.nodes} nodes for 25 documents (${once.nodes} for the 10 originals)`);
      assert.deepEqual(b.warm, []);
      assert.equal(b.warmMedianSeconds, b.first.seconds, 'no rebuilds: the first build is the figure');
      assert.deepEqual(b.stages.map((s) => s.stage), ['start', 'files written', 'first build']);
      const q = await canopyQuery({ queries, embeddings: emb, branchingFactor: 2, topK: 3, rounds: 2 }, b.indexDir);
      assert.equal(q.documents, 25);
      assert.equal(q.items, 25);
      assert.equal(q.query.warm.n, 2);
      assert.ok(q.stages.at(-1)!.peakRssMiB >= q.stages[0]!.peakRssMiB);
      const inTurn = await canopyQueryInTurn({ queries, embeddings: emb, branchingFactor: 2, topK: 3, rounds: 2 }, [once.indexDir, b.indexDir]);
      assert.deepEqual(
        inTurn.indexes.map((x) => [x.documents, x.query.warm.n, x.query.retrieveOnly.n]),
        [
          [10, 2, 2],
          [25, 2, 2],
        ],
      );
    } finally {
      await emb.dispose();
    }
  });

  it('canopy bench corpus: --phase index with --replicate-to, then --phase query (alone and --in-turn); bad flags are usage errors', async () => {
    const io = () => {
      const stdout: string[] = [];
      const stderr: string[] = [];
      return { stdout, stderr, out: (l: string) => stdout.push(l), err: (l: string) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
    };
    const pools = ['--pool', fx('hotpotqa/pool-00.jsonl'), '--pool', fx('squad/articles.jsonl')];
    const common = ['--queries', fx('hotpotqa/dev.jsonl'), '--query-count', '2', '--cache', join(dir, 'cli-cache'), '--json'];
    const big = join(dir, 'cli-15');
    const small = join(dir, 'cli-10');
    for (const [work, extra] of [
      [big, ['--replicate-to', '15']],
      [small, []],
    ] as const) {
      const o = io();
      assert.equal(await main(['bench', 'corpus', ...pools, ...common, ...extra, '--work', work, '--phase', 'index', '--repeats', '0'], o), 0, o.stderr.join('\n'));
      const r = JSON.parse(o.stdout.at(-1)!) as { phase: string; originals: number; result: { documents: number; warm: unknown[] } };
      assert.equal(r.phase, 'index');
      assert.equal(r.originals, 10);
      assert.equal(r.result.documents, work === big ? 15 : 10);
    }
    const q = io();
    assert.equal(await main(['bench', 'corpus', ...common, '--work', big, '--phase', 'query'], q), 0, q.stderr.join('\n'));
    assert.equal((JSON.parse(q.stdout.at(-1)!) as { result: { documents: number } }).result.documents, 15);
    const t = io();
    assert.equal(await main(['bench', 'corpus', ...common, '--work', big, '--phase', 'query', '--in-turn', small], t), 0, t.stderr.join('\n'));
    const turn = JSON.parse(t.stdout.at(-1)!) as { phase: string; result: { indexes: Array<{ documents: number }> } };
    assert.equal(turn.phase, 'query-in-turn');
    assert.deepEqual(turn.result.indexes.map((x) => x.documents), [15, 10]);
    // Two CANOPY configurations in turn on one index: the flags' and --against's, each recorded, with the per-question ratio.
    const v = io();
    const flags = ['--gate-items', '0.3', '--min-items', '4', '--glimpse', '1', '--node-score', 'dense=1,lexical=0.5,model=coverage'];
    assert.equal(await main(['bench', 'corpus', ...common, '--work', small, '--phase', 'query', ...flags, '--against=--gate-items 0 --glimpse 0 --node-score dense --fusion rrf'], v), 0, v.stderr.join('\n'));
    type Run = { documents: number; variant?: string; compressor: unknown; nodeScore?: unknown; retrieval: { fusion: string; flatWeight?: number }; query: { warm: { n: number } }; warmRatio?: { median: number } };
    const pair = (JSON.parse(v.stdout.at(-1)!) as { result: { indexes: Run[] } }).result.indexes;
    assert.deepEqual(
      pair.map((x) => [x.documents, x.variant, x.compressor, x.nodeScore, x.query.warm.n]),
      [
        [10, undefined, { name: 'canopy', items: 0.3, wholeBelow: 800, minItems: 4, glimpse: 1 }, { dense: 1, lexical: 0.5, model: 'coverage' }, 2],
        [10, 'against', { name: 'canopy' }, undefined, 2],
      ],
    );
    // The timed retrieval is an ask's: the built-in profile's linear fusion with flat BM25, unless --fusion rrf.
    assert.deepEqual(pair.map((x) => [x.retrieval.fusion, x.retrieval.flatWeight]), [['linear', 0.6], ['rrf', undefined]]);
    assert.equal(pair[0]!.warmRatio, undefined);
    assert.ok(pair[1]!.warmRatio!.median > 0);
    for (const [args, message] of [
      [['--phase', 'query'], /--phase query needs --work/],
      [['--phase', 'query', '--work', join(dir, 'nothing-here')], /no index there/],
      [['--phase', 'both'], /--phase must be all, index or query/],
      [['--engine', 'vectra', '--replicate-to', '20', ...pools], /for --engine canopy/],
      [['--phase', 'index', '--repeats=1.5', ...pools], /--repeats must be a non-negative integer/],
      [['--phase', 'query', '--work', small, '--against=--gate-items 2'], /--gate-items must be/],
      [['--phase', 'query', '--work', small, '--against=--topk 3'], /--against: .*--topk/],
      [['--phase', 'query', '--work', small, '--fusion', 'rrf60'], /--fusion must be profile or rrf/],
    ] as const) {
      const e = io();
      assert.notEqual(await main(['bench', 'corpus', ...common, ...args], e), 0);
      assert.match(e.stderr.join('\n'), message);
    }
  });

  it('store: each store writes, answers and is scored against exact search; replicas get fresh ids', async () => {
    const questions = loadDataset(fx('hotpotqa/dev.jsonl')).questions.slice(0, 2);
    const emb = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: modelDir, cacheDir: join(dir, 'shared') });
    try {
      for (const store of ['local', 'local-i8', 'pglite-socket'] as const) {
        const r = await runStoreBench({ store, lexical: 'tsvector', hnsw: {}, docs, documents: 25, jitter: 0.05, questions, workDir: join(dir, 'store'), embeddings: emb, branchingFactor: 2, pgliteTemplate: await pgliteTemplate() });
        assert.equal(r.documents, 25);
        assert.equal(r.originals, 10);
        assert.equal(r.query.hybrid.n, 2);
        assert.ok(r.storeBytes > 0 && r.writeSeconds > 0);
        assert.equal(r.gold, undefined, 'no gold recall on a replicated corpus');
        if (store === 'pglite-socket') {
          assert.ok(r.vectorIndexSeconds !== undefined && r.hnsw?.m === 16);
          assert.ok(r.recallVsExact.dense >= 0.9, `HNSW recall@10 on 25 items: ${r.recallVsExact.dense}`);
        } else assert.equal(r.recallVsExact.dense, 1, `${store}: an exact scan`);
      }
      const plain = await runStoreBench({ store: 'local', lexical: 'tsvector', hnsw: {}, docs, documents: docs.length, jitter: 0, questions, workDir: join(dir, 'store'), embeddings: emb, branchingFactor: 2 });
      assert.ok(plain.gold && plain.gold.questions > 0 && plain.gold.hybrid > 0, 'gold documents are found on the unreplicated corpus');
    } finally {
      await emb.dispose();
    }
  });

  it('vectors: lazy encodes one text per item at index time and the rest on demand', async () => {
    const r = await runVectorsBench({ docs, queries, workDir: join(dir, 'vectors'), encoder: { kind: 'builtin' }, builtinModelDir: modelDir, branchingFactor: 2, topK: 3, rounds: 1 });
    const [eager, lazy] = r.variants;
    assert.equal(eager!.mode, 'eager');
    assert.equal(lazy!.indexEncodedTexts, docs.length, 'one text per document');
    assert.ok(eager!.indexEncodedTexts > lazy!.indexEncodedTexts);
    assert.equal(eager!.query.encodedDuringFirst, 0, 'eager: every node vector already exists');
    assert.ok(lazy!.query.encodedDuringFirst > 0);
    assert.equal(lazy!.query.encodedDuringSecond, 0, 'lazy: the second pass is served from the cache');
    assert.ok(r.nodesTouchedShare > 0 && r.nodesTouchedShare <= 1);
  });

  it('re-index after one edit parses only that file', async () => {
    const root = join(dir, 'ws');
    const files = writeMarkdownWorkspace(root, docs.slice(0, 6));
    const r = await benchReindex(root, files, join(dir, 'reindex'), { encoder: { kind: 'builtin' }, builtinModelDir: modelDir, branchingFactor: 2, edits: 2 });
    assert.equal(r.files, 6);
    assert.equal(r.initial.parsed, 6);
    assert.deepEqual(
      r.edits.map((e) => [e.parsed, e.reused]),
      [
        [1, 5],
        [1, 5],
      ],
    );
    assert.notEqual(r.edits[0]!.file, r.edits[1]!.file);
  });

  it('BENCHMARKS.md: only the marked section is replaced; Encoder and Inspector sections stay', () => {
    const file = join(dir, 'B.md');
    writeFileSync(file, '# Benchmarks\n\n## Encoder\n\nold encoder text\n\n## Inspector\n\ninspector text\n');
    const first = replaceBenchSection(readFileSync(file, 'utf8'), '## Corpus scale\n\nv1');
    assert.match(first, /## Encoder\n\nold encoder text\n\n<!-- canopy-bench:begin[^\n]*-->\n\n## Corpus scale\n\nv1\n\n<!-- canopy-bench:end -->\n\n## Inspector\n\ninspector text/);
    const second = replaceBenchSection(first, '## Corpus scale\n\nv2');
    assert.ok(second.includes('v2') && !second.includes('v1'));
    assert.ok(second.includes('old encoder text') && second.includes('inspector text'));
  });
});
