/**
 * Topic-compass ablations (docs/topics.md): on a BEIR-style corpus with qrels, compare the hybrid
 * baseline (dense + BM25, RRF) with re-rankings of its candidate set by a trained scorer —
 * without topic features (control), topics without selection (the whole bank), without
 * abstraction (raw selected distributions), and the full compass — on a seeded held-out split
 * of the judged queries (never trained on). Reports IE/P/R@1,3,5 and the median per-query
 * latency of the compass over the hybrid retriever. Paths come from arguments only.
 *
 *   node --import tsx tools/eval-topics.ts --corpus c0.jsonl [--corpus c1.jsonl …] \
 *     --queries queries.jsonl --qrels qrels.tsv --cache DIR [--holdout 0.3] [--seed 1]
 *     [--topics K] [--select 50] [--m 10] [--candidates 50] [--hidden 8] [--loss listwise|bce]
 *     [--epochs 30] [--synthetic N] [--limit-docs N] [--model-dir models/use-lite] [--json]
 *
 * Corpus lines {_id, title, text}; query lines {_id, text} or {_id, question}; qrels TSV
 * `query-id  corpus-id  score` with a header (score > 0 is relevant). Documents are embedded as
 * "title text" (the same text as tools/eval-scifact-dense.ts, so one cache serves both).
 * `--synthetic N` trains on N synthetic queries from the corpus instead of the training qrels.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EmbeddingCache } from '../src/core/encode/cache';
import { UseLiteEncoder } from '../src/core/encode/useLiteEncoder';
import { ieAtK, precisionAtK, recallAtK } from '../src/core/retrieve/metrics';
import type { CorpusIndex } from '../src/core/index/corpusIndex';
import { LexicalIndex } from '../src/core/index/lexicalIndex';
import type { VectorHit, VectorSearch } from '../src/core/index/vectorStore';
import type { Item } from '../src/contracts/region';
import { HybridRetriever } from '../src/core/retrieve/hybrid';
import type { ScoreComponents } from '../src/contracts/trace';
import type { TopicBank } from '../src/core/topics/bank';
import { defaultCompassOptions, type CompassOptions } from '../src/core/topics/compass';
import { chooseTopicCount, fitTopics } from '../src/core/topics/fit';
import { TopicCompassRetriever } from '../src/core/topics/retriever';
import type { TopicScorer } from '../src/core/topics/scorer';
import { scorerGroups, splitByQuery, syntheticQueries, trainTopicScorer, type LabelledCandidates } from '../src/core/topics/training';
import { defaultOutDir } from './convert-use/main';

interface Doc {
  _id: string;
  title?: string;
  text?: string;
}
interface Query {
  _id: string;
  text?: string;
  question?: string;
}

const readJsonl = <T>(path: string): T[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

function readQrels(path: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d || !(Number(s) > 0)) continue;
    if (!out.has(q)) out.set(q, new Set());
    out.get(q)!.add(d);
  }
  return out;
}

/** Brute-force cosine search over unit vectors: the VectorSearch port, in memory. */
class MemoryVectors implements VectorSearch {
  constructor(
    private readonly ids: string[],
    private readonly vectors: Float32Array[],
  ) {}
  get size(): number {
    return this.ids.length;
  }
  async query(v: Float32Array, k: number): Promise<VectorHit[]> {
    const hits = this.vectors.map((d, i) => {
      let s = 0;
      for (let j = 0; j < v.length; j++) s += (v[j] as number) * (d[j] as number);
      return { id: this.ids[i] as string, score: s };
    });
    hits.sort((a, b) => b.score - a.score);
    return hits.slice(0, k);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const round = (x: number, d = 4): number => Math.round(x * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string', multiple: true },
      queries: { type: 'string' },
      qrels: { type: 'string' },
      cache: { type: 'string' },
      'model-dir': { type: 'string' },
      holdout: { type: 'string' },
      seed: { type: 'string' },
      topics: { type: 'string' },
      select: { type: 'string' },
      m: { type: 'string' },
      candidates: { type: 'string' },
      hidden: { type: 'string' },
      loss: { type: 'string' },
      epochs: { type: 'string' },
      synthetic: { type: 'string' },
      'limit-docs': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.corpus?.length || !values.queries || !values.qrels) throw new Error('give --corpus (repeatable), --queries and --qrels');
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  const seed = Number(values.seed ?? 1);
  const candidates = Number(values.candidates ?? 50);
  const compass: CompassOptions = {
    ...defaultCompassOptions,
    selectEntries: Number(values.select ?? defaultCompassOptions.selectEntries),
    topics: Number(values.m ?? defaultCompassOptions.topics),
  };
  const trainOptions = {
    hidden: Number(values.hidden ?? 8),
    loss: (values.loss ?? 'listwise') as 'listwise' | 'bce',
    epochs: Number(values.epochs ?? 30),
    seed,
  };

  let docs = values.corpus.flatMap((f) => readJsonl<Doc>(f));
  if (values['limit-docs']) docs = docs.slice(0, Number(values['limit-docs']));
  const docIds = new Set(docs.map((d) => d._id));
  const qrels = readQrels(values.qrels);
  // Only queries with a gold document in this corpus can be scored.
  const queries = readJsonl<Query>(values.queries).filter((q) => [...(qrels.get(q._id) ?? [])].some((d) => docIds.has(d)));
  log(`${docs.length} documents, ${queries.length} judged queries`);

  const encoder = await UseLiteEncoder.create({ modelDir: values['model-dir'] ? resolve(values['model-dir']) : defaultOutDir, batchSize: 32 });
  const cache = values.cache ? await EmbeddingCache.open({ dir: resolve(values.cache), encoder }) : undefined;
  const encode = (texts: string[]): Promise<Float32Array[]> => (cache ? cache.getOrEncode(texts, encoder) : encoder.encode(texts));
  const docTexts = docs.map((d) => `${d.title ?? ''} ${d.text ?? ''}`.trim());
  const t0 = performance.now();
  const docVecs: Float32Array[] = [];
  for (let i = 0; i < docTexts.length; i += 512) {
    docVecs.push(...(await encode(docTexts.slice(i, i + 512))));
    if (i % 2048 === 0) log(`vectors ${Math.min(i + 512, docTexts.length)}/${docTexts.length} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const queryText = (q: Query): string => q.text ?? q.question ?? '';
  const queryVecs = new Map<string, Float32Array>();
  (await encode(queries.map(queryText))).forEach((v, i) => queryVecs.set(queries[i]!._id, v));
  const synthetic = values.synthetic ? syntheticQueries(docs.map((d) => ({ id: d._id, title: d.title ?? '', text: d.text ?? '' })), { count: Number(values.synthetic), seed }) : [];
  const syntheticVecs = synthetic.length > 0 ? await encode(synthetic.map((s) => s.text)) : [];
  await cache?.save();
  await encoder.dispose();
  log(`vectors ready (${((performance.now() - t0) / 1000).toFixed(0)} s)`);

  // The real HybridRetriever over an in-memory corpus. CorpusIndex is a class over an on-disk
  // generation; the retriever reads only `vectors`, `lexical` and `item`, so a structural
  // stand-in is cast to it here (a tool, not the product path).
  const lexical = LexicalIndex.empty();
  lexical.add(docs.map((d) => ({ id: d._id, title: d.title ?? '', text: d.text ?? '', modality: 'text' })));
  const byId = new Map(docs.map((d) => [d._id, d]));
  const item = async (id: string): Promise<Item> => ({ id, file: id, title: byId.get(id)?.title ?? id, modality: 'text', root: undefined as unknown as Item['root'] });
  const index = { vectors: new MemoryVectors(docs.map((d) => d._id), docVecs), lexical, item } as unknown as CorpusIndex;
  const vecOf = (text: string): Float32Array => {
    const v = cache?.get(text);
    if (!v) throw new Error(`no cached vector for query: ${text.slice(0, 60)}`);
    return v;
  };
  const embedQuery = async (text: string): Promise<Float32Array> => vecOf(text);
  const hybrid = new HybridRetriever(index, embedQuery);

  const t1 = performance.now();
  const bank: TopicBank = fitTopics(
    docs.map((d, i) => ({ id: d._id, vector: docVecs[i] as Float32Array, text: docTexts[i] as string })),
    { ...(values.topics ? { k: Number(values.topics) } : {}), seed, encoderId: encoder.id },
  );
  const fitSeconds = (performance.now() - t1) / 1000;
  log(`fitted K=${bank.model.k} topics in ${fitSeconds.toFixed(1)} s`);

  const hybridRun = async (text: string): Promise<Array<{ itemId: string; scores: ScoreComponents }>> => (await hybrid.retrieve(text, 5, { candidates })).candidates;
  const labelled = new Map<string, LabelledCandidates>();
  for (const q of queries) labelled.set(q._id, { eq: queryVecs.get(q._id)!, candidates: await hybridRun(queryText(q)), positives: qrels.get(q._id)! });
  const split = splitByQuery(
    queries.map((q) => q._id),
    Number(values.holdout ?? 0.3),
    seed,
  );
  let train: LabelledCandidates[] = split.train.map((id) => labelled.get(id)!);
  if (synthetic.length > 0) {
    train = [];
    for (const [i, s] of synthetic.entries()) train.push({ eq: syntheticVecs[i] as Float32Array, candidates: await hybridRun(s.text), positives: new Set(s.positives) });
  }
  const heldOut = split.heldOut.map((id) => labelled.get(id)!);
  log(`train on ${train.length} ${synthetic.length > 0 ? 'synthetic' : 'qrels'} queries, evaluate on ${heldOut.length} held-out queries`);

  const metrics = (runs: string[][]): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const k of [1, 3, 5]) {
      const mean = (f: typeof ieAtK): number => runs.reduce((s, r, i) => s + f(r, heldOut[i]!.positives as Set<string>, k), 0) / runs.length;
      out[`IE@${k}`] = round(mean(ieAtK));
      out[`P@${k}`] = round(mean(precisionAtK));
      out[`R@${k}`] = round(mean(recallAtK));
    }
    return out;
  };
  const rows: Array<{ config: string } & Record<string, number | string>> = [];
  rows.push({ config: 'hybrid (no topics)', ...metrics(heldOut.map((q) => q.candidates.map((c) => c.itemId))) });

  const variants: Array<{ config: string; compass: CompassOptions; topics: boolean }> = [
    { config: 'learned scorer, no topic features', compass, topics: false },
    { config: 'topics without selection (whole bank)', compass: { ...compass, selection: 'all' }, topics: true },
    { config: 'topics without abstraction (raw selected)', compass: { ...compass, abstraction: 'raw' }, topics: true },
    { config: 'full compass', compass, topics: true },
  ];
  let fullScorer: TopicScorer | undefined;
  for (const v of variants) {
    const trained = trainTopicScorer(scorerGroups(bank, train, v.compass, v.topics), { ...trainOptions, topics: v.topics });
    const test = scorerGroups(bank, heldOut, v.compass, v.topics);
    const runs = test.map((g, i) => {
      const cands = heldOut[i]!.candidates;
      return g.rows
        .map((r, j) => ({ id: cands[j]!.itemId, s: trained.scorer.score(r), j }))
        .sort((a, b) => b.s - a.s || a.j - b.j)
        .map((x) => x.id);
    });
    rows.push({ config: v.config, ...metrics(runs), trainLoss: `${round(trained.losses[0]!, 3)}→${round(trained.losses.at(-1)!, 3)}` });
    if (v.config === 'full compass') fullScorer = trained.scorer;
    log(`${v.config}: done`);
  }

  // Latency: the real retrievers, per held-out query, query vectors from the cache (encoding excluded).
  const compassRetriever = new TopicCompassRetriever(hybrid, index, embedQuery, bank, fullScorer!, { ...compass, candidates });
  const heldQueries = split.heldOut.map((id) => queryText(queries.find((q) => q._id === id)!));
  for (const q of heldQueries.slice(0, 5)) {
    await hybrid.retrieve(q, 5, { candidates });
    await compassRetriever.retrieve(q, 5, { candidates });
  }
  const hybridMs: number[] = [];
  const compassMs: number[] = [];
  for (const q of heldQueries) {
    let t = performance.now();
    await hybrid.retrieve(q, 5, { candidates });
    hybridMs.push(performance.now() - t);
    t = performance.now();
    await compassRetriever.retrieve(q, 5, { candidates });
    compassMs.push(performance.now() - t);
  }
  const result = {
    documents: docs.length,
    judgedQueries: queries.length,
    trainQueries: train.length,
    trainSource: synthetic.length > 0 ? 'synthetic' : 'qrels',
    heldOutQueries: heldOut.length,
    topicsK: bank.model.k,
    defaultK: chooseTopicCount(docs.length),
    L: compass.selectEntries,
    M: compass.topics,
    candidates,
    scorer: trainOptions,
    fitSeconds: round(fitSeconds, 1),
    rows,
    latency: {
      hybridMedianMs: round(median(hybridMs), 2),
      compassMedianMs: round(median(compassMs), 2),
      overheadMedianMs: round(median(compassMs.map((c, i) => c - (hybridMs[i] as number))), 2),
    },
    sampleTopics: bank.model.labels.slice(0, 8),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const cols = ['IE@1', 'IE@3', 'IE@5', 'P@1', 'P@3', 'P@5', 'R@1', 'R@3', 'R@5', 'trainLoss'];
    process.stdout.write(`| config | ${cols.join(' | ')} |\n|---|${cols.map(() => '---').join('|')}|\n`);
    for (const r of rows) process.stdout.write(`| ${r.config} | ${cols.map((c) => r[c] ?? '').join(' | ')} |\n`);
    const { rows: _rows, ...rest } = result;
    process.stdout.write(`${JSON.stringify(rest, null, 1)}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`eval-topics: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
