/**
 * `canopy bench vectors`: eager (index time) against lazy (query time, cached) node vectors, from
 * an empty embedding cache each (see eval/bench/vectorsBench.ts).
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { machine, peakRssMiB } from '../../eval/bench/measure';
import { runVectorsBench } from '../../eval/bench/vectorsBench';
import type { CliIO } from '../io';
import { packageRoot } from '../runtime';
import { benchDocs, benchQueries, evalCacheDir, positive } from './benchShared';

export const benchVectorsHelp = `Usage: canopy bench vectors --pool <file>... --queries <file> [options]

Options:
  --pool <file>        pool / corpus JSONL (repeatable)
  --docs <n>           documents indexed (default 2000)
  --queries <file>     questions (any file canopy eval reads)
  --query-count <n>    questions per pass (default 50)
  --work <dir>         work folder (default <cache>/bench/vectors-<n>)
  --cache <dir>        cache root (default ~/.cache/canopy-eval)
  --json               print one JSON object`;

export async function runBenchVectors(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      pool: { type: 'string', multiple: true },
      docs: { type: 'string' },
      queries: { type: 'string' },
      'query-count': { type: 'string' },
      work: { type: 'string' },
      cache: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const docs = benchDocs(io, values.pool, positive(values.docs, '--docs', 2000));
  const queries = benchQueries(io, values.queries, positive(values['query-count'], '--query-count', 50));
  const cache = evalCacheDir(io, values.cache);
  const result = await runVectorsBench({
    docs,
    queries,
    workDir: path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `vectors-${docs.length}`)),
    encoder: { kind: 'builtin' },
    builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'),
    branchingFactor: 2,
    topK: 10,
    rounds: 3,
  });
  if (values.json) io.out(JSON.stringify({ machine: machine(), result, peakRssMiB: peakRssMiB() }));
  else {
    for (const v of result.variants) {
      io.out(
        `${v.mode}: index ${v.indexSeconds.toFixed(1)} s (${v.indexEncodedTexts} texts encoded); queries pass 1 p50/p95 ${v.query.first.p50.toFixed(0)}/${v.query.first.p95.toFixed(0)} ms (${v.query.encodedDuringFirst} encoded), pass 2 ${v.query.second.p50.toFixed(0)}/${v.query.second.p95.toFixed(0)} ms`,
      );
    }
    io.out(`break-even after ${result.breakEvenQueries.toFixed(0)} queries; the query set needed ${(100 * result.nodesTouchedShare).toFixed(1)}% of the texts eager indexing encodes`);
  }
  return 0;
}
