/**
 * `canopy bench corpus`: indexing throughput, index size, peak RSS and query latency of one
 * engine (Canopy or the vectra peer) over N pool documents (see eval/bench/corpusBench.ts).
 * One engine per process, so the peak RSS is that engine's.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareBenchCache, runCorpusBench } from '../../eval/bench/corpusBench';
import { machine } from '../../eval/bench/measure';
import { openEvalEmbeddings } from '../../eval/embeddings';
import { type CliIO, UsageError } from '../io';
import { cliLogger, packageRoot } from '../runtime';
import { benchDocs, benchQueries, evalCacheDir, positive } from './benchShared';

export const benchCorpusHelp = `Usage: canopy bench corpus --pool <file>... --queries <file> [options]

Options:
  --pool <file>        pool / corpus JSONL or SQuAD articles (repeatable; their union, in order)
  --docs <n>           the first n documents (default: all)
  --queries <file>     questions for latency (any file canopy eval reads)
  --query-count <n>    questions per pass (default 50)
  --engine <e>         canopy (default) | vectra
  --repeats <n>        warm rebuilds; the median is reported (default 3)
  --peer-chunk <n>     vectra chunk size in tokens (default 512, vectra's own default)
  --peer-budget <n>    vectra renderSections token budget per query (default 1000)
  --cache <dir>        embedding cache folder root (default ~/.cache/canopy-eval)
  --work <dir>         where the indexes are built (default <cache>/bench/corpus-<engine>-<n>)
  --prepare            only fill <work>/emb, the corpus's own embedding cache, from the shared
                       cache (encoding what it lacks); run it before measuring, in its own process,
                       so the measuring process holds only this corpus's vectors
  --json               print one JSON object

Measuring reads vectors from <work>/emb (texts missing there are encoded, and counted).`;

export async function runBenchCorpus(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      pool: { type: 'string', multiple: true },
      docs: { type: 'string' },
      queries: { type: 'string' },
      'query-count': { type: 'string' },
      engine: { type: 'string' },
      repeats: { type: 'string' },
      'peer-chunk': { type: 'string' },
      'peer-budget': { type: 'string' },
      cache: { type: 'string' },
      work: { type: 'string' },
      json: { type: 'boolean' },
      prepare: { type: 'boolean' },
      verbose: { type: 'boolean' },
    },
  });
  const engine = values.engine ?? 'canopy';
  if (engine !== 'canopy' && engine !== 'vectra') throw new UsageError('--engine must be canopy or vectra');
  const docs = benchDocs(io, values.pool, values.docs === undefined ? undefined : positive(values.docs, '--docs', 1));
  const queries = benchQueries(io, values.queries, positive(values['query-count'], '--query-count', 50));
  const cache = evalCacheDir(io, values.cache);
  const workDir = path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `corpus-${engine}-${docs.length}`));
  const builtinModelDir = path.join(packageRoot(), 'models', 'use-lite');
  const peerChunkSize = positive(values['peer-chunk'], '--peer-chunk', 512);
  if (values.prepare) {
    const source = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir, cacheDir: path.join(cache, 'embeddings') });
    try {
      const r = await prepareBenchCache({ engine, docs, queries, cacheDir: path.join(workDir, 'emb'), source, branchingFactor: 2, peerChunkSize });
      io.out(values.json ? JSON.stringify({ prepared: r }) : `prepared ${r.texts} vectors in ${path.join(workDir, 'emb')} (${r.encodedTexts} encoded)`);
      return 0;
    } finally {
      await source.dispose();
    }
  }
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir, cacheDir: path.join(workDir, 'emb') });
  try {
    const result = await runCorpusBench({
      engine,
      docs,
      queries,
      workDir,
      embeddings,
      repeats: positive(values.repeats, '--repeats', 3),
      branchingFactor: 2,
      topK: 10,
      rounds: 3,
      peerChunkSize,
      peerBudget: positive(values['peer-budget'], '--peer-budget', 1000),
      logger: cliLogger(io, values.verbose ?? false),
    });
    const out = { machine: machine(), result };
    if (values.json) io.out(JSON.stringify(out));
    else {
      const r = result;
      io.out(`${r.engine}: ${r.documents} documents, ${r.nodes} ${r.engine === 'vectra' ? 'chunks' : 'nodes'}; first build ${r.first.seconds.toFixed(1)} s (${r.first.encodedTexts} texts encoded); warm rebuild median ${r.warmMedianSeconds.toFixed(1)} s = ${r.docsPerSecond.toFixed(0)} docs/s, ${r.nodesPerSecond.toFixed(0)} nodes/s; index ${(r.indexBytes / 2 ** 20).toFixed(1)} MiB; peak RSS ${r.peakRssMiB.toFixed(0)} MiB`);
      io.out(`query ms p50/p95: cold ${r.query.cold.p50.toFixed(0)}/${r.query.cold.p95.toFixed(0)}, warm ${r.query.warm.p50.toFixed(0)}/${r.query.warm.p95.toFixed(0)}, retrieval only ${r.query.retrieveOnly.p50.toFixed(0)}/${r.query.retrieveOnly.p95.toFixed(0)}`);
    }
    return 0;
  } finally {
    await embeddings.dispose();
  }
}
