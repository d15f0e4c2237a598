/**
 * The on-disk layout of one local Canopy index (localStore.ts) and its crash-safe commit protocol.
 * The manifest shapes are shared with the Postgres store, which keeps them in tables.
 *
 *   CURRENT            {"format", "generation"}: the one live generation (replaced atomically)
 *   gen-<N>.json       manifest of generation N: files, hashes, item ids, errors, settings
 *   items-<N>.vec      item vectors, binary (itemVectors.ts)
 *   lexical-<N>.bm25   BM25 index, binary (bm25.ts)
 *   topics-<N>.bin     topic-compass metadata bank (only when topics are on; src/core/topics)
 *   topic-scorer.json  the trained topic-compass scorer (any generation)
 *   docs/<key>.json    parsed documents, content-addressed (immutable, shared by generations)
 *   docs/<key>.elements.bm25  a parsed PDF's element BM25 (elementIndex.ts), written with it; an
 *                      index without one reads the document as before and builds it when asked
 *   embeddings/        node vectors: the embedding cache (encode/cache.ts), binary, read on demand
 *   LOCK               held by the one writer
 *
 * A writer builds generation N+1 completely beside N, fsyncs it, then replaces CURRENT. Killed at
 * any point, the index reopens at N or at N+1, never in between; files of other generations are
 * garbage and are removed on the next write. Format 1 (vectra's JSON item vectors, a MiniSearch
 * JSON) is read as "another format" and rebuilt from the documents, its node vectors reused.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import { writeFileAtomic } from '../store/atomicFile';

export const INDEX_FORMAT = 2;
/**
 * The recipe of the title keys the stores keep for the title lookup (text/titles.ts `titleKeyOf`).
 * A generation whose manifest names another (or none: written before the stores kept keys) is
 * rebuilt from the documents at the next index (the embedding cache keeps its vectors).
 */
export const TITLE_KEYS = 1;

export interface FileEntry {
  hash: string;
  size: number;
  mtimeMs: number;
  format: string;
  /** Key of the parsed document under docs/. */
  doc: string;
  items: string[];
  nodes: number;
  warnings: string[];
  /** Set when the latest version of the file failed and the entry is the last good one. */
  staleError?: string;
}

export interface IndexError {
  file: string;
  code: string;
  reason: string;
}

export interface IndexManifest {
  format: typeof INDEX_FORMAT;
  generation: number;
  createdAt: string;
  root: string;
  encoderId: string;
  branchingFactor: number;
  parserVersion: string;
  /** The title-key recipe its lexical index was written with (`TITLE_KEYS`); absent in indexes written before. */
  titleKeys?: number;
  files: Record<string, FileEntry>;
  errors: IndexError[];
  skipped: Array<{ file: string; reason: string }>;
}

export const paths = (dir: string) => ({
  current: path.join(dir, 'CURRENT'),
  manifest: (g: number) => path.join(dir, `gen-${g}.json`),
  items: (g: number) => path.join(dir, `items-${g}.vec`),
  lexical: (g: number) => path.join(dir, `lexical-${g}.bm25`),
  /** The topic compass's metadata bank of generation N (src/core/topics; only with topics on). */
  topics: (g: number) => path.join(dir, `topics-${g}.bin`),
  /** The trained topic-compass scorer (not per generation: its features are corpus-independent). */
  topicScorer: path.join(dir, 'topic-scorer.json'),
  docs: path.join(dir, 'docs'),
  doc: (key: string) => path.join(dir, 'docs', `${key}.json`),
  /** The element BM25 of a parsed PDF (elementIndex.ts), beside its document. */
  docElements: (key: string) => path.join(dir, 'docs', `${key}.elements.bm25`),
  embeddings: path.join(dir, 'embeddings'),
  lock: path.join(dir, 'LOCK'),
});

/** The live generation, undefined for a new index; CanopyError when CURRENT is unreadable or from another format. */
export async function readCurrent(dir: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await fs.readFile(paths(dir).current, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: { format?: unknown; generation?: unknown };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${dir} is corrupt: CURRENT is not JSON`, { file: paths(dir).current });
  }
  if (parsed.format !== INDEX_FORMAT) {
    throw new CanopyError(ErrorCodes.indexVersion, `index at ${dir} has format ${String(parsed.format)}, this Canopy reads format ${INDEX_FORMAT}`, {
      file: paths(dir).current,
    });
  }
  if (!Number.isSafeInteger(parsed.generation)) {
    throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${dir} is corrupt: CURRENT names no generation`, { file: paths(dir).current });
  }
  return parsed.generation as number;
}

export async function writeCurrent(dir: string, generation: number): Promise<void> {
  await writeFileAtomic(paths(dir).current, JSON.stringify({ format: INDEX_FORMAT, generation }));
}

export async function readManifest(dir: string, generation: number): Promise<IndexManifest> {
  const file = paths(dir).manifest(generation);
  let m: IndexManifest;
  try {
    m = JSON.parse(await fs.readFile(file, 'utf8')) as IndexManifest;
  } catch (err) {
    throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${dir} is corrupt: cannot read ${path.basename(file)} (${(err as Error).message})`, { file, cause: err });
  }
  if (m.format !== INDEX_FORMAT || m.generation !== generation || typeof m.files !== 'object') {
    throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${dir} is corrupt: ${path.basename(file)} does not describe generation ${generation}`, { file });
  }
  return m;
}

/** Index folders whose writer lock this process holds (a second writer in the same process is refused too). */
const heldHere = new Set<string>();

/** Takes the writer lock; a lock left by a dead process is taken over. */
export async function acquireLock(dir: string): Promise<() => Promise<void>> {
  const lock = paths(dir).lock;
  const key = path.resolve(lock);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      if (heldHere.has(key)) throw Object.assign(new Error('held in this process'), { code: 'EEXIST' });
      const handle = await fs.open(lock, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      heldHere.add(key);
      return async () => {
        heldHere.delete(key);
        await fs.rm(lock, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(await fs.readFile(lock, 'utf8').catch(() => ''));
      if (heldHere.has(key) || (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))) {
        throw new CanopyError(ErrorCodes.badInput, `index at ${dir} is being written by process ${pid}; try again when it has finished`);
      }
      await fs.rm(lock, { force: true });
    }
  }
  throw new CanopyError(ErrorCodes.internal, `could not take the index lock at ${lock}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
