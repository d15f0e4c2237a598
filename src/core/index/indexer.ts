/**
 * Incremental, crash-safe indexing (design §2, §4): only files whose content changed are
 * re-parsed and re-embedded; deleted and renamed files leave the index; a file that fails keeps
 * its last good version (reported as stale) so nothing already indexed is lost; every write
 * goes to a new generation that becomes live in one atomic step (layout.ts).
 */
import { createHash } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import { deriveInnerVectors, encodedNodes, encodedText, nodeVectors, type EmbedTexts } from '../encode/nodeVectors';
import { CancelledError, CanopyError, describeError, ErrorCodes, throwIfCancelled } from '../errors';
import type { Discovery } from '../ingest/discover';
import { graphElements, semanticEdges } from '../ingest/graph';
import type { ParseProgress, ParsedDocument } from '../ingest/parsedDocument';
import type { RegionNode } from '../../contracts/region';
import { silentLogger, type Logger, type ProgressSink } from '../ports';
import { isWriteErrno, writeError } from '../store/atomicFile';
import type { Tracer } from '../trace/tracer';
import type { IndexStore, ItemRecord } from './indexStore';
import { type IndexTimings, timedStage } from './indexTimings';
import { INDEX_FORMAT, TITLE_KEYS, type FileEntry, type IndexError, type IndexManifest } from './layout';

/**
 * Parses one file; `onProgress` hears about progress inside it (pages read, leaves encoded), when
 * the parser reports any. `share`: a small file that may share a parse worker with other small
 * files (`ParsePool.parse`); if the parse fails, the indexer parses it again alone.
 */
export type ParseFn = (relPath: string, bytes: Uint8Array, signal?: AbortSignal, onProgress?: (progress: ParseProgress) => void, share?: boolean) => Promise<ParsedDocument>;

export interface EmbeddingSource {
  /** Encoder id: a change of model re-embeds everything. */
  id: string;
  embed: EmbedTexts;
  /** Makes the cache durable (called before the generation is committed). */
  persist(): Promise<void>;
}

export interface IndexerDeps {
  /** Where the index is written (LocalStore, PostgresStore). */
  store: IndexStore;
  parse: ParseFn;
  embeddings: EmbeddingSource;
  /** Changes here (branching factor, parser) make every file re-parse. */
  parserVersion: string;
  branchingFactor: number;
  logger?: Logger;
  progress?: ProgressSink;
  tracer?: Tracer;
  /** Work on each new generation before it goes live: the topic compass's metadata bank (`canopy.topics.enabled`). */
  stage?: GenerationStage;
  /** Where the run's time goes, stage by stage and per file (`canopy bench index`); nothing is measured without it. */
  timings?: IndexTimings;
  /**
   * The parse has no encoder and leaves the document graph's semantic edges out: the indexer
   * encodes every parsed file's leaves and tables on this thread — several small files' texts in
   * one encoder call — while the parse workers read the next files, and appends the semantic
   * edges from the same vectors (ingest/graph.ts `semanticEdges`), so the document is the one a
   * parse with the encoder gives. Without it the parse is expected to have encoded (the vectors
   * are then cache hits).
   */
  semanticEdges?: boolean;
  /** Files parsed at once (the parse workers, `ParsePool.size`); default 1. */
  parallelism?: number;
}

/** What happens to one file before its vectors: found unchanged, unreadable, parsed, or failed to parse. */
type Prepared =
  | { kind: 'unchanged'; entry: FileEntry }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'parsed'; doc: ParsedDocument; hash: string; key: string; readStarted: number }
  | { kind: 'failed'; err: unknown };

/**
 * How far reading and parsing run ahead of the file being finished: files holding at most
 * AHEAD_BYTES of input between them (hundreds of small files) and at most AHEAD_FILES files (and
 * few large ones: see `fill` in runIndexer).
 */
const AHEAD_BYTES = 3 * 1024 * 1024;
const AHEAD_FILES = 512;
/** Files ready together are encoded together up to about this many texts (and always the first). */
const BATCH_TEXTS = 2048;
/** Texts per encoder call (a long file's progress is reported after each). */
const TEXTS_PER_CALL = 512;
/** Parsed documents written at once while the next files are encoded. */
const MAX_WRITES = 4;
/** Larger files read at once ahead of the parse; files up to SMALL_FILE_BYTES are read synchronously. */
const READS_AT_ONCE = 4;
const SMALL_FILE_BYTES = 256 * 1024;
/** Small files handed to one parse worker at once (ParsePool's SHARED_TASKS). */
const SHARED_PARSES = 8;

/** At most n holders at once; the others wait their turn, first come, first served. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(n: number) {
    this.free = n;
  }

  take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/** A new generation as a stage run before it goes live sees it. */
export interface GenerationInput {
  /** The local store's folder, where the stage writes its output. */
  dir: string;
  generation: number;
  /** The generation this one was built from, if any. */
  previousGeneration?: number;
  encoderId: string;
  store: IndexStore;
  /** Items added or replaced in this generation (vector and text) and items removed. */
  upsert: ReadonlyArray<{ id: string; vector: Float32Array; text: string }>;
  remove: readonly string[];
  /** The files of the new generation. */
  files: Readonly<Record<string, FileEntry>>;
  logger?: Logger;
}

/**
 * Work done on each new generation before it goes live, injected by the host (the topic
 * compass's bank: src/core/topics/indexTopics.ts). A failure leaves the generation without the
 * stage's output, never unwritten; `name` names its trace event (`index/<name>`), its key in
 * `canopy index --json` and its warnings. Stages write beside a local store's files; with a
 * database store they are skipped with a warning.
 */
export interface GenerationStage {
  readonly name: string;
  /** What it makes, for the warning when it fails ("topic bank"). */
  readonly output: string;
  run(input: GenerationInput): Promise<object | undefined>;
}

export interface IndexSummary {
  generation: number;
  root: string;
  files: number;
  parsed: number;
  reused: number;
  removed: number;
  items: number;
  nodes: number;
  errors: IndexError[];
  /**
   * Files whose last good version the index still serves: the file changed (or became
   * unreadable) and no longer parses, so its earlier items stay searchable and answers from them
   * are flagged stale. Each with why its current version failed.
   */
  stale: Array<{ file: string; reason: string }>;
  /** What parsing reported about files now in the index (empty file, text decoded as Windows-1252, node cap…). */
  warnings: Array<{ file: string; message: string }>;
  skipped: Array<{ file: string; reason: string }>;
  /** Set when the old index could not be read and was rebuilt. */
  rebuilt?: string;
  /** The generation stage's summary, when one ran (the topic compass's). */
  stage?: { name: string; summary: object };
  /** Set when nothing changed since the live generation, which stays live (`generation` is its number; nothing was written). */
  unchanged?: true;
  seconds: number;
}

/** The live generation's manifest says what this run found: the same files (entry for entry), errors and skipped files. */
function sameIndex(base: IndexManifest, root: string, files: Record<string, FileEntry>, errors: IndexError[], skipped: IndexManifest['skipped']): boolean {
  const names = Object.keys(files);
  if (base.root !== root || names.length !== Object.keys(base.files).length) return false;
  if (JSON.stringify(errors) !== JSON.stringify(base.errors) || JSON.stringify(skipped) !== JSON.stringify(base.skipped)) return false;
  return names.every((name) => base.files[name] !== undefined && JSON.stringify(files[name]) === JSON.stringify(base.files[name]));
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/**
 * An error reason or warning as a host prints it: "<file>: <what>", the file named once. Reasons
 * and warnings normally name their file already (parsers and CanopyError messages start with it);
 * the few that do not ("cannot read: …") get it in front.
 */
export function namedOnce(file: string, message: string): string {
  return message.startsWith(`${file}: `) ? message : `${file}: ${message}`;
}

/** "page 12 of 138" / "encoding 1,200 of 4,300 sentences, rows and tables". */
function describeParseProgress(p: ParseProgress): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return p.step === 'pages' ? `page ${n(p.done)} of ${n(p.total)}` : `encoding ${n(p.done)} of ${n(p.total)} sentences, rows and tables`;
}

function countNodes(n: RegionNode): number {
  return 1 + n.children.reduce((a, c) => a + countNodes(c), 0);
}

export async function runIndexer(discovery: Discovery, deps: IndexerDeps, signal?: AbortSignal): Promise<IndexSummary> {
  const started = Date.now();
  const log = deps.logger ?? silentLogger;
  const store = deps.store;
  let release: () => Promise<void>;
  try {
    release = await store.lockWriter();
  } catch (err) {
    throw isWriteErrno(err) ? writeError(err, `the index in ${store.location}`, 'the previous index, if any, is unchanged') : err;
  }
  try {
    await store.recover();

    let previous: IndexManifest | undefined;
    let rebuilt: string | undefined;
    try {
      const live = await store.liveGeneration();
      if (live !== undefined) previous = await store.readManifest(live);
    } catch (err) {
      if (!(err instanceof CanopyError)) throw err;
      rebuilt = `${err.message}; rebuilding the index from the documents`;
      log.log('warn', rebuilt);
      previous = undefined;
    }
    // A new encoder or branching factor invalidates every parsed tree and vector.
    const compatible =
      previous !== undefined &&
      previous.encoderId === deps.embeddings.id &&
      previous.branchingFactor === deps.branchingFactor &&
      previous.parserVersion === deps.parserVersion &&
      previous.titleKeys === TITLE_KEYS;
    if (previous && !compatible) {
      log.log('info', previous.titleKeys === TITLE_KEYS ? 'encoder, branching factor or parser changed: re-indexing every file' : 'the index predates its title keys: re-indexing every file');
    }
    const base = compatible ? previous : undefined;
    // Above every generation the store holds, so a rebuild never writes over a stale generation's data.
    const generation = Math.max(previous?.generation ?? 0, ...(await store.generations())) + 1;

    const files: Record<string, FileEntry> = {};
    const errors: IndexError[] = [];
    const upsert: ItemRecord[] = [];
    const removedItems = new Set<string>();
    let parsed = 0;
    let reused = 0;
    const total = discovery.files.length;

    /** Documents whose write failed for a reason of their own (not the disk's): undone before the generation is written. */
    const writeFailed: Array<{ i: number; err: unknown }> = [];
    let diskFailure: unknown;

    /**
     * Vectors of the encoded nodes (leaves, tables) of the batch's parsed documents, by file
     * index: their texts go to the encoder together, in calls of TEXTS_PER_CALL (a long file
     * reports its progress after each). If the batch fails, each document is encoded alone, so
     * an encoder failure is the failure of the file that caused it.
     */
    const encodeBatch = async (batch: ReadonlyArray<{ i: number; prepared: Prepared }>): Promise<Map<number, Map<string, Float32Array> | { error: unknown }>> => {
      const out = new Map<number, Map<string, Float32Array> | { error: unknown }>();
      const docs = batch.flatMap(({ i, prepared }) => (prepared.kind === 'parsed' ? [{ i, doc: prepared.doc }] : []));
      const encode = async (some: typeof docs) => {
        const nodes = some.map(({ doc }) => doc.items.flatMap((it) => encodedNodes(it.root)));
        const texts = nodes.flat().map(encodedText);
        const vectors: Float32Array[] = [];
        for (let at = 0; at < texts.length; at += TEXTS_PER_CALL) {
          throwIfCancelled(signal);
          const part = texts.slice(at, at + TEXTS_PER_CALL);
          const got = await deps.embeddings.embed(part, signal);
          if (got.length !== part.length) throw new CanopyError(ErrorCodes.encoderFailed, `the encoder returned ${got.length} vectors for ${part.length} texts`);
          for (const v of got) vectors.push(v);
          if (some.length === 1 && texts.length > TEXTS_PER_CALL) {
            const progress: ParseProgress = { step: 'encoding', done: Math.min(at + TEXTS_PER_CALL, texts.length), total: texts.length };
            within(some[0]!.i, describeParseProgress(progress), progress);
          }
        }
        let k = 0;
        some.forEach(({ i }, n) => {
          const map = new Map<string, Float32Array>();
          for (const node of nodes[n]!) map.set(node.id, vectors[k++]!);
          out.set(i, map);
        });
      };
      if (docs.length === 0) return out;
      try {
        await encode(docs);
      } catch (err) {
        if (err instanceof CancelledError) throw err;
        for (const d of docs) {
          if (docs.length === 1) out.set(d.i, { error: err });
          else await encode([d]).catch((e: unknown) => {
            if (e instanceof CancelledError) throw e;
            out.set(d.i, { error: e });
          });
        }
      }
      return out;
    };

    /** Puts file i's outcome into the new generation, in the files' order. */
    const finish = async (i: number, prepared: Prepared, encoded: Map<string, Float32Array> | { error: unknown } | undefined): Promise<void> => {
      const f = discovery.files[i]!;
      deps.progress?.report({ done: i, total, message: f.relPath, file: f.relPath });
      const old = base?.files[f.relPath];
      if (prepared.kind === 'unchanged') {
        files[f.relPath] = prepared.entry;
        reused++;
        log.log('info', `${f.relPath}: unchanged`);
        return;
      }
      if (prepared.kind === 'unreadable') {
        errors.push({ file: f.relPath, code: ErrorCodes.notFound, reason: prepared.reason });
        if (old) files[f.relPath] = { ...old, staleError: 'unreadable' };
        return;
      }
      try {
        if (prepared.kind === 'failed') throw prepared.err;
        if (encoded && !(encoded instanceof Map)) throw encoded.error;
        const { doc, hash, key, readStarted } = prepared;
        let vectors = new Map<string, Float32Array>();
        if (encoded) {
          // Every node's vector from the encoded ones, then the graph's semantic edges from the
          // same vectors — what buildDocumentGraph appends when the parse has the encoder.
          await timedStage(timings, 'vectors', async () => {
            for (const it of doc.items) deriveInnerVectors(it.root, encoded);
          }, f.relPath);
          vectors = encoded;
          if (doc.graph) {
            const t = performance.now();
            for (const e of semanticEdges(graphElements(doc.graph), encoded)) doc.graph.edges.push(e);
            timings?.add('semantic', performance.now() - t, f.relPath);
          }
        } else {
          await timedStage(
            timings,
            'vectors',
            async () => {
              for (let k = 0; k < doc.items.length; k++) {
                throwIfCancelled(signal);
                // Normally cache hits (the graph encoded the leaves and tables during the parse); the encoder's work otherwise.
                if (doc.items.length > 1) within(i, `vectors of part ${k + 1} of ${doc.items.length}`);
                for (const [id, v] of await nodeVectors(doc.items[k]!.root, deps.embeddings.embed, signal)) vectors.set(id, v);
              }
            },
            f.relPath,
          );
        }
        // Written while the next files are encoded; a failure is this file's (undone below) or the disk's (the run's).
        const write: Promise<void> = store
          .putDocument(key, doc, timings && { add: (stage, ms) => timings.add(stage, ms, f.relPath) })
          .catch((err: unknown) => {
            if (isWriteErrno(err) || (err instanceof CanopyError && err.code === ErrorCodes.writeFailed)) diskFailure ??= err;
            else writeFailed.push({ i, err });
          })
          .finally(() => writing.delete(write));
        writing.add(write);
        if (old) old.items.forEach((id) => removedItems.add(id));
        for (const item of doc.items) {
          upsert.push({ id: item.id, file: f.relPath, modality: item.modality, title: item.title, text: item.root.text, vector: vectors.get(item.root.id)! });
        }
        files[f.relPath] = {
          hash,
          size: f.size,
          mtimeMs: f.mtimeMs,
          format: f.format,
          doc: key,
          items: doc.items.map((it) => it.id),
          nodes: doc.items.reduce((a, it) => a + countNodes(it.root), 0),
          warnings: doc.warnings.map((w) => w.message),
        };
        parsed++;
        const fileTimes = timings?.files.get(f.relPath);
        if (fileTimes) fileTimes.wall = performance.now() - readStarted;
        deps.tracer?.emit('ingest/file', { file: f.relPath, items: doc.items.length, warnings: doc.warnings.length });
        const nodeCount = files[f.relPath]!.nodes;
        log.log('info', `${f.relPath}: ${doc.items.length} item(s), ${nodeCount} region(s)${doc.warnings.length ? `, ${doc.warnings.length} warning(s)` : ''} in ${((performance.now() - readStarted) / 1000).toFixed(1)} s`);
      } catch (err) {
        if (err instanceof CancelledError) throw err;
        // Disk full / read-only: not this file's fault, and no later write would succeed either.
        if (isWriteErrno(err) || (err instanceof CanopyError && err.code === ErrorCodes.writeFailed)) throw err;
        fileFailed(i, err);
      }
    };

    /** File i failed: the error is reported once, and its last good version, if any, stays indexed. */
    const fileFailed = (i: number, err: unknown) => {
      const f = discovery.files[i]!;
      const old = base?.files[f.relPath];
      const { code, message: reason } = describeError(err);
      errors.push({ file: f.relPath, code, reason });
      // The summary (and every host) reports the error once; the log only says the file failed.
      log.log('info', `${f.relPath}: failed (${code})${old ? '; its last good version stays indexed' : ''}`);
      if (old) files[f.relPath] = { ...old, staleError: reason }; // keep the last good version
    };

    const timings = deps.timings;
    const within = (i: number, message: string, part?: ParseProgress) => {
      const rel = discovery.files[i]!.relPath;
      deps.progress?.report({ done: i, total, message: `${rel} — ${message}`, file: rel, ...(part ? { part: { step: part.step, done: part.done, total: part.total } } : {}) });
    };

    // Files handed to the parser at once: one per parse worker and one waiting for the next free
    // worker (first come, first served, so in order). Reading runs further ahead, a few files at once.
    const parseSlots = new Slots(Math.max(1, deps.parallelism ?? 1) + 1);
    // Small files may share a worker (ParsePool's SHARED_TASKS each), so a worker never waits for this thread between them.
    const smallParseSlots = new Slots(Math.max(1, deps.parallelism ?? 1) * SHARED_PARSES + 1);
    const readSlots = new Slots(READS_AT_ONCE);

    /**
     * Reads, hashes and parses file i (in a parse worker), or finds it unchanged: everything
     * before the file's vectors, run ahead of the files being finished (below) so that the
     * workers parse while this thread encodes. Never rejects: failures come back as outcomes.
     */
    const prepare = async (i: number): Promise<Prepared> => {
      const f = discovery.files[i]!;
      const old = base?.files[f.relPath];
      if (old && !old.staleError && old.size === f.size && old.mtimeMs === f.mtimeMs) return { kind: 'unchanged', entry: old };
      const fileTimes = timings?.startFile(f.relPath, f.format);
      const readStarted = performance.now();
      let bytes: Uint8Array;
      try {
        // A small file is read at once, in this thread: queued behind the documents' writes (and
        // their fsyncs) in Node's four I/O threads, small reads starved the parse workers.
        if (f.size <= SMALL_FILE_BYTES) bytes = readFileSync(f.absPath);
        else {
          await readSlots.take();
          try {
            bytes = await fs.readFile(f.absPath);
          } finally {
            readSlots.give();
          }
        }
      } catch (err) {
        return { kind: 'unreadable', reason: `cannot read: ${(err as Error).message}` };
      }
      const hash = sha256(bytes);
      timings?.add('read', performance.now() - readStarted, f.relPath);
      if (old && !old.staleError && old.hash === hash) return { kind: 'unchanged', entry: { ...old, size: f.size, mtimeMs: f.mtimeMs } };
      const key = sha256(`${deps.parserVersion}\0${deps.branchingFactor}\0${f.relPath}\0${hash}`);
      const small = f.size <= SMALL_FILE_BYTES && f.format !== 'pdf';
      const slots = small ? smallParseSlots : parseSlots;
      await slots.take();
      try {
        const onProgress = (p: ParseProgress) => within(i, describeParseProgress(p), p);
        let doc: ParsedDocument;
        try {
          doc = await deps.parse(f.relPath, bytes, signal, onProgress, small);
        } catch (err) {
          // A worker shared by small files fails them all when one of them kills it (memory, time
          // limit): each is parsed again alone, so only the file that caused it fails.
          if (!small || err instanceof CancelledError) throw err;
          doc = await deps.parse(f.relPath, bytes, signal, onProgress, false);
        }
        // Timings, not content: the stored document is the same however long it took.
        const stages = doc.stats.stages;
        delete doc.stats.stages;
        if (timings) {
          const { sentAt, ...inWorker } = stages ?? {};
          timings.addParse(f.relPath, inWorker);
          if (sentAt !== undefined) timings.add('transfer', Math.max(0, performance.timeOrigin + performance.now() - sentAt), f.relPath);
          fileTimes!.regions = doc.stats.nodes;
          fileTimes!.encodedTexts = doc.items.reduce((a, it) => a + encodedNodes(it.root).length, 0);
          if (doc.pages) fileTimes!.pages = doc.pages.length;
        }
        return { kind: 'parsed', doc, hash, key, readStarted };
      } catch (err) {
        return { kind: 'failed', err };
      } finally {
        slots.give();
      }
    };

    // Files run ahead while they hold less than AHEAD_BYTES of input and are at most AHEAD_FILES,
    // of which at most one large file (a PDF, or over SMALL_FILE_BYTES) per parse worker beyond
    // the one being finished: the workers parse faster than this thread encodes, so more large
    // files ahead would only wait, parsed, in memory. The file being finished always runs.
    const ahead: Array<{ outcome: Promise<Prepared>; settled: boolean } | undefined> = [];
    const isLarge = (j: number) => discovery.files[j]!.size > SMALL_FILE_BYTES || discovery.files[j]!.format === 'pdf';
    const largeAhead = Math.max(1, deps.parallelism ?? 1) + 1;
    let aheadBytes = 0;
    let aheadLarge = 0;
    let launched = 0;
    const fits = (from: number) =>
      launched - from < AHEAD_FILES && aheadBytes + discovery.files[launched]!.size <= AHEAD_BYTES && (!isLarge(launched) || aheadLarge < largeAhead);
    const fill = (from: number) => {
      while (launched < total && (launched === from || fits(from))) {
        const slot = { outcome: prepare(launched), settled: false };
        void slot.outcome.then(() => {
          slot.settled = true;
        });
        ahead[launched] = slot;
        aheadBytes += discovery.files[launched]!.size;
        if (isLarge(launched)) aheadLarge++;
        launched++;
      }
    };
    // Parsed documents' writes run while the next files are encoded; at most this many at once.
    const writing = new Set<Promise<void>>();
    const settleWrites = async (atMost: number) => {
      while (writing.size > atMost) await Promise.race(writing);
      if (diskFailure !== undefined) throw diskFailure;
    };

    try {
      for (let i = 0; i < total; ) {
        throwIfCancelled(signal);
        fill(i);
        await ahead[i]!.outcome;
        // The files ready now, in order, encoded together (many small files fill the encoder's batches).
        const batch: Array<{ i: number; prepared: Prepared }> = [];
        let texts = 0;
        for (let j = i; j < launched && ahead[j]!.settled && (j === i || texts < BATCH_TEXTS); j++) {
          const prepared = await ahead[j]!.outcome;
          if (prepared.kind === 'parsed') texts += prepared.doc.items.reduce((a, it) => a + encodedNodes(it.root).length, 0);
          batch.push({ i: j, prepared });
        }
        deps.progress?.report({ done: i, total, message: discovery.files[i]!.relPath, file: discovery.files[i]!.relPath });
        const vectorsOf = deps.semanticEdges ? await encodeBatch(batch) : undefined;
        for (const { i: j, prepared } of batch) {
          ahead[j] = undefined; // its document is let go once finished
          aheadBytes -= discovery.files[j]!.size;
          if (isLarge(j)) aheadLarge--;
          await finish(j, prepared, vectorsOf?.get(j));
          await settleWrites(MAX_WRITES);
        }
        i += batch.length;
      }
      await settleWrites(0);
    } finally {
      // Stopped early (cancelled, disk full): the documents being written finish before the writer's lock is released.
      await Promise.allSettled([...writing]);
    }
    // A document that could not be written is its file's failure, as if its parse had failed.
    for (const { i, err } of writeFailed.sort((a, b) => a.i - b.i)) {
      const rel = discovery.files[i]!.relPath;
      for (let k = upsert.length - 1; k >= 0; k--) if (upsert[k]!.file === rel) upsert.splice(k, 1);
      delete files[rel];
      parsed--;
      fileFailed(i, err);
    }
    deps.progress?.report({ done: total, total });

    // Files gone from the folder (deleted, renamed, now excluded) leave the index.
    let removed = 0;
    for (const [rel, entry] of Object.entries(base?.files ?? {})) {
      if (!(rel in files)) {
        entry.items.forEach((id) => removedItems.add(id));
        removed++;
      }
    }
    for (const e of upsert) removedItems.delete(e.id);
    // Items of the last good version of a failed file stay.
    for (const entry of Object.values(files)) if (entry.staleError) entry.items.forEach((id) => removedItems.delete(id));

    throwIfCancelled(signal);
    const skipped = discovery.skipped.map((s) => ({ file: s.relPath, reason: s.reason }));
    const summarize = (g: number, extra: Partial<IndexSummary>): IndexSummary => {
      const entries = Object.entries(files);
      return {
        generation: g,
        root: discovery.root,
        files: entries.length,
        parsed,
        reused,
        removed,
        items: entries.reduce((a, [, e]) => a + e.items.length, 0),
        nodes: entries.reduce((a, [, e]) => a + e.nodes, 0),
        errors,
        stale: entries.filter(([, e]) => e.staleError !== undefined).map(([file, e]) => ({ file, reason: e.staleError! })),
        warnings: entries.flatMap(([file, e]) => e.warnings.map((message) => ({ file, message }))),
        skipped,
        ...(rebuilt ? { rebuilt } : {}),
        ...extra,
        seconds: (Date.now() - started) / 1000,
      };
    };
    // Nothing changed — every file as the live generation has it, none gone, the same errors and
    // skipped files: that generation already is this index. Nothing is written (no generation, no
    // encoder, no cache) and it stays live; what the generation before it kept for its readers is
    // collected now, as the next commit would have. A generation stage (the topic compass) may
    // have work of its own on the live generation, so with one the generation is written as before.
    if (base && !deps.stage && upsert.length === 0 && removedItems.size === 0 && sameIndex(base, discovery.root, files, errors, skipped)) {
      log.log('info', `nothing changed since generation ${base.generation}: it stays live`);
      await timedStage(deps.timings, 'write', () => store.collectGarbage(base, undefined));
      return summarize(base.generation, { unchanged: true });
    }
    await store.writeGeneration(base?.generation, generation, { upsert, remove: [...removedItems] }, deps.timings);
    // A failed stage leaves this generation without its output (retrieval stays hybrid), never the index unwritten.
    const stage = deps.stage && store.localDir === undefined ? undefined : deps.stage;
    if (deps.stage && !stage) log.log('warn', `${deps.stage.name}: no ${deps.stage.output} with the ${store.kind} store (it needs the local store)`);
    const stageSummary = stage
      ? await stage
          .run({
            dir: store.localDir!,
            generation,
            ...(base ? { previousGeneration: base.generation } : {}),
            encoderId: deps.embeddings.id,
            store,
            upsert: upsert.map((e) => ({ id: e.id, vector: e.vector, text: `${e.title}\n${e.text}` })),
            remove: [...removedItems],
            files,
            logger: log,
          })
          .catch((err: unknown) => {
            if (err instanceof CancelledError) throw err;
            log.log('warn', `${stage.name}: no ${stage.output} for generation ${generation}: ${describeError(err).message}`);
            return undefined;
          })
      : undefined;
    if (stage && stageSummary) deps.tracer?.emit(`index/${stage.name}`, { ...stageSummary });
    await timedStage(deps.timings, 'write', () => deps.embeddings.persist());

    const manifest: IndexManifest = {
      format: INDEX_FORMAT,
      generation,
      createdAt: new Date().toISOString(),
      root: discovery.root,
      encoderId: deps.embeddings.id,
      branchingFactor: deps.branchingFactor,
      parserVersion: deps.parserVersion,
      titleKeys: TITLE_KEYS,
      files,
      errors,
      skipped,
    };
    throwIfCancelled(signal);
    await timedStage(deps.timings, 'write', async () => {
      await store.commit(manifest); // the commit point
      await store.collectGarbage(manifest, base?.generation);
    });

    return summarize(generation, stage && stageSummary ? { stage: { name: stage.name, summary: stageSummary } } : {});
  } catch (err) {
    // A disk that fills up (or turns read-only) mid-run stops the run before its commit point:
    // the previous generation stays live and every file indexed before stays searchable.
    if (isWriteErrno(err)) throw writeError(err, `the index in ${store.location}`, 'indexing stopped and the previous index is unchanged');
    if (err instanceof CanopyError && err.code === ErrorCodes.writeFailed) {
      throw new CanopyError(ErrorCodes.writeFailed, `Indexing stopped: ${err.message} The previous index is unchanged.`, { ...(err.file ? { file: err.file } : {}), cause: err });
    }
    throw err;
  } finally {
    await release().catch(() => undefined);
  }
}
