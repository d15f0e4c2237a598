/**
 * The storage port at corpus scale, one store per process (so its peak RSS is that store's):
 * write a generation of N pool documents (item vectors from the evaluation cache, BM25 or the
 * database's full text, parsed documents), build the vector index (Postgres: HNSW), open it, and
 * for each question time dense top-k, lexical top-k and the hybrid retriever (the one `ask` runs
 * per round); recall@10 of the store's dense and hybrid rankings against exact search (a
 * brute-force scan of the same vectors); and, on an unreplicated corpus with gold documents,
 * recall@10 of the gold documents for the lexical, dense and hybrid rankings (how the two
 * lexical rankings compare in quality).
 *
 * Above the pools' size the corpus is replicated: copy r of a document gets a fresh id and its
 * item vector jittered (unit noise of norm `jitter`, renormalised), so copies are distinct
 * points near their original rather than exact ties that would make "recall against exact"
 * depend on tie-breaking. Their texts are the original's.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Item } from '../../contracts/region';
import { CorpusIndex } from '../../core/index/corpusIndex';
import type { IndexStore, ItemRecord } from '../../core/index/indexStore';
import { INDEX_FORMAT, type FileEntry, type IndexManifest } from '../../core/index/layout';
import { LocalStore } from '../../core/index/localStore';
import { PgliteHost } from '../../core/index/pgliteHost';
import { defaultHnsw, PostgresStore, type HnswParameters } from '../../core/index/postgresStore';
import type { ParsedDocument } from '../../core/ingest/parsedDocument';
import { reciprocalRankFusion } from '../../core/retrieve/fusion';
import { HybridRetriever } from '../../core/retrieve/hybrid';
import type { EvalQuestion, PoolDoc } from '../datasets/types';
import type { EvalEmbeddings } from '../embeddings';
import { poolDocItem } from '../items';
import { poolFileOf } from '../poolIndex';
import { folderBytes, latency, peakRssMiB, timed, type Latency } from './measure';

export type StoreKind = 'local' | 'local-i8' | 'pglite' | 'pglite-socket';

export interface StoreBenchOptions {
  store: StoreKind;
  lexical: 'tsvector' | 'bm25';
  hnsw: Partial<HnswParameters>;
  docs: PoolDoc[];
  /** Documents in the corpus: more than `docs` replicates them. */
  documents: number;
  jitter: number;
  questions: EvalQuestion[];
  workDir: string;
  embeddings: EvalEmbeddings;
  branchingFactor: number;
  /** Postgres: maintenance_work_mem for the HNSW build. */
  maintenanceWorkMem?: string;
  /** PGlite: a data folder to start from (PgliteHost.dump) instead of initialising one. */
  pgliteTemplate?: Uint8Array;
  log?: (line: string) => void;
}

export interface StoreBenchResult {
  store: StoreKind;
  lexical: 'bm25' | 'tsvector';
  hnsw?: HnswParameters;
  documents: number;
  originals: number;
  jitter: number;
  dim: number;
  /** Writing the generation: documents, item vectors, lexical index, commit. */
  writeSeconds: number;
  /** Postgres: building the HNSW index after the load. */
  vectorIndexSeconds?: number;
  openSeconds: number;
  storeBytes: number;
  query: { dense: Latency; lexical: Latency; hybrid: Latency; hybridCold: Latency };
  /** Mean over the questions of |store top-10 ∩ exact top-10| / 10. */
  recallVsExact: { dense: number; hybrid: number };
  /** Unreplicated corpora with gold documents: mean share of a question's gold documents in the top 10. */
  gold?: { questions: number; lexical: number; dense: number; hybrid: number };
  peakRssMiB: number;
}

function seededNoise(id: string, dim: number): Float32Array {
  const h = createHash('sha256').update(id).digest();
  let s = h.readUInt32LE(0) || 1;
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    v[i] = ((s >>> 0) / 2 ** 32) * 2 - 1;
  }
  return v;
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
}

function jittered(v: Float32Array, id: string, jitter: number): Float32Array {
  const noise = unit(seededNoise(id, v.length));
  return unit(v.map((x, i) => x + jitter * noise[i]!));
}

const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

function topExact(records: readonly ItemRecord[], q: Float32Array, k: number): Array<{ id: string; score: number }> {
  const best: Array<{ id: string; score: number }> = [];
  for (const r of records) {
    const s = dot(q, r.vector);
    if (best.length < k || s > best[best.length - 1]!.score) {
      best.push({ id: r.id, score: s });
      best.sort((a, b) => b.score - a.score);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

const overlap = (a: readonly string[], b: readonly string[]) => {
  const set = new Set(b);
  return a.filter((x) => set.has(x)).length;
};

async function openStore(o: StoreBenchOptions): Promise<{ store: IndexStore; host?: PgliteHost; dir: string }> {
  const dir = join(o.workDir, o.store);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (o.store === 'local' || o.store === 'local-i8') return { store: new LocalStore(dir, { vectorEncoding: o.store === 'local-i8' ? 'i8' : 'f32' }), dir };
  const host = await PgliteHost.open(join(dir, 'pgdata'), o.pgliteTemplate ? { template: o.pgliteTemplate } : {});
  if (o.maintenanceWorkMem) await host.db.exec(`SET maintenance_work_mem = '${o.maintenanceWorkMem.replace(/[^0-9A-Za-z]/g, '')}'`);
  const common = { schema: 'bench', lexical: o.lexical, hnsw: o.hnsw, vectorIndex: false } as const;
  if (o.store === 'pglite') return { store: new PostgresStore({ ...common, pool: await host.pool() }), host, dir };
  const server = await host.serve({ maxConnections: 16 });
  return { store: new PostgresStore({ ...common, connectionString: server.url, poolSize: 4 }), host, dir };
}

export async function runStoreBench(o: StoreBenchOptions): Promise<StoreBenchResult> {
  const log = o.log ?? (() => undefined);
  mkdirSync(o.workDir, { recursive: true });
  // Items and their root vectors (the indexer's item vector: the root's own text through the cache).
  const originals = o.docs.map((d) => {
    const file = poolFileOf(d.id);
    const { item } = poolDocItem(file, d, o.branchingFactor);
    return { doc: d, file, item };
  });
  const rootTexts = originals.map((x) => (x.item ? (x.item.root.header ? `${x.item.root.header}\n${x.item.root.text}` : x.item.root.text) : ''));
  const rootVectors: Float32Array[] = [];
  for (let i = 0; i < rootTexts.length; i += 2000) rootVectors.push(...(await o.embeddings.embedTexts(rootTexts.slice(i, i + 2000))));
  const dim = rootVectors[0]!.length;
  const records: ItemRecord[] = [];
  const documents: Array<{ key: string; file: string; doc: ParsedDocument; item: Item }> = [];
  for (let r = 0; records.length < o.documents; r++) {
    for (let i = 0; i < originals.length && records.length < o.documents; i++) {
      const x = originals[i]!;
      if (!x.item) continue;
      const suffix = r === 0 ? '' : `~${r}`;
      const item: Item = { ...x.item, id: `${x.item.id}${suffix}`, file: `${x.file}${suffix}` };
      const vector = r === 0 ? unit(rootVectors[i]!) : jittered(rootVectors[i]!, item.id, o.jitter);
      records.push({ id: item.id, file: item.file, modality: item.modality, title: item.title, text: item.root.text, vector });
      const doc: ParsedDocument = { file: item.file, format: 'json', title: x.doc.title, items: [item], warnings: [], stats: { bytes: 0, parseMs: 0, leaves: 0, nodes: 0 } };
      documents.push({ key: createHash('sha256').update(`${item.file}\0${r}`).digest('hex'), file: item.file, doc, item });
    }
  }
  const files: Record<string, FileEntry> = {};
  for (const d of documents) files[d.file] = { hash: d.key, size: 0, mtimeMs: 0, format: 'json', doc: d.key, items: [d.item.id], nodes: 1, warnings: [] };
  const manifest: IndexManifest = { format: INDEX_FORMAT, generation: 1, createdAt: new Date().toISOString(), root: o.workDir, encoderId: o.embeddings.id, branchingFactor: o.branchingFactor, parserVersion: 'bench-store', files, errors: [], skipped: [] };

  const { store, host, dir } = await openStore(o);
  try {
    log(`${o.store}: writing ${records.length} items (${originals.length} originals)`);
    const write = await timed(async () => {
      const release = await store.lockWriter();
      try {
        await store.recover();
        for (let i = 0; i < documents.length; i += 16) await Promise.all(documents.slice(i, i + 16).map((d) => store.putDocument(d.key, d.doc)));
        await store.writeGeneration(undefined, 1, { upsert: records, remove: [] });
        await store.commit(manifest);
      } finally {
        await release();
      }
    });
    log(`${o.store}: written in ${write.seconds.toFixed(1)} s`);
    let vectorIndexSeconds: number | undefined;
    if (store instanceof PostgresStore) {
      const t = await timed(() => store.ensureVectorIndex());
      vectorIndexSeconds = t.seconds;
      log(`${o.store}: HNSW index built in ${t.seconds.toFixed(1)} s`);
    }
    const opened = await timed(() => CorpusIndex.open(store, { maxCachedDocs: 256 }));
    const corpus = opened.value;
    const queryVectors = new Map<string, Float32Array>();
    for (const q of o.questions) queryVectors.set(q.question, await o.embeddings.embedQuery(q.question));
    const embedQuery = async (t: string) => queryVectors.get(t) ?? o.embeddings.embedQuery(t);
    const retriever = new HybridRetriever(corpus, embedQuery);
    const ms = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
      const t = await timed(fn);
      return [t.seconds * 1000, t.value];
    };
    const hybridCold: number[] = [];
    for (const q of o.questions) hybridCold.push((await ms(() => retriever.retrieve(q.question, 10)))[0]);
    const dense: number[] = [];
    const lexical: number[] = [];
    const hybrid: number[] = [];
    let recallDense = 0;
    let recallHybrid = 0;
    const gold = { questions: 0, lexical: 0, dense: 0, hybrid: 0 };
    const docOfItem = new Map(originals.filter((x) => x.item).map((x) => [x.item!.id, x.doc.id]));
    for (const q of o.questions) {
      const qv = queryVectors.get(q.question)!;
      const [dMs, d] = await ms(() => corpus.vectors.query(qv, 50));
      const [lMs, l] = await ms(() => corpus.lexical.query(q.question, 50));
      const [hMs, h] = await ms(() => retriever.retrieve(q.question, 10));
      dense.push(dMs);
      lexical.push(lMs);
      hybrid.push(hMs);
      const exact = topExact(records, qv, 50);
      recallDense += overlap(d.slice(0, 10).map((x) => x.id), exact.slice(0, 10).map((x) => x.id)) / 10;
      const exactHybrid = reciprocalRankFusion([exact, l], 60).slice(0, 10).map((f) => f.id);
      recallHybrid += overlap(h.items.map((x) => x.item.id), exactHybrid) / 10;
      const golds = [...q.goldDocs].filter(([, g]) => g > 0).map(([id]) => id);
      if (o.documents === originals.length && golds.length > 0) {
        const share = (ids: string[]) => golds.filter((g) => ids.slice(0, 10).some((id) => docOfItem.get(id) === g)).length / golds.length;
        gold.questions++;
        gold.lexical += share(l.map((x) => x.id));
        gold.dense += share(d.map((x) => x.id));
        gold.hybrid += share(h.items.map((x) => x.item.id));
      }
    }
    const n = o.questions.length;
    const storeBytes = folderBytes(dir);
    await corpus.close();
    return {
      store: o.store,
      lexical: o.store.startsWith('local') ? 'bm25' : o.lexical,
      ...(store instanceof PostgresStore ? { hnsw: { ...defaultHnsw, ...o.hnsw } } : {}),
      documents: records.length,
      originals: originals.length,
      jitter: o.jitter,
      dim,
      writeSeconds: write.seconds,
      ...(vectorIndexSeconds !== undefined ? { vectorIndexSeconds } : {}),
      openSeconds: opened.seconds,
      storeBytes,
      query: { dense: latency(dense), lexical: latency(lexical), hybrid: latency(hybrid), hybridCold: latency(hybridCold) },
      recallVsExact: { dense: recallDense / n, hybrid: recallHybrid / n },
      ...(gold.questions > 0 ? { gold: { questions: gold.questions, lexical: gold.lexical / gold.questions, dense: gold.dense / gold.questions, hybrid: gold.hybrid / gold.questions } } : {}),
      peakRssMiB: peakRssMiB(),
    };
  } finally {
    await store.close();
    await host?.close();
  }
}
