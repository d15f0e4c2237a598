/**
 * Corpus-scale benchmark of one engine in this process (so its peak RSS is that engine's):
 *  - canopy: the real indexer (`runIndexer`: trees, node vectors through the embedding cache,
 *    the local store's binary item vectors and BM25) over N pool documents — a first build
 *    (which encodes whatever the embedding cache lacks) and `repeats` fresh rebuilds with the
 *    cache warm (`canopyBuild`); then (`canopyQuery`, in the same process or another one)
 *    query latency of the ask pipeline without an LLM (hybrid retrieval, CANOPY, rule-critic
 *    rounds, extractive reader) on a freshly opened index (cold: parsed trees read from disk)
 *    and again (warm), plus retrieval alone;
 *  - vectra: the peer — `LocalDocumentIndex` (default 512-token chunks, bulk-loaded) on the same
 *    documents and embeddings, `queryDocuments` alone and with `renderSections`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ask, type AskOptions } from '../../core/engine/ask';
import type { NodeScoreWeights } from '../../core/compress/hybridScore';
import type { CompressorSetting } from '../../contracts/trace';
import { bpeTokenCounter } from '../../core/compress/tokens';
import { RuleCritic } from '../../core/critic/ruleCritic';
import { CorpusIndex } from '../../core/index/corpusIndex';
import { LocalStore } from '../../core/index/localStore';
import type { Logger } from '../../core/ports';
import { ExtractiveReader } from '../../core/read/extractiveReader';
import { HybridRetriever } from '../../core/retrieve/hybrid';
import { BUILTIN_PROFILE, type FusionSetting, retrievalRecord } from '../../core/retrieve/profile';
import type { PoolDoc } from '../datasets/types';
import type { EvalEmbeddings } from '../embeddings';
import { TextSplitter } from 'vectra/lib/TextSplitter';
import { EmbeddingCache } from '../../core/encode/cache';
import type { Encoder } from '../../core/encode/encoder';
import { poolDocItem } from '../items';
import { cl100kTokenizer, VectraPeer } from '../peer';
import { indexPoolFiles, writePoolFiles } from '../poolIndex';
import { folderBytes, latency, median, peakRssMiB, timed, type Latency } from './measure';

export interface CorpusBenchOptions {
  engine: 'canopy' | 'vectra';
  docs: PoolDoc[];
  queries: string[];
  workDir: string;
  embeddings: EvalEmbeddings;
  repeats: number;
  branchingFactor: number;
  topK: number;
  rounds: number;
  /** vectra chunk size (its default is 512). */
  peerChunkSize: number;
  /** Token budget for vectra's renderSections per query. */
  peerBudget: number;
  /** Canopy's compressor (default plain CANOPY) and node-score weights (default the dense cosine), as `canopy ask` takes them. */
  compressor?: CompressorSetting;
  nodeScore?: NodeScoreWeights;
  /** How the hybrid retriever fuses its lists: default the built-in encoder's profile, what an ask runs. */
  fusion?: FusionSetting;
  logger?: Logger;
}

type AskChoice = Pick<CorpusBenchOptions, 'embeddings' | 'branchingFactor' | 'topK' | 'rounds' | 'compressor' | 'nodeScore' | 'fusion'>;

/** The retriever of every timed question: the fusion asked for, else the built-in profile's (as an ask without a tuned profile). */
function benchRetriever(corpus: CorpusIndex, o: Pick<CorpusBenchOptions, 'embeddings' | 'fusion'>): HybridRetriever {
  return new HybridRetriever(corpus, o.embeddings.embedQuery, { dense: true, bm25: true, fusion: o.fusion ?? BUILTIN_PROFILE.fusion });
}

/** The ask options of every timed question: k, rounds, B, the compressor and node score asked for. */
function benchAskOptions(o: AskChoice): AskOptions {
  return {
    topK: o.topK,
    maxRounds: o.rounds,
    branchingFactor: o.branchingFactor,
    compressor: o.compressor ?? { name: 'canopy' },
    readerTokenCap: 16000,
    encoderId: o.embeddings.id,
    retrieval: retrievalRecord({ dense: true, bm25: true, fusion: o.fusion ?? BUILTIN_PROFILE.fusion }, false),
    ...(o.nodeScore ? { nodeScore: o.nodeScore } : {}),
  };
}

export interface BuildRun {
  seconds: number;
  cpuSeconds: number;
  encodedTexts: number;
}

export interface CorpusBenchResult {
  engine: 'canopy' | 'vectra';
  documents: number;
  items: number;
  nodes: number;
  chunks?: number;
  first: BuildRun;
  /** Fresh rebuilds with every vector cached: the indexing work itself. */
  warm: BuildRun[];
  warmMedianSeconds: number;
  docsPerSecond: number;
  nodesPerSecond: number;
  indexBytes: number;
  query: { cold: Latency; warm: Latency; retrieveOnly: Latency; openSeconds: number };
  peakRssMiB: number;
}

/**
 * The corpus's own embedding cache: every text the engine will embed (node texts of every tree,
 * or vectra's chunks; the questions), looked up in the large shared evaluation cache and encoded
 * only where it has no vector. The measuring process then loads just this cache — what a
 * workspace of this corpus would hold — so its peak RSS is not the shared cache's.
 */
export async function prepareBenchCache(o: { engine: 'canopy' | 'vectra'; docs: PoolDoc[]; queries: string[]; cacheDir: string; source: EvalEmbeddings; branchingFactor: number; peerChunkSize: number }): Promise<{ texts: number; encodedTexts: number }> {
  const texts: string[] = [...o.queries];
  if (o.engine === 'canopy') {
    for (const d of o.docs) {
      const { item } = poolDocItem('x', d, o.branchingFactor);
      const walk = (n: { kind: string; text: string; header?: string; children: unknown[] }) => {
        if (n.kind !== 'group') texts.push(n.header ? `${n.header}\n${n.text}` : n.text);
        for (const c of n.children) walk(c as typeof n);
      };
      if (item) walk(item.root);
    }
  } else {
    const splitter = new TextSplitter({ chunkSize: o.peerChunkSize, chunkOverlap: 0, keepSeparators: true, tokenizer: cl100kTokenizer(), docType: 'txt' });
    for (const d of o.docs) for (const c of splitter.split(d.text)) texts.push(c.text.replace(/\n/g, ' '));
  }
  const before = o.source.encoded;
  const proxy: Encoder = { id: o.source.id, dim: o.source.dim, maxPieces: o.source.encoder.maxPieces, encode: (t) => o.source.embedTexts([...t]), dispose: async () => undefined };
  const small = await EmbeddingCache.open({ dir: o.cacheDir, encoder: proxy });
  for (let i = 0; i < texts.length; i += 2000) await small.getOrEncode(texts.slice(i, i + 2000), proxy);
  await small.save();
  await o.source.save();
  return { texts: small.size, encodedTexts: o.source.encoded - before };
}

export async function runCorpusBench(o: CorpusBenchOptions): Promise<CorpusBenchResult> {
  mkdirSync(o.workDir, { recursive: true });
  return o.engine === 'canopy' ? canopyBench(o) : vectraBench(o);
}

/** Stage by stage: the process's peak resident set so far (MiB) after each stage, to see what holds memory. */
export type StagePeaks = Array<{ stage: string; peakRssMiB: number; heapUsedMiB: number }>;

function stagePeak(peaks: StagePeaks, stage: string): void {
  peaks.push({ stage, peakRssMiB: peakRssMiB(), heapUsedMiB: process.memoryUsage().heapUsed / 2 ** 20 });
}

/**
 * The corpus replicated up to `n` documents: copy r of a document gets the fresh id `<id>~<r>`
 * (so its own file, item and node ids), the original's title, text and spans. Copies' texts are
 * the originals', so the embedding cache (keyed by text) serves every replica's vectors; the
 * parser, the trees, the store and the lexical index see `n` distinct documents.
 */
export function replicateDocs(docs: readonly PoolDoc[], n: number): PoolDoc[] {
  if (docs.length === 0 || n <= docs.length) return docs.slice(0, n);
  const out: PoolDoc[] = [...docs];
  for (let r = 1; out.length < n; r++) for (let i = 0; i < docs.length && out.length < n; i++) out.push({ ...docs[i]!, id: `${docs[i]!.id}~${r}` });
  return out;
}

export interface CanopyBuildResult {
  documents: number;
  items: number;
  nodes: number;
  /** Writing the documents as files (the benchmark's input, not indexing). */
  writeFilesSeconds: number;
  first: BuildRun;
  warm: BuildRun[];
  /** Median of the warm rebuilds; the first build's time when there were none. */
  warmMedianSeconds: number;
  docsPerSecond: number;
  nodesPerSecond: number;
  indexBytes: number;
  indexDir: string;
  stages: StagePeaks;
  peakRssMiB: number;
}

export interface CanopyQueryResult {
  documents: number;
  items: number;
  query: { cold: Latency; warm: Latency; retrieveOnly: Latency; openSeconds: number };
  stages: StagePeaks;
  peakRssMiB: number;
}

/** The indexing half of the Canopy benchmark: the real indexer over the documents, first build and `repeats` warm rebuilds. */
export async function canopyBuild(o: Pick<CorpusBenchOptions, 'docs' | 'workDir' | 'embeddings' | 'repeats' | 'branchingFactor' | 'logger'>): Promise<CanopyBuildResult> {
  mkdirSync(o.workDir, { recursive: true });
  const stages: StagePeaks = [];
  stagePeak(stages, 'start');
  const files = await timed(() => writePoolFiles(join(o.workDir, 'files'), o.docs));
  const { discovery } = files.value;
  stagePeak(stages, 'files written');
  const build = async (dir: string): Promise<BuildRun & { items: number; nodes: number }> => {
    rmSync(dir, { recursive: true, force: true });
    const before = o.embeddings.encoded;
    const t = await timed(() => indexPoolFiles(discovery, dir, { branchingFactor: o.branchingFactor, embeddings: o.embeddings, ...(o.logger ? { logger: o.logger } : {}) }));
    if (t.value.errors.length > 0) throw new Error(`bench corpus: ${t.value.errors.length} document(s) failed to index, first: ${t.value.errors[0]!.file}: ${t.value.errors[0]!.reason}`);
    return { seconds: t.seconds, cpuSeconds: t.cpuSeconds, encodedTexts: o.embeddings.encoded - before, items: t.value.items, nodes: t.value.nodes };
  };
  const indexDir = join(o.workDir, 'index');
  const first = await build(indexDir);
  stagePeak(stages, 'first build');
  const warm: BuildRun[] = [];
  for (let r = 0; r < o.repeats; r++) {
    const w = await build(join(o.workDir, `index-warm-${r}`));
    warm.push({ seconds: w.seconds, cpuSeconds: w.cpuSeconds, encodedTexts: w.encodedTexts });
    rmSync(join(o.workDir, `index-warm-${r}`), { recursive: true, force: true });
  }
  if (o.repeats > 0) stagePeak(stages, 'warm rebuilds');
  const warmMedian = warm.length > 0 ? median(warm.map((w) => w.seconds)) : first.seconds;
  return {
    documents: o.docs.length,
    items: first.items,
    nodes: first.nodes,
    writeFilesSeconds: files.seconds,
    first: { seconds: first.seconds, cpuSeconds: first.cpuSeconds, encodedTexts: first.encodedTexts },
    warm,
    warmMedianSeconds: warmMedian,
    docsPerSecond: o.docs.length / warmMedian,
    nodesPerSecond: first.nodes / warmMedian,
    indexBytes: folderBytes(indexDir) - folderBytes(join(indexDir, 'embeddings')),
    indexDir,
    stages,
    peakRssMiB: peakRssMiB(),
  };
}

/**
 * The answering half: open the index in `indexDir` fresh and run the ask pipeline without an LLM
 * (hybrid retrieval, CANOPY, rule-critic rounds, extractive reader) over the questions — cold
 * (parsed trees read from disk), warm (again) — and the hybrid retriever alone.
 */
export async function canopyQuery(o: AskChoice & Pick<CorpusBenchOptions, 'queries'>, indexDir: string): Promise<CanopyQueryResult> {
  const stages: StagePeaks = [];
  stagePeak(stages, 'start');
  const opened = await timed(() => CorpusIndex.open(new LocalStore(indexDir), { maxCachedDocs: 256 }));
  const corpus = opened.value;
  stagePeak(stages, 'index opened');
  try {
    const retriever = benchRetriever(corpus, o);
    const tokens = bpeTokenCounter();
    const reader = new ExtractiveReader();
    const critic = new RuleCritic();
    const askOnce = async (q: string): Promise<number> => {
      const t = await timed(() =>
        ask(
          q,
          benchAskOptions(o),
          { retriever, embedQuery: o.embeddings.embedQuery, embedTexts: o.embeddings.embedTexts, critic, reader, tokens, index: { root: indexDir, generation: corpus.generation, items: corpus.itemCount } },
        ),
      );
      return t.seconds * 1000;
    };
    const cold: number[] = [];
    for (const q of o.queries) cold.push(await askOnce(q));
    stagePeak(stages, 'cold pass');
    const warmQ: number[] = [];
    for (const q of o.queries) warmQ.push(await askOnce(q));
    stagePeak(stages, 'warm pass');
    const retrieveOnly: number[] = [];
    for (const q of o.queries) retrieveOnly.push((await timed(() => retriever.retrieve(q, o.topK))).seconds * 1000);
    stagePeak(stages, 'retrieval');
    const files = Object.keys(corpus.manifest.files).length;
    return { documents: files, items: corpus.itemCount, query: { cold: latency(cold), warm: latency(warmQ), retrieveOnly: latency(retrieveOnly), openSeconds: opened.seconds }, stages, peakRssMiB: peakRssMiB() };
  } finally {
    await corpus.close();
  }
}

export interface InTurnResult {
  indexes: Array<{
    indexDir: string;
    /** `against`: the second compressor / node score on the same index (`canopyQueryInTurn`'s `against`). */
    variant?: 'against';
    compressor: CompressorSetting;
    nodeScore?: NodeScoreWeights;
    /** What the trace records about retrieval (the fusion timed). */
    retrieval: AskOptions['retrieval'];
    documents: number;
    items: number;
    openSeconds: number;
    query: { first: Latency; warm: Latency; retrieveOnly: Latency };
    /** Per question, this run's warm latency over the first run's (its median and quartiles), beside the ratio of p50s. */
    warmRatio?: { median: number; q1: number; q3: number };
  }>;
  stages: StagePeaks;
  peakRssMiB: number;
}

/** The CANOPY choices a run in turn compares (the options' own, or `against`). */
export type CanopyChoice = Pick<CorpusBenchOptions, 'compressor' | 'nodeScore' | 'fusion'>;

/**
 * Several indexes answered in turn, question by question (index A, index B, …, next question), so
 * a change of machine load during the run falls on every index alike: the growth ratio of two
 * corpus sizes from one run. With `against`, every index is also answered with that compressor and
 * node score, in turn with the options' own (A, A against, B, …): the latency ratio of two
 * configurations from one run. A first pass (every question on every run) fills the caches; then
 * the warm ask pipeline and the hybrid retriever alone are timed. One process holds every index,
 * so its peak RSS is theirs together (each index's own is `canopyQuery`'s).
 */
export async function canopyQueryInTurn(o: AskChoice & Pick<CorpusBenchOptions, 'queries'>, indexDirs: readonly string[], against?: CanopyChoice): Promise<InTurnResult> {
  const stages: StagePeaks = [];
  stagePeak(stages, 'start');
  type Run = { dir: string; corpus: CorpusIndex; openSeconds: number; retriever: HybridRetriever; options: AskOptions; against: boolean };
  const runs: Run[] = [];
  const opened: CorpusIndex[] = [];
  for (const dir of indexDirs) {
    const t = await timed(() => CorpusIndex.open(new LocalStore(dir), { maxCachedDocs: 256 }));
    opened.push(t.value);
    const base = { dir, corpus: t.value, openSeconds: t.seconds };
    runs.push({ ...base, retriever: benchRetriever(t.value, o), options: benchAskOptions(o), against: false });
    if (against) {
      const other = { ...o, compressor: against.compressor, nodeScore: against.nodeScore, fusion: against.fusion ?? o.fusion };
      runs.push({ ...base, retriever: benchRetriever(t.value, other), options: benchAskOptions(other), against: true });
    }
  }
  stagePeak(stages, 'indexes opened');
  try {
    const tokens = bpeTokenCounter();
    const reader = new ExtractiveReader();
    const critic = new RuleCritic();
    const askOnce = async (x: Run, q: string): Promise<number> =>
      (
        await timed(() =>
          ask(q, x.options, { retriever: x.retriever, embedQuery: o.embeddings.embedQuery, embedTexts: o.embeddings.embedTexts, critic, reader, tokens, index: { root: x.dir, generation: x.corpus.generation, items: x.corpus.itemCount } }),
        )
      ).seconds * 1000;
    const first = runs.map(() => [] as number[]);
    const warm = runs.map(() => [] as number[]);
    const retrieveOnly = runs.map(() => [] as number[]);
    for (const q of o.queries) for (let i = 0; i < runs.length; i++) first[i]!.push(await askOnce(runs[i]!, q));
    stagePeak(stages, 'first pass');
    for (const q of o.queries) for (let i = 0; i < runs.length; i++) warm[i]!.push(await askOnce(runs[i]!, q));
    stagePeak(stages, 'warm pass');
    for (const q of o.queries) for (let i = 0; i < runs.length; i++) retrieveOnly[i]!.push((await timed(() => runs[i]!.retriever.retrieve(q, o.topK))).seconds * 1000);
    stagePeak(stages, 'retrieval');
    return {
      indexes: runs.map((x, i) => ({
        indexDir: x.dir,
        ...(x.against ? { variant: 'against' as const } : {}),
        compressor: x.options.compressor,
        ...(x.options.nodeScore ? { nodeScore: x.options.nodeScore } : {}),
        retrieval: x.options.retrieval,
        documents: Object.keys(x.corpus.manifest.files).length,
        items: x.corpus.itemCount,
        openSeconds: x.openSeconds,
        query: { first: latency(first[i]!), warm: latency(warm[i]!), retrieveOnly: latency(retrieveOnly[i]!) },
        ...(i > 0 ? { warmRatio: ratioSpread(warm[i]!, warm[0]!) } : {}),
      })),
      stages,
      peakRssMiB: peakRssMiB(),
    };
  } finally {
    for (const c of opened) await c.close();
  }
}

/** Median and quartiles of the per-question ratios a[i] / b[i]. */
export function ratioSpread(a: readonly number[], b: readonly number[]): { median: number; q1: number; q3: number } {
  const r = a.map((x, i) => x / b[i]!).sort((x, y) => x - y);
  const at = (p: number) => {
    const pos = p * (r.length - 1);
    const lo = Math.floor(pos);
    return r[lo]! + (r[Math.min(lo + 1, r.length - 1)]! - r[lo]!) * (pos - lo);
  };
  return { median: at(0.5), q1: at(0.25), q3: at(0.75) };
}

async function canopyBench(o: CorpusBenchOptions): Promise<CorpusBenchResult> {
  const b = await canopyBuild(o);
  const q = await canopyQuery(o, b.indexDir);
  return {
    engine: 'canopy',
    documents: b.documents,
    items: b.items,
    nodes: b.nodes,
    first: b.first,
    warm: b.warm,
    warmMedianSeconds: b.warmMedianSeconds,
    docsPerSecond: b.docsPerSecond,
    nodesPerSecond: b.nodesPerSecond,
    indexBytes: b.indexBytes,
    query: q.query,
    peakRssMiB: peakRssMiB(),
  };
}

async function vectraBench(o: CorpusBenchOptions): Promise<CorpusBenchResult> {
  const embed = { embedTexts: (t: string[]) => o.embeddings.embedTexts(t) };
  const build = async (dir: string): Promise<BuildRun & { chunks: number }> => {
    const before = o.embeddings.encoded;
    const t = await timed(async () => {
      const peer = await VectraPeer.create(dir, embed, { chunkSize: o.peerChunkSize });
      await peer.addBulk(o.docs.map((d) => ({ id: d.id, text: d.text })));
      return peer.chunkCount;
    });
    return { seconds: t.seconds, cpuSeconds: t.cpuSeconds, encodedTexts: o.embeddings.encoded - before, chunks: await t.value };
  };
  const dir = join(o.workDir, `vectra-c${o.peerChunkSize}`);
  const first = await build(dir);
  await o.embeddings.save();
  const warm: BuildRun[] = [];
  for (let r = 0; r < o.repeats; r++) {
    const d = join(o.workDir, `vectra-warm-${r}`);
    const w = await build(d);
    warm.push({ seconds: w.seconds, cpuSeconds: w.cpuSeconds, encodedTexts: w.encodedTexts });
    rmSync(d, { recursive: true, force: true });
  }
  const warmMedian = warm.length > 0 ? median(warm.map((w) => w.seconds)) : first.seconds;
  const opened = await timed(() => VectraPeer.open(dir, embed, { chunkSize: o.peerChunkSize }));
  const peer = opened.value;
  const run = async (q: string, budget: number) => (await timed(() => peer.retrieveAndRender(q, budget, { maxDocuments: o.topK, maxChunks: 50, bm25: false }))).seconds * 1000;
  const cold: number[] = [];
  for (const q of o.queries) cold.push(await run(q, o.peerBudget));
  const warmQ: number[] = [];
  for (const q of o.queries) warmQ.push(await run(q, o.peerBudget));
  const retrieveOnly: number[] = [];
  for (const q of o.queries) retrieveOnly.push(await run(q, 0));
  return {
    engine: 'vectra',
    documents: o.docs.length,
    items: o.docs.length,
    nodes: first.chunks,
    chunks: first.chunks,
    first: { seconds: first.seconds, cpuSeconds: first.cpuSeconds, encodedTexts: first.encodedTexts },
    warm,
    warmMedianSeconds: warmMedian,
    docsPerSecond: o.docs.length / warmMedian,
    nodesPerSecond: first.chunks / warmMedian,
    indexBytes: folderBytes(dir),
    query: { cold: latency(cold), warm: latency(warmQ), retrieveOnly: latency(retrieveOnly), openSeconds: opened.seconds },
    peakRssMiB: peakRssMiB(),
  };
}
