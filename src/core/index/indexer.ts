/**
 * Incremental, crash-safe indexing (design §2, §4): only files whose content changed are
 * re-parsed and re-embedded; deleted and renamed files leave the index; a file that fails keeps
 * its last good version (reported as stale) so nothing already indexed is lost; every write
 * goes to a new generation that becomes live in one atomic step (layout.ts).
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { encodedNodes, nodeVectors, type EmbedTexts } from '../encode/nodeVectors';
import { CancelledError, CanopyError, describeError, ErrorCodes, throwIfCancelled } from '../errors';
import type { Discovery } from '../ingest/discover';
import type { ParseProgress, ParsedDocument } from '../ingest/parsedDocument';
import type { RegionNode } from '../../contracts/region';
import { silentLogger, type Logger, type ProgressSink } from '../ports';
import { isWriteErrno, writeError } from '../store/atomicFile';
import type { Tracer } from '../trace/tracer';
import type { IndexStore, ItemRecord } from './indexStore';
import { type IndexTimings, timedStage } from './indexTimings';
import { INDEX_FORMAT, TITLE_KEYS, type FileEntry, type IndexError, type IndexManifest } from './layout';

/** Parses one file; `onProgress` hears about progress inside it (pages read, leaves encoded), when the parser reports any. */
export type ParseFn = (relPath: string, bytes: Uint8Array, signal?: AbortSignal, onProgress?: (progress: ParseProgress) => void) => Promise<ParsedDocument>;

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
  seconds: number;
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

    for (let i = 0; i < discovery.files.length; i++) {
      throwIfCancelled(signal);
      const f = discovery.files[i]!;
      deps.progress?.report({ done: i, total, message: f.relPath, file: f.relPath });
      const started = Date.now();
      const old = base?.files[f.relPath];
      if (old && !old.staleError && old.size === f.size && old.mtimeMs === f.mtimeMs) {
        files[f.relPath] = old;
        reused++;
        log.log('info', `${f.relPath}: unchanged`);
        continue;
      }
      const timings = deps.timings;
      const fileTimes = timings?.startFile(f.relPath, f.format);
      const readStarted = performance.now();
      let bytes: Uint8Array;
      try {
        bytes = await fs.readFile(f.absPath);
      } catch (err) {
        errors.push({ file: f.relPath, code: ErrorCodes.notFound, reason: `cannot read: ${(err as Error).message}` });
        if (old) files[f.relPath] = { ...old, staleError: 'unreadable' };
        continue;
      }
      const hash = sha256(bytes);
      timings?.add('read', performance.now() - readStarted, f.relPath);
      if (old && !old.staleError && old.hash === hash) {
        files[f.relPath] = { ...old, size: f.size, mtimeMs: f.mtimeMs };
        reused++;
        log.log('info', `${f.relPath}: unchanged`);
        continue;
      }
      try {
        const key = sha256(`${deps.parserVersion}\0${deps.branchingFactor}\0${f.relPath}\0${hash}`);
        const within = (message: string, part?: ParseProgress) =>
          deps.progress?.report({ done: i, total, message: `${f.relPath} — ${message}`, file: f.relPath, ...(part ? { part: { step: part.step, done: part.done, total: part.total } } : {}) });
        const parseStarted = performance.now();
        const doc = await deps.parse(f.relPath, bytes, signal, (p) => within(describeParseProgress(p), p));
        // Timings, not content: the stored document is the same however long it took.
        const stages = doc.stats.stages;
        delete doc.stats.stages;
        if (timings) {
          timings.addParse(f.relPath, stages);
          const inWorker = Object.entries(stages ?? {}).reduce((a, [k, v]) => (k === 'cpu' ? a : a + (v ?? 0)), 0);
          timings.add('transfer', Math.max(0, performance.now() - parseStarted - inWorker), f.relPath);
          fileTimes!.regions = doc.stats.nodes;
          fileTimes!.encodedTexts = doc.items.reduce((a, it) => a + encodedNodes(it.root).length, 0);
          if (doc.pages) fileTimes!.pages = doc.pages.length;
        }
        const vectors = new Map<string, Float32Array>();
        await timedStage(
          timings,
          'vectors',
          async () => {
            for (let k = 0; k < doc.items.length; k++) {
              throwIfCancelled(signal);
              // Normally cache hits (the graph encoded the leaves and tables during the parse); the encoder's work otherwise.
              if (doc.items.length > 1) within(`vectors of part ${k + 1} of ${doc.items.length}`);
              for (const [id, v] of await nodeVectors(doc.items[k]!.root, deps.embeddings.embed, signal)) vectors.set(id, v);
            }
          },
          f.relPath,
        );
        await store.putDocument(key, doc, timings && { add: (stage, ms) => timings.add(stage, ms, f.relPath) });
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
        if (fileTimes) fileTimes.wall = performance.now() - readStarted;
        deps.tracer?.emit('ingest/file', { file: f.relPath, items: doc.items.length, warnings: doc.warnings.length });
        const nodeCount = files[f.relPath]!.nodes;
        log.log('info', `${f.relPath}: ${doc.items.length} item(s), ${nodeCount} region(s)${doc.warnings.length ? `, ${doc.warnings.length} warning(s)` : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      } catch (err) {
        if (err instanceof CancelledError) throw err;
        // Disk full / read-only: not this file's fault, and no later write would succeed either.
        if (isWriteErrno(err) || (err instanceof CanopyError && err.code === ErrorCodes.writeFailed)) throw err;
        const { code, message: reason } = describeError(err);
        errors.push({ file: f.relPath, code, reason });
        // The summary (and every host) reports the error once; the log only says the file failed.
        log.log('info', `${f.relPath}: failed (${code})${old ? '; its last good version stays indexed' : ''}`);
        if (old) files[f.relPath] = { ...old, staleError: reason }; // keep the last good version
      }
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
      skipped: discovery.skipped.map((s) => ({ file: s.relPath, reason: s.reason })),
    };
    throwIfCancelled(signal);
    await timedStage(deps.timings, 'write', async () => {
      await store.commit(manifest); // the commit point
      await store.collectGarbage(manifest, base?.generation);
    });

    const entries = Object.entries(files);
    return {
      generation,
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
      skipped: manifest.skipped,
      ...(rebuilt ? { rebuilt } : {}),
      ...(stage && stageSummary ? { stage: { name: stage.name, summary: stageSummary } } : {}),
      seconds: (Date.now() - started) / 1000,
    };
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
