/**
 * Flag helpers shared by the `canopy bench` corpus, index and vectors commands: where the cache
 * and work folders are, which documents and questions to use.
 */
import { homedir } from 'node:os';
import * as path from 'node:path';
import { readBenchDocs, loadDataset } from '../../eval/bench/poolDocs';
import type { PoolDoc } from '../../eval/datasets/types';
import { type CliIO, UsageError } from '../io';

export function positive(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
  return n;
}

export function nonNegative(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a non-negative integer`);
  return n;
}

export function evalCacheDir(io: CliIO, value: string | undefined): string {
  return path.resolve(io.cwd, value ?? io.env.CANOPY_EVAL_CACHE ?? path.join(homedir(), '.cache', 'canopy-eval'));
}

export function benchDocs(io: CliIO, pools: string[] | undefined, count: number | undefined): PoolDoc[] {
  if (!pools || pools.length === 0) throw new UsageError('give the documents with --pool <file> (repeatable: pool/corpus JSONL or SQuAD articles)');
  const docs = readBenchDocs(pools.map((p) => path.resolve(io.cwd, p)));
  if (count !== undefined && count > docs.length) io.err(`bench: only ${docs.length} documents in the pools; using all of them`);
  return count === undefined ? docs : docs.slice(0, count);
}

export function benchQueries(io: CliIO, file: string | undefined, count: number): string[] {
  if (!file) throw new UsageError('give the questions with --queries <file> (any file canopy eval reads)');
  return loadDataset(path.resolve(io.cwd, file))
    .questions.slice(0, count)
    .map((q) => q.question);
}
