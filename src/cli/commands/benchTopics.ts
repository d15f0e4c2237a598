/**
 * `canopy bench topics <file>`: query latency with and without the topic compass on a dataset's
 * open pool (see eval/bench/topicsBench.ts).
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { machine } from '../../eval/bench/measure';
import { runTopicsBench } from '../../eval/bench/topicsBench';
import { parseCoarse, type CoarseSpec } from '../../eval/datasets/coarse';
import { type CliIO, UsageError } from '../io';
import { packageRoot } from '../runtime';
import { evalCacheDir, positive } from './benchShared';

export const benchTopicsHelp = `Usage: canopy bench topics <file> [options]

Query latency of the topic compass (default retrieval + compass re-ranking) against the default retrieval alone, on the
open pool of a dataset file (the cached pool index of canopy eval --mode pool). The scorer trains
on a seeded split of the questions; the held-back questions are timed.

Options:
  -k, --top-k <n>       items per retrieval (default 10)
  --holdout <share>     share of questions held back and timed (default 0.5)
  --limit <n>           time at most n held-back questions
  --repeat <n>          passes over the questions (default 3)
  --seed <n>            split and training seed (default 1)
  --pool-chunks <g>     coarse items: title, title:N or N (as canopy eval --pool-chunks)
  --cache <dir>         cache root (default ~/.cache/canopy-eval)
  --json                print one JSON object`;

export async function runBenchTopics(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'top-k': { type: 'string', short: 'k' },
      holdout: { type: 'string' },
      limit: { type: 'string' },
      repeat: { type: 'string' },
      seed: { type: 'string' },
      'pool-chunks': { type: 'string' },
      cache: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('bench topics needs one dataset file');
  const holdout = values.holdout === undefined ? 0.5 : Number(values.holdout);
  if (!(holdout > 0 && holdout < 1)) throw new UsageError('--holdout must be a share between 0 and 1');
  let poolChunks: CoarseSpec | undefined;
  try {
    if (values['pool-chunks'] !== undefined) poolChunks = parseCoarse(values['pool-chunks']);
  } catch (err) {
    throw new UsageError(`--pool-chunks: ${(err as Error).message}`);
  }
  const result = await runTopicsBench({
    file: path.resolve(io.cwd, positionals[0]!),
    cacheDir: evalCacheDir(io, values.cache),
    encoder: { kind: 'builtin' },
    builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'),
    topK: positive(values['top-k'], '--top-k', 10),
    seed: values.seed === undefined ? 1 : positive(values.seed, '--seed', 1),
    holdout,
    repeat: positive(values.repeat, '--repeat', 3),
    ...(values.limit ? { limit: positive(values.limit, '--limit', 1) } : {}),
    ...(poolChunks ? { poolChunks } : {}),
    onProgress: (m) => io.err(`bench: ${m}`),
  });
  if (values.json) io.out(JSON.stringify({ machine: machine(), result }));
  else {
    const f = (l: { p50: number; p95: number }) => `p50 ${l.p50.toFixed(1)} ms, p95 ${l.p95.toFixed(1)} ms`;
    io.out(`topics bench: ${result.timedQuestions} held-back questions × ${result.repeat}, k ${result.topK}, ${result.poolDocuments} pool documents, K ${result.k}`);
    io.out(`  query vector (cached lookup):     ${f(result.queryVectorMs)}`);
    io.out(`  hybrid retrieval:                 ${f(result.hybridMs)}`);
    io.out(`  hybrid + topic compass:           ${f(result.compassMs)}`);
    io.out(`  overhead per query:               ${f(result.overheadMs)}`);
  }
  return 0;
}
