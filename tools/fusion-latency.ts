/**
 * Query latency of two retrieval fusions on the same open-pool index, measured in one process with
 * the questions taken in turn (A, B, A, B …) so both see the same machine load: the ask pipeline
 * without an LLM as `canopy bench corpus` runs it (hybrid retrieval k = 10, CANOPY, rule critic, up
 * to 3 rounds, extractive reader), and the hybrid retriever alone. A is the former built-in profile
 * (BM25 + 0.2 × cosine), B the current one (profile.ts). Research tooling, not part of the tests.
 *
 *   node --import tsx tools/fusion-latency.ts <dataset file> [--n 50] [--cache DIR] [--passes 2]
 */
import { parseArgs } from 'node:util';
import { bpeTokenCounter } from '../src/core/compress/tokens';
import { RuleCritic } from '../src/core/critic/ruleCritic';
import { ask } from '../src/core/engine/ask';
import { ExtractiveReader } from '../src/core/read/extractiveReader';
import { HybridRetriever } from '../src/core/retrieve/hybrid';
import { BUILTIN_PROFILE, retrievalRecord, type FusionSetting } from '../src/core/retrieve/profile';
import { loadDataset } from '../src/eval/datasets/load';
import { latency, timed } from '../src/eval/bench/measure';
import { openEvalEmbeddings } from '../src/eval/embeddings';
import { openPoolIndex } from '../src/eval/poolIndex';
import { defaultOutDir } from './convert-use/main';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { n: { type: 'string' }, cache: { type: 'string' }, passes: { type: 'string' } } });
  const file = positionals[0];
  if (!file) throw new Error('usage: fusion-latency.ts <dataset file> [--n 50] [--cache DIR] [--passes 2]');
  const cacheDir = values.cache ?? process.env.CANOPY_EVAL_CACHE ?? `${process.env.HOME}/.cache/canopy-eval`;
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const dataset = loadDataset(file);
  if (!dataset.pool || dataset.pool.kind !== 'docs') throw new Error(`${file}: no open pool of documents`);
  const questions = dataset.questions.slice(0, Number(values.n ?? 50)).map((q) => q.question);
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: defaultOutDir, cacheDir: `${cacheDir}/embeddings`, logger: { log: (_l, m) => log(m) } });
  const pool = await openPoolIndex(dataset.pool.read(), { cacheDir, branchingFactor: 2, embeddings, logger: { log: (_l, m) => log(m) } });
  const corpus = pool.corpus;
  const fusions: Array<{ name: string; fusion: FusionSetting }> = [
    { name: 'former profile (BM25 + 0.2 × cosine)', fusion: { kind: 'linear', dense: 0.2, depth: 100 } },
    { name: 'built-in profile', fusion: BUILTIN_PROFILE.fusion },
  ];
  const runs = fusions.map((f) => ({ ...f, retriever: new HybridRetriever(corpus, embeddings.embedQuery, { dense: true, bm25: true, fusion: f.fusion }), ask: [] as number[], retrieve: [] as number[] }));
  const tokens = bpeTokenCounter();
  const reader = new ExtractiveReader();
  const critic = new RuleCritic();
  const passes = Number(values.passes ?? 2);
  for (let pass = 0; pass < passes; pass++) {
    for (const q of questions) {
      for (const r of pass % 2 === 0 ? runs : [...runs].reverse()) {
        const t = await timed(() =>
          ask(
            q,
            {
              topK: 10,
              maxRounds: 3,
              branchingFactor: 2,
              compressor: { name: 'canopy' },
              readerTokenCap: 16000,
              encoderId: embeddings.id,
              retrieval: retrievalRecord({ dense: true, bm25: true, fusion: r.fusion }, false),
            },
            { retriever: r.retriever, embedQuery: embeddings.embedQuery, embedTexts: embeddings.embedTexts, critic, reader, tokens, index: { root: pool.dir, generation: corpus.generation, items: corpus.itemCount } },
          ),
        );
        // The first pass warms the parsed-tree cache and the embedding cache's pages: only later passes count.
        if (pass > 0) r.ask.push(t.seconds * 1000);
        const rt = await timed(() => r.retriever.retrieve(q, 10));
        if (pass > 0) r.retrieve.push(rt.seconds * 1000);
      }
    }
  }
  const fmt = (ms: number[]) => {
    const l = latency(ms);
    return `p50 ${l.p50.toFixed(1)} ms, p95 ${l.p95.toFixed(1)} ms, mean ${l.mean.toFixed(1)} ms`;
  };
  for (const r of runs) console.log(`${r.name}: ask ${fmt(r.ask)}; retrieval ${fmt(r.retrieve)}`);
  const [a, b] = runs as [(typeof runs)[0], (typeof runs)[0]];
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  console.log(`ratio B / A: ask mean ${(mean(b.ask) / mean(a.ask)).toFixed(3)}, retrieval mean ${(mean(b.retrieve) / mean(a.retrieve)).toFixed(3)} (${a.ask.length} questions × ${passes - 1} measured pass(es))`);
  await embeddings.dispose();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
