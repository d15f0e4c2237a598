/**
 * The saved traces of one index: every answer is written as one gzip-compressed JSON file
 * (`*.json.gz`; plain `*.json` traces written before are read as they are) under
 * `<index>/traces/` and listed, newest first, by the Questions view, the inspector's history and
 * `canopy` tools. A retention (count and size, `canopy.traces.maxCount` / `.maxSizeMB`) is applied
 * after each save, and `canopy traces prune` applies one on demand.
 *
 * Listing keeps a summary index (`.summaries.json` in the same folder: file name → what a
 * history row shows), updated on save and delete, so a list after each answer reads one small
 * file instead of parsing every trace again. Trace files are written once under a unique name and
 * never changed, so a name the index knows needs no second look; names it does not know (a trace
 * written by another process, or an index lost or corrupt) are read once and added, and names
 * whose file is gone are dropped. The index is a cache: deleting it costs one full read.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { isTraceFileName, summarizeTrace, TraceSummary } from '../../contracts/savedTrace';
import { check } from '../../contracts/validation';
import { checkTrace, type AskTrace } from '../../contracts/trace';
import type { CanopySettings } from '../config/settings';
import { CanopyError, ErrorCodes } from '../errors';
import { silentLogger, type Logger } from '../ports';
import { writeFileAtomic } from '../store/atomicFile';

/** The summary index's file name; it starts with a dot, so it is never taken for a trace. */
export const SUMMARY_INDEX = '.summaries.json';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** How many saved traces to keep, newest first: at most `maxCount` and `maxBytes` on disk (0 = no limit). */
export interface TraceRetention {
  maxCount: number;
  maxBytes: number;
}

/** What a prune did. */
export interface PruneResult {
  deleted: string[];
  kept: number;
  /** Bytes the kept traces take on disk. */
  bytes: number;
  /** Bytes freed. */
  freed: number;
}
const SUMMARY_VERSION = 1;

interface SummaryIndexFile {
  version: number;
  traces: Record<string, Omit<TraceSummary, 'name'>>;
}

export class TraceStore {
  /** The summaries known, by file name; loaded from the index file on first use. */
  private known: Map<string, TraceSummary> | undefined;
  private loading: Promise<Map<string, TraceSummary>> | undefined;
  /** Serialises writes of the index file so a slow write never overwrites a newer one. */
  private writing: Promise<void> = Promise.resolve();
  private readonly log: Logger;
  /** Trace files parsed to list them (tests and logs: a warm list parses none). */
  readonly counters = { parsedForList: 0 };

  constructor(
    /** The traces folder (`<index>/traces`). */
    readonly dir: string,
    logger?: Logger,
  ) {
    this.log = logger ?? silentLogger;
  }

  /**
   * Writes a trace, gzip-compressed (a trace is 1–2 MB of JSON, about a tenth of that compressed),
   * and returns its path; with `retention`, then prunes the oldest traces beyond it (never this one).
   */
  async save(trace: AskTrace, retention?: TraceRetention): Promise<string> {
    await fs.mkdir(this.dir, { recursive: true });
    const name = `${trace.createdAt.replace(/[:.]/g, '-')}-${trace.id}.json.gz`;
    const file = path.join(this.dir, name);
    await writeFileAtomic(file, await gzipAsync(JSON.stringify(trace)));
    const known = await this.summaries();
    known.set(name, summarizeTrace(name, trace));
    await this.persist(known);
    if (retention) {
      const pruned = await this.prune(retention, name);
      if (pruned.deleted.length > 0) this.log.log('info', `traces: ${pruned.deleted.length} oldest removed (retention: ${describeRetention(retention)}); ${pruned.kept} kept, ${formatBytes(pruned.bytes)}`);
    }
    return file;
  }

  /**
   * Deletes the oldest saved traces until at most `maxCount` are left and they take at most
   * `maxBytes` on disk (0 = no limit on that measure); `keep` (the trace just saved) is never
   * deleted, and neither is the newest trace for the size limit alone.
   */
  async prune(retention: TraceRetention, keep?: string): Promise<PruneResult> {
    const traces = await this.list();
    const sized = await Promise.all(traces.map(async (t) => ({ name: t.name, bytes: await fs.stat(path.join(this.dir, t.name)).then((st) => st.size, () => 0) })));
    const deleted: string[] = [];
    let bytes = 0;
    let kept = 0;
    let freed = 0;
    // Newest first: keep while within both limits.
    for (const t of sized) {
      const overCount = retention.maxCount > 0 && kept >= retention.maxCount;
      const overSize = retention.maxBytes > 0 && kept > 0 && bytes + t.bytes > retention.maxBytes;
      if (t.name !== keep && (overCount || overSize)) {
        deleted.push(t.name);
        freed += t.bytes;
        continue;
      }
      kept++;
      bytes += t.bytes;
    }
    if (deleted.length > 0) {
      await Promise.all(deleted.map((name) => fs.rm(path.join(this.dir, name), { force: true })));
      const known = await this.summaries();
      for (const name of deleted) known.delete(name);
      await this.persist(known);
    }
    return { deleted, kept, bytes, freed };
  }

  /**
   * The saved traces, newest first, with what a history list shows. Files that are not traces
   * of a readable version are left out (and logged), never fatal.
   */
  async list(): Promise<TraceSummary[]> {
    let names: string[];
    try {
      names = (await fs.readdir(this.dir)).filter(isTraceFileName);
    } catch {
      return [];
    }
    const known = await this.summaries();
    let changed = false;
    const present = new Set(names);
    for (const name of [...known.keys()]) {
      if (!present.has(name)) {
        known.delete(name);
        changed = true;
      }
    }
    const out: TraceSummary[] = [];
    for (const name of names) {
      let s = known.get(name);
      if (!s) {
        try {
          this.counters.parsedForList++;
          s = summarizeTrace(name, await this.read(name));
          known.set(name, s);
          changed = true;
        } catch (err) {
          this.log.log('warn', `trace ${name} skipped: ${(err as Error).message}`);
          continue;
        }
      }
      out.push(s);
    }
    if (changed) await this.persist(known);
    return out.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.name.localeCompare(a.name));
  }

  /** Reads one saved trace by its file name (a bare name inside the traces folder). */
  async read(name: string): Promise<AskTrace> {
    const file = this.file(name);
    let raw: unknown;
    const bytes = await fs.readFile(file);
    let text: string;
    try {
      text = (name.endsWith('.gz') ? await gunzipAsync(bytes) : bytes).toString('utf8');
    } catch (err) {
      throw new CanopyError(ErrorCodes.badInput, `${name} is not a Canopy trace: not readable gzip (${(err as Error).message})`, { file });
    }
    try {
      raw = JSON.parse(text);
    } catch (err) {
      if (err instanceof SyntaxError) throw new CanopyError(ErrorCodes.badInput, `${name} is not a Canopy trace: not valid JSON (${err.message})`, { file });
      throw err;
    }
    const checked = checkTrace(raw);
    if (!checked.ok) throw new CanopyError(ErrorCodes.badInput, `${name} is not a readable Canopy trace of version 1: ${checked.problem}`, { file });
    return checked.value;
  }

  /** Deletes one saved trace by its file name. */
  async delete(name: string): Promise<void> {
    await fs.rm(this.file(name), { force: true });
    const known = await this.summaries();
    if (known.delete(name)) await this.persist(known);
  }

  /** A trace by id: the history's summaries lead to its file. */
  async find(id: string): Promise<AskTrace | undefined> {
    for (const s of await this.list()) if (s.id === id) return this.read(s.name);
    return undefined;
  }

  private file(name: string): string {
    if (!isTraceFileName(name)) throw new CanopyError(ErrorCodes.badInput, `not a trace file name: ${name}`);
    return path.join(this.dir, name);
  }

  private summaries(): Promise<Map<string, TraceSummary>> {
    if (this.known) return Promise.resolve(this.known);
    this.loading ??= this.readIndex().then((m) => {
      this.known = m;
      this.loading = undefined;
      return m;
    });
    return this.loading;
  }

  /** The index file's summaries; an unreadable one is logged and rebuilt by the next list. */
  private async readIndex(): Promise<Map<string, TraceSummary>> {
    const file = path.join(this.dir, SUMMARY_INDEX);
    let raw: string;
    try {
      raw = await fs.readFile(file, 'utf8');
    } catch {
      return new Map();
    }
    try {
      const parsed = JSON.parse(raw) as SummaryIndexFile;
      if (parsed?.version !== SUMMARY_VERSION || typeof parsed.traces !== 'object' || parsed.traces === null) throw new Error(`not a summary index of version ${SUMMARY_VERSION}`);
      const out = new Map<string, TraceSummary>();
      for (const [name, s] of Object.entries(parsed.traces)) {
        // Entries are checked against the summary's schema; one that fails is read again from its trace.
        const entry = isTraceFileName(name) ? check(TraceSummary, { ...s, name }, name) : undefined;
        if (entry?.ok) out.set(name, entry.value);
      }
      return out;
    } catch (err) {
      this.log.log('warn', `${file} is unreadable (${(err as Error).message}); the saved traces are read again to rebuild it`);
      return new Map();
    }
  }

  private persist(known: Map<string, TraceSummary>): Promise<void> {
    const body: SummaryIndexFile = { version: SUMMARY_VERSION, traces: {} };
    for (const [name, { name: _name, ...rest }] of known) body.traces[name] = rest;
    const text = JSON.stringify(body);
    const file = path.join(this.dir, SUMMARY_INDEX);
    // A failed index write only costs a re-read later: log it, never fail the save or the list.
    const write = this.writing.then(() =>
      fs
        .mkdir(this.dir, { recursive: true })
        .then(() => writeFileAtomic(file, text))
        .catch((err: unknown) => this.log.log('warn', `the trace summary index could not be written (${(err as Error).message}); listing reads the traces instead`)),
    );
    this.writing = write;
    return write;
  }
}

/** The retention the settings ask for (`canopy.traces.maxCount`, `canopy.traces.maxSizeMB`). */
export function traceRetention(s: Pick<CanopySettings, 'tracesMaxCount' | 'tracesMaxSizeMB'>): TraceRetention {
  return { maxCount: s.tracesMaxCount, maxBytes: Math.round(s.tracesMaxSizeMB * 1024 * 1024) };
}

/** "500 traces, 100 MB" / "no limit". */
export function describeRetention(r: TraceRetention): string {
  const parts = [r.maxCount > 0 ? `${r.maxCount} traces` : '', r.maxBytes > 0 ? formatBytes(r.maxBytes) : ''].filter((p) => p);
  return parts.length > 0 ? parts.join(', ') : 'no limit';
}

export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(0)} KB` : `${n} B`;
}
