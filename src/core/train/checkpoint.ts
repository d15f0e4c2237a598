/**
 * Versioned adapter checkpoints: one JSON file per trained adapter in a folder the caller gives,
 * written atomically. A and B are stored as base64 float32 (compact, exact). The id is a hash of
 * the base encoder, the shapes and the weights, so the same training gives the same id and two
 * different adapters never share one. `adapterFromCheckpoint` returns the `NodeAdapter` that
 * `AskDeps.adapter` takes; loading refuses a checkpoint trained on another base encoder.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { NodeAdapter } from '../compress/nodeScorer';
import { CanopyError, ErrorCodes } from '../errors';
import { isWriteErrno, removeDeadWritersTemps, writeError, writeFileAtomic } from '../store/atomicFile';
import { applyLowRank, type LowRank } from './lowRank';

export const CHECKPOINT_FORMAT = 'canopy-adapter';
export const CHECKPOINT_VERSION = 1;

export interface AdapterCheckpoint {
  format: typeof CHECKPOINT_FORMAT;
  version: typeof CHECKPOINT_VERSION;
  id: string;
  baseEncoderId: string;
  dim: number;
  rank: number;
  /** dim×rank and rank×dim, row-major, little-endian float32, base64. */
  A: string;
  B: string;
  trainedOn: { annotationsFile?: string; questions: number; annotations: number; pairs: number; validationPairs: number };
  /** Training options and losses, and the before/after report when one was made. */
  metrics: Record<string, unknown>;
  createdAt: string;
}

function toBase64(a: Float64Array): string {
  const f = Float32Array.from(a);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

function fromBase64(s: string, length: number, what: string): Float64Array {
  const buf = Buffer.from(s, 'base64');
  if (buf.length !== length * 4) throw new CanopyError(ErrorCodes.badInput, `checkpoint ${what} has ${buf.length / 4} values, expected ${length}`);
  const f = new Float32Array(new Uint8Array(buf).buffer);
  return Float64Array.from(f);
}

export function makeCheckpoint(weights: LowRank, info: Omit<AdapterCheckpoint, 'format' | 'version' | 'id' | 'dim' | 'rank' | 'A' | 'B' | 'createdAt'> & { createdAt?: string }): AdapterCheckpoint {
  const A = toBase64(weights.A);
  const B = toBase64(weights.B);
  const id = `adapter-${createHash('sha256').update(`${info.baseEncoderId}|${weights.dim}|${weights.rank}|${A}|${B}`).digest('hex').slice(0, 12)}`;
  return {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    id,
    baseEncoderId: info.baseEncoderId,
    dim: weights.dim,
    rank: weights.rank,
    A,
    B,
    trainedOn: info.trainedOn,
    metrics: info.metrics,
    createdAt: info.createdAt ?? new Date().toISOString(),
  };
}

/** Writes `<dir>/<id>.json` atomically and returns its path. */
export async function saveCheckpoint(dir: string, checkpoint: AdapterCheckpoint): Promise<string> {
  const file = path.join(dir, `${checkpoint.id}.json`);
  try {
    await fs.mkdir(dir, { recursive: true });
    await removeDeadWritersTemps(dir); // left by a training run killed mid-write
    await writeFileAtomic(file, `${JSON.stringify(checkpoint, null, 1)}\n`);
  } catch (err) {
    // Disk full / read-only folder: E_WRITE naming the file; checkpoints already saved stay.
    throw isWriteErrno(err) ? writeError(err, file, 'the checkpoints already saved are unchanged') : err;
  }
  return file;
}

export async function loadCheckpoint(file: string): Promise<AdapterCheckpoint> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new CanopyError(ErrorCodes.badInput, `Cannot read adapter checkpoint ${file}: ${(err as Error).message}`, { file, cause: err });
  }
  const c = parsed as Partial<AdapterCheckpoint>;
  if (c.format !== CHECKPOINT_FORMAT) throw new CanopyError(ErrorCodes.badInput, `${file} is not a Canopy adapter checkpoint`, { file });
  if (c.version !== CHECKPOINT_VERSION) throw new CanopyError(ErrorCodes.indexVersion, `${file}: checkpoint version ${String(c.version)}, expected ${CHECKPOINT_VERSION}`, { file });
  if (typeof c.dim !== 'number' || typeof c.rank !== 'number' || typeof c.A !== 'string' || typeof c.B !== 'string' || typeof c.baseEncoderId !== 'string') {
    throw new CanopyError(ErrorCodes.badInput, `${file}: checkpoint is missing dim, rank, A, B or baseEncoderId`, { file });
  }
  return c as AdapterCheckpoint;
}

export function weightsOf(c: AdapterCheckpoint): LowRank {
  return { dim: c.dim, rank: c.rank, A: fromBase64(c.A, c.dim * c.rank, 'A'), B: fromBase64(c.B, c.rank * c.dim, 'B') };
}

/** The adapter for `AskDeps.adapter`; refuses a checkpoint trained on another base encoder. */
export function adapterFromCheckpoint(c: AdapterCheckpoint, encoderId?: string): NodeAdapter {
  if (encoderId !== undefined && encoderId !== c.baseEncoderId) {
    throw new CanopyError(ErrorCodes.modelInvalid, `Adapter ${c.id} was trained on encoder ${c.baseEncoderId}, not ${encoderId}`);
  }
  const w = weightsOf(c);
  return (v) => {
    if (v.length !== w.dim) throw new CanopyError(ErrorCodes.modelInvalid, `Adapter ${c.id} expects ${w.dim}-d vectors, got ${v.length}`);
    return applyLowRank(w, v);
  };
}

export function adapterFromWeights(w: LowRank): NodeAdapter {
  return (v) => applyLowRank(w, v);
}

/** Checkpoints in `dir`, newest first (unreadable files are skipped). */
export async function listCheckpoints(dir: string): Promise<Array<{ file: string; checkpoint: AdapterCheckpoint }>> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const out: Array<{ file: string; checkpoint: AdapterCheckpoint }> = [];
  for (const n of names.filter((x) => x.endsWith('.json') && !x.startsWith('.'))) {
    const file = path.join(dir, n);
    const checkpoint = await loadCheckpoint(file).catch(() => undefined);
    if (checkpoint) out.push({ file, checkpoint });
  }
  return out.sort((a, b) => b.checkpoint.createdAt.localeCompare(a.checkpoint.createdAt));
}

export interface LoadedAdapter {
  file: string;
  id: string;
  adapter: NodeAdapter;
  checkpoint: AdapterCheckpoint;
}

/**
 * Reads, validates and turns a checkpoint into the ask pipeline's adapter in one step; every
 * failure (missing file, not JSON, wrong format or version, truncated weights, another base
 * encoder) is a CanopyError whose message names the file.
 */
export async function loadAdapter(file: string, encoderId: string): Promise<LoadedAdapter> {
  const checkpoint = await loadCheckpoint(file);
  try {
    return { file, id: checkpoint.id, adapter: adapterFromCheckpoint(checkpoint, encoderId), checkpoint };
  } catch (err) {
    if (err instanceof CanopyError) throw new CanopyError(err.code, `${file}: ${err.message}`, { file, cause: err });
    throw err;
  }
}
