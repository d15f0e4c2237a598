/**
 * `canopy bench store`: the storage port at corpus scale for one store — local, local with int8
 * vectors, PGlite in-process or PGlite over its socket — (see eval/bench/storeBench.ts). One
 * store per process, so the peak RSS is that store's.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { machine } from '../../eval/bench/measure';
import { runStoreBench, type StoreKind } from '../../eval/bench/storeBench';
import { loadDataset } from '../../eval/bench/poolDocs';
import { openEvalEmbeddings } from '../../eval/embeddings';
import { type CliIO, UsageError } from '../io';
import { packageRoot } from '../runtime';
import { benchDocs, evalCacheDir, positive } from './benchShared';

export const benchStoreHelp = `Usage: canopy bench store --pool <file>... --queries <file> --store <store> [options]

Options:
  --pool <file>           pool / corpus JSONL or SQuAD articles (repeatable; their union, in order)
  --docs <n>              the first n documents (default: all)
  --replicate-to <n>      replicate them up to n documents (fresh ids, jittered item vectors)
  --jitter <x>            norm of the jitter of a replica's vector (default 0.05)
  --queries <file>        questions (any file canopy eval reads; gold documents give recall)
  --query-count <n>       questions (default 50)
  --store <s>             local | local-i8 | pglite | pglite-socket
  --lexical <l>           Postgres: tsvector (default) | bm25
  --m <n> --ef-construction <n> --ef-search <n>   HNSW parameters (default 16, 64, 100)
  --maintenance-work-mem <v>  Postgres: memory for the HNSW build (e.g. 512MB)
  --cache <dir>           embedding cache folder root (default ~/.cache/canopy-eval)
  --work <dir>            where the store is built (default <cache>/bench/store-<store>-<n>)
  --json                  print one JSON object`;

const stores: StoreKind[] = ['local', 'local-i8', 'pglite', 'pglite-socket'];

export async function runBenchStore(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      pool: { type: 'string', multiple: true },
      docs: { type: 'string' },
      'replicate-to': { type: 'string' },
      jitter: { type: 'string' },
      queries: { type: 'string' },
      'query-count': { type: 'string' },
      store: { type: 'string' },
      lexical: { type: 'string' },
      m: { type: 'string' },
      'ef-construction': { type: 'string' },
      'ef-search': { type: 'string' },
      'maintenance-work-mem': { type: 'string' },
      cache: { type: 'string' },
      work: { type: 'string' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
    },
  });
  const store = values.store as StoreKind;
  if (!stores.includes(store)) throw new UsageError(`--store must be one of ${stores.join(', ')}`);
  const lexical = values.lexical ?? 'tsvector';
  if (lexical !== 'tsvector' && lexical !== 'bm25') throw new UsageError('--lexical must be tsvector or bm25');
  const docs = benchDocs(io, values.pool, values.docs === undefined ? undefined : positive(values.docs, '--docs', 1));
  const documents = Math.max(docs.length, values['replicate-to'] === undefined ? 0 : positive(values['replicate-to'], '--replicate-to', 1));
  const jitter = values.jitter === undefined ? 0.05 : Number(values.jitter);
  if (!(jitter >= 0 && jitter < 1)) throw new UsageError('--jitter must be in [0, 1)');
  if (!values.queries) throw new UsageError('give the questions with --queries <file>');
  const questions = loadDataset(path.resolve(io.cwd, values.queries)).questions.slice(0, positive(values['query-count'], '--query-count', 50));
  const cache = evalCacheDir(io, values.cache);
  const workDir = path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `store-${store}-${documents}`));
  const hnsw = {
    ...(values.m ? { m: positive(values.m, '--m', 16) } : {}),
    ...(values['ef-construction'] ? { efConstruction: positive(values['ef-construction'], '--ef-construction', 64) } : {}),
    ...(values['ef-search'] ? { efSearch: positive(values['ef-search'], '--ef-search', 100) } : {}),
  };
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'), cacheDir: path.join(cache, 'embeddings') });
  try {
    const result = await runStoreBench({
      store,
      lexical,
      hnsw,
      docs,
      documents,
      jitter,
      questions,
      workDir,
      embeddings,
      branchingFactor: 2,
      ...(values['maintenance-work-mem'] ? { maintenanceWorkMem: values['maintenance-work-mem'] } : {}),
      log: values.verbose ? (l) => io.err(l) : () => undefined,
    });
    const out = { machine: machine(), result };
    if (values.json) io.out(JSON.stringify(out));
    else {
      const r = result;
      const lat = (l: { p50: number; p95: number }) => `${l.p50.toFixed(1)}/${l.p95.toFixed(1)}`;
      io.out(`${r.store} (${r.lexical}${r.hnsw ? `, HNSW m=${r.hnsw.m} ef_construction=${r.hnsw.efConstruction} ef_search=${r.hnsw.efSearch}` : ''}): ${r.documents} documents (${r.originals} originals); write ${r.writeSeconds.toFixed(1)} s${r.vectorIndexSeconds !== undefined ? `, HNSW ${r.vectorIndexSeconds.toFixed(1)} s` : ''}, open ${r.openSeconds.toFixed(2)} s, ${(r.storeBytes / 2 ** 20).toFixed(1)} MiB, peak RSS ${r.peakRssMiB.toFixed(0)} MiB`);
      io.out(`ms p50/p95: dense ${lat(r.query.dense)}, lexical ${lat(r.query.lexical)}, hybrid ${lat(r.query.hybrid)} (cold ${lat(r.query.hybridCold)}); recall@10 vs exact: dense ${r.recallVsExact.dense.toFixed(3)}, hybrid ${r.recallVsExact.hybrid.toFixed(3)}`);
      if (r.gold) io.out(`gold documents in the top 10 (${r.gold.questions} questions): lexical ${r.gold.lexical.toFixed(3)}, dense ${r.gold.dense.toFixed(3)}, hybrid ${r.gold.hybrid.toFixed(3)}`);
    }
    return 0;
  } finally {
    await embeddings.dispose();
  }
}
