/**
 * Gold-evidence annotations (design §10): one JSON object per line in
 * `<workspace>/.canopy/annotations.jsonl`, versioned, shared by the editor command, the
 * inspector, dataset imports, training and evaluation.
 *
 * Concurrency: every change (add / update / remove) takes an exclusive lock file
 * (`annotations.jsonl.lock`, created with O_EXCL so only one writer in any process wins), re-reads
 * the file, applies the change to its lines and rewrites it with `writeFileAtomic`. Readers never
 * lock: the rename makes them see the old or the new file, never half of one. A lock older than
 * `staleLockMs` (a writer killed mid-change) is broken. Lines that do not parse are reported with
 * file and line number and written back verbatim — a change never drops a line it does not
 * understand.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import type { Anchor } from '../../contracts/region';
import { isWriteErrno, removeDeadWritersTemps, writeError, writeFileAtomic } from '../store/atomicFile';

export const ANNOTATION_VERSION = 1;

export type AnnotationSource = 'editor' | 'inspector' | 'pdf' | 'import';
const SOURCES: readonly AnnotationSource[] = ['editor', 'inspector', 'pdf', 'import'];

/** Text just before and after the span when it was marked; re-location uses it (relocate.ts). */
export interface ContextFingerprint {
  before: string;
  after: string;
}

export interface Annotation {
  version: typeof ANNOTATION_VERSION;
  id: string;
  question: string;
  /** A dataset's question id, when imported; questions are otherwise grouped by their text. */
  questionId?: string;
  /** Workspace-relative path with forward slashes (the same as `anchor.file`). */
  file: string;
  anchor: Anchor;
  /** The marked text (for PDF pages / table rows: the region's text as far as known). */
  text: string;
  context: ContextFingerprint;
  author: string;
  /** ISO 8601. */
  time: string;
  source: AnnotationSource;
}

/** A line that is not a valid annotation; it stays in the file. */
export interface CorruptLine {
  file: string;
  /** 1-based. */
  line: number;
  reason: string;
  raw: string;
}

export interface AnnotationFile {
  annotations: Annotation[];
  corrupt: CorruptLine[];
}

/** Characters of context kept on each side of a span. */
export const CONTEXT_CHARS = 48;

/** `<workspace>/.canopy/annotations.jsonl`. */
export function annotationsPath(workspaceRoot: string): string {
  return path.join(workspaceRoot, '.canopy', 'annotations.jsonl');
}

/** The text around [start, end) in `source`, as stored in `context`. */
export function contextFingerprint(source: string, start: number, end: number, chars = CONTEXT_CHARS): ContextFingerprint {
  return { before: source.slice(Math.max(0, start - chars), start), after: source.slice(end, end + chars) };
}

/** A deterministic id: the same question, file and anchor always give the same id (imports dedupe on it). */
export function annotationId(question: string, anchor: Anchor): string {
  const key = JSON.stringify([question, anchor.file, anchor.charStart, anchor.charEnd, anchor.page, anchor.row, anchor.timeStart, anchor.timeEnd, anchor.bbox]);
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

export interface NewAnnotation {
  question: string;
  questionId?: string;
  anchor: Anchor;
  text: string;
  context?: ContextFingerprint;
  author?: string;
  time?: string;
  source: AnnotationSource;
  id?: string;
}

export function makeAnnotation(input: NewAnnotation): Annotation {
  return {
    version: ANNOTATION_VERSION,
    id: input.id ?? annotationId(input.question, input.anchor),
    question: input.question,
    ...(input.questionId !== undefined ? { questionId: input.questionId } : {}),
    file: input.anchor.file,
    anchor: input.anchor,
    text: input.text,
    context: input.context ?? { before: '', after: '' },
    author: input.author ?? 'unknown',
    time: input.time ?? new Date().toISOString(),
    source: input.source,
  };
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isFinite(v));

/** Validates one parsed line; returns the annotation or why it is not one. */
export function validateAnnotation(value: unknown): Annotation | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const v = value as Record<string, unknown>;
  if (v.version !== ANNOTATION_VERSION) return `unsupported version ${JSON.stringify(v.version)} (expected ${ANNOTATION_VERSION})`;
  for (const key of ['id', 'question', 'file', 'text', 'author', 'time'] as const) if (!isStr(v[key])) return `"${key}" must be a string`;
  if (!SOURCES.includes(v.source as AnnotationSource)) return `"source" must be one of ${SOURCES.join(', ')}`;
  if (v.questionId !== undefined && !isStr(v.questionId)) return '"questionId" must be a string';
  const a = v.anchor as Record<string, unknown> | undefined;
  if (typeof a !== 'object' || a === null || !isStr(a.file)) return '"anchor" must be an object with a "file"';
  for (const key of ['charStart', 'charEnd', 'startLine', 'startColumn', 'endLine', 'endColumn', 'page', 'pageEnd', 'row', 'timeStart', 'timeEnd'])
    if (!isNum(a[key])) return `"anchor.${key}" must be a number`;
  const c = v.context as Record<string, unknown> | undefined;
  if (typeof c !== 'object' || c === null || !isStr(c.before) || !isStr(c.after)) return '"context" must be {before, after} strings';
  return v as unknown as Annotation;
}

interface Line {
  raw: string;
  annotation?: Annotation;
}

function splitLines(file: string, content: string): { lines: Line[]; corrupt: CorruptLine[] } {
  const lines: Line[] = [];
  const corrupt: CorruptLine[] = [];
  content.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      corrupt.push({ file, line: i + 1, reason: `invalid JSON: ${(err as Error).message}`, raw });
      lines.push({ raw });
      return;
    }
    const result = validateAnnotation(parsed);
    if (typeof result === 'string') {
      corrupt.push({ file, line: i + 1, reason: result, raw });
      lines.push({ raw });
    } else lines.push({ raw, annotation: result });
  });
  return { lines, corrupt };
}

export interface AnnotationStoreOptions {
  /** How long a writer waits for the lock before failing (default 10 s). */
  lockTimeoutMs?: number;
  /** A lock file older than this belongs to a dead writer and is removed (default 30 s). */
  staleLockMs?: number;
}

/**
 * True when the lock names a process of this machine that no longer runs (a writer killed with
 * kill -9): its lock can go at once instead of after `staleLockMs`. A lock without a pid is being
 * written right now — or its writer was killed between creating it and writing its pid (found by
 * the kill -9 campaign, writeKill.test.ts): a live writer writes its pid at once, so such a lock
 * older than a second is a dead one's.
 */
async function holderIsGone(lockFile: string, ageMs: number): Promise<boolean> {
  const raw = (await fs.readFile(lockFile, 'utf8').catch(() => '')).trim();
  if (raw === '') return ageMs > 1_000;
  const pid = Number(raw);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export class AnnotationStore {
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;

  constructor(
    readonly file: string,
    options: AnnotationStoreOptions = {},
  ) {
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
  }

  /** All annotations and every line that is not one (an absent file is empty). */
  async read(): Promise<AnnotationFile> {
    const { lines, corrupt } = splitLines(this.file, await this.readRaw());
    return { annotations: lines.flatMap((l) => (l.annotation ? [l.annotation] : [])), corrupt };
  }

  /** Appends annotations whose id is not yet in the file; returns those actually added. */
  async add(annotations: readonly Annotation[]): Promise<Annotation[]> {
    for (const a of annotations) {
      const problem = validateAnnotation(a);
      if (typeof problem === 'string') throw new CanopyError(ErrorCodes.badInput, `Annotation ${a.id}: ${problem}`, { file: this.file });
    }
    let added: Annotation[] = [];
    await this.change((lines) => {
      const ids = new Set(lines.flatMap((l) => (l.annotation ? [l.annotation.id] : [])));
      added = [];
      for (const a of annotations) {
        if (ids.has(a.id)) continue;
        ids.add(a.id);
        added.push(a);
      }
      return [...lines, ...added.map((a) => ({ raw: JSON.stringify(a), annotation: a }))];
    });
    return added;
  }

  /** Replaces fields of the annotation `id` (not its id or version); false when it is not there. */
  async update(id: string, patch: Partial<Omit<Annotation, 'id' | 'version'>>): Promise<boolean> {
    let found = false;
    await this.change((lines) =>
      lines.map((l) => {
        if (l.annotation?.id !== id) return l;
        found = true;
        const next = { ...l.annotation, ...patch, id, version: ANNOTATION_VERSION } as Annotation;
        if (patch.anchor) next.file = patch.anchor.file;
        return { raw: JSON.stringify(next), annotation: next };
      }),
    );
    return found;
  }

  /** Removes the annotation `id`; false when it is not there. */
  async remove(id: string): Promise<boolean> {
    let found = false;
    await this.change((lines) =>
      lines.filter((l) => {
        if (l.annotation?.id !== id) return true;
        found = true;
        return false;
      }),
    );
    return found;
  }

  private async readRaw(): Promise<string> {
    try {
      return await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw err;
    }
  }

  /** Lock → re-read → apply → atomic rewrite → unlock. `apply` must be synchronous and pure. */
  private async change(apply: (lines: Line[]) => Line[]): Promise<void> {
    // Disk full or a read-only folder: a CanopyError (E_WRITE) naming the file and the reason;
    // the file keeps every annotation it had.
    const kept = 'the annotations already saved are unchanged';
    let release: () => Promise<void>;
    try {
      await fs.mkdir(path.dirname(this.file), { recursive: true });
      release = await this.lock();
    } catch (err) {
      throw isWriteErrno(err) ? writeError(err, this.file, kept) : err;
    }
    try {
      await removeDeadWritersTemps(path.dirname(this.file)); // left by writers killed mid-write
      const { lines } = splitLines(this.file, await this.readRaw());
      const next = apply(lines);
      await writeFileAtomic(this.file, next.map((l) => `${l.raw}\n`).join(''));
    } catch (err) {
      throw isWriteErrno(err) ? writeError(err, this.file, kept) : err;
    } finally {
      await release().catch(() => undefined);
    }
  }

  private async lock(): Promise<() => Promise<void>> {
    const lockFile = `${this.file}.lock`;
    const started = Date.now();
    let wait = 2;
    for (;;) {
      try {
        const handle = await fs.open(lockFile, 'wx');
        await handle.writeFile(`${process.pid}\n`);
        await handle.close();
        return () => fs.rm(lockFile, { force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const stat = await fs.stat(lockFile).catch(() => undefined);
      if (stat && (Date.now() - stat.mtimeMs > this.staleLockMs || (await holderIsGone(lockFile, Date.now() - stat.mtimeMs)))) {
        // A writer died holding the lock; its change either landed (atomic rename) or not at all.
        await fs.rm(lockFile, { force: true });
        continue;
      }
      if (Date.now() - started > this.lockTimeoutMs) {
        throw new CanopyError(ErrorCodes.internal, `Timed out waiting for the annotation lock ${lockFile}; delete it if no Canopy process is running`, { file: lockFile });
      }
      await new Promise((r) => setTimeout(r, wait + Math.random() * wait));
      wait = Math.min(wait * 2, 50);
    }
  }
}
