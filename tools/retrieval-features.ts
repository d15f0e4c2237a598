/**
 * Retrieval features of an open pool, one JSON line per question: for the union of the dense,
 * BM25 and flat BM25 top-N items, every signal a fusion could use (BM25 score and rank — per
 * field and flat, bm25.ts's two scorings —, dense cosine of the
 * item vector and rank, the best and second-best cosine of the item's sentences, the cosine of
 * its first sentence, BM25 over titles only) and the item's gold grade. The fusion profiles of
 * src/core/retrieve/ are fitted and checked on these dumps (`canopy tune` fits the same features
 * from a workspace's own qrels or gold). Research tooling, not part of the tests.
 *
 *   node --import tsx tools/retrieval-features.ts <dataset file> --out features.jsonl [--n 100] [--cache DIR] [--limit N] [--items-only]
 *
 * `--items-only` indexes the pool with item vectors alone and leaves out the sentence features
 * (null): enough for fusions of BM25 and the item cosine, at a fraction of the encoding.
 */
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { nodeVectors } from '../src/core/encode/nodeVectors';
import type { RegionNode } from '../src/contracts/region';
import { loadDataset } from '../src/eval/datasets/load';
import { openEvalEmbeddings } from '../src/eval/embeddings';
import { openPoolIndex } from '../src/eval/poolIndex';
import { defaultOutDir } from './convert-use/main';

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function leaves(n: RegionNode, out: RegionNode[] = []): RegionNode[] {
  if (n.children.length === 0) out.push(n);
  else n.children.forEach((c) => leaves(c, out));
  return out;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { out: { type: 'string' }, n: { type: 'string' }, cache: { type: 'string' }, limit: { type: 'string' }, branching: { type: 'string' }, 'items-only': { type: 'boolean' } },
  });
  const file = positionals[0];
  if (!file || !values.out) throw new Error('usage: retrieval-features.ts <dataset file> --out features.jsonl [--n 100] [--cache DIR] [--limit N]');
  const n = Number(values.n ?? 100);
  const itemsOnly = values['items-only'] === true;
  const cacheDir = values.cache ?? process.env.CANOPY_EVAL_CACHE ?? `${process.env.HOME}/.cache/canopy-eval`;
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const dataset = loadDataset(file);
  if (!dataset.pool || dataset.pool.kind !== 'docs') throw new Error(`${file}: no open pool of documents`);
  const questions = values.limit ? dataset.questions.slice(0, Number(values.limit)) : dataset.questions;
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: defaultOutDir, cacheDir: `${cacheDir}/embeddings`, logger: { log: (_l, m) => log(m) } });
  const pool = await openPoolIndex(dataset.pool.read(), { cacheDir, branchingFactor: Number(values.branching ?? 2), embeddings, ...(itemsOnly ? { nodeVectors: 'lazy' as const } : {}), logger: { log: (_l, m) => log(m) } });
  const corpus = pool.corpus;
  log(`pool: ${pool.docs.size} documents, ${corpus.itemCount} items`);
  const itemVectors = new Map((await corpus.store.entries(corpus.generation)).map((e) => [e.id, e.vector]));
  const out = createWriteStream(values.out);
  let done = 0;
  for (const q of questions) {
    const qv = await embeddings.embedQuery(q.question);
    const dense = await corpus.vectors.query(qv, n);
    const bm25 = await corpus.lexical.query(q.question, n);
    const flat = await corpus.lexical.query(q.question, n, undefined, 'flat');
    const flatOf = new Map(flat.map((h, i) => [h.id, { score: h.score, rank: i }]));
    const ids = [...new Set([...dense.map((h) => h.id), ...bm25.map((h) => h.id), ...flat.map((h) => h.id)])];
    const denseRank = new Map(dense.map((h, i) => [h.id, i]));
    const bm25Of = new Map(bm25.map((h, i) => [h.id, { score: h.score, rank: i }]));
    const candidates = [];
    for (const id of ids) {
      const item = await corpus.item(id);
      const vectors = itemsOnly ? undefined : await nodeVectors(item.root, embeddings.embedTexts);
      const sims = vectors ? leaves(item.root).map((l) => dot(qv, vectors.get(l.id)!)) : [];
      const sorted = [...sims].sort((a, b) => b - a);
      const doc = pool.docOfItem.get(id) ?? id;
      candidates.push({
        id: doc,
        grade: q.goldDocs.get(doc) ?? 0,
        dense: dot(qv, itemVectors.get(id)!),
        denseRank: denseRank.get(id) ?? null,
        bm25: bm25Of.get(id)?.score ?? 0,
        bm25Rank: bm25Of.get(id)?.rank ?? null,
        bm25Flat: flatOf.get(id)?.score ?? 0,
        bm25FlatRank: flatOf.get(id)?.rank ?? null,
        max1: vectors ? (sorted[0] ?? 0) : null,
        max2: vectors ? (sorted[1] ?? sorted[0] ?? 0) : null,
        first: vectors ? (sims[0] ?? 0) : null,
        leaves: leaves(item.root).length,
      });
    }
    const gold = [...q.goldDocs.entries()].filter(([, g]) => g > 0).map(([d]) => d);
    out.write(`${JSON.stringify({ id: q.id, question: q.question, type: q.type ?? null, gold, candidates })}\n`);
    if (++done % 50 === 0) log(`${done}/${questions.length}`);
  }
  out.end();
  await embeddings.save();
  await embeddings.dispose();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
