/**
 * Crash-safe file writes: write to a temporary file in the same folder, fsync it, rename it over
 * the target (atomic on POSIX and NTFS), then fsync the folder so the rename itself survives a
 * power cut. A reader therefore sees either the old or the new content, never a torn file.
 *
 * A write that fails because the disk is full or the folder is read-only / not writable becomes a
 * CanopyError (E_WRITE) naming the file and the reason; the temporary file is removed and the
 * target keeps its old content. `injectWriteFault` lets tests make the disk "full" or "read-only"
 * at a chosen step (running as root, chmod alone does not stop a write).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CanopyError, ErrorCodes } from '../errors';

/** The steps of an atomic write a fault can be injected at. */
export type WriteStep = 'open' | 'write' | 'rename';
/** Returns the error a step should fail with, or undefined to let it run. */
export type WriteFault = (step: WriteStep, target: string) => NodeJS.ErrnoException | undefined;

let injectedFault: WriteFault | undefined;

/** Test seam: every atomic write in this process consults `fault` before each step (undefined clears it). */
export function injectWriteFault(fault: WriteFault | undefined): void {
  injectedFault = fault;
}

/** An errno error as Node raises it (for fault injection). */
export function errnoError(code: string, syscall: string, file: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: ${describeErrno(code)}, ${syscall} '${file}'`) as NodeJS.ErrnoException;
  err.code = code;
  err.syscall = syscall;
  err.path = file;
  return err;
}

const WRITE_ERRNOS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied (the folder is not writable)',
  EPERM: 'operation not permitted (the folder is not writable)',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'the path is a folder',
  ENAMETOOLONG: 'the path is too long',
  EMFILE: 'too many open files',
  EIO: 'an input/output error of the disk',
};

function describeErrno(code: string): string {
  return WRITE_ERRNOS[code] ?? 'the write failed';
}

/** True for the errno errors a write can meet (disk full, read-only, permissions, bad path). */
export function isWriteErrno(err: unknown): err is NodeJS.ErrnoException {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code in WRITE_ERRNOS;
}

/**
 * The CanopyError for a failed write: `what` names the thing (a file or "the index in <dir>"),
 * the message gives the reason and its errno code and says what was kept.
 */
export function writeError(err: unknown, what: string, kept = 'nothing was changed'): CanopyError {
  if (err instanceof CanopyError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
  const file = (err as NodeJS.ErrnoException | undefined)?.path;
  return new CanopyError(
    ErrorCodes.writeFailed,
    `Cannot write ${what}: ${describeErrno(code)} (${code}${file && !what.includes(file) ? ` at ${file}` : ''}); ${kept}.`,
    { file: what, cause: err },
  );
}

function fault(step: WriteStep, target: string): void {
  const err = injectedFault?.(step, target);
  if (err) throw err;
}

/** Writes `data` (a string, bytes, or several byte chunks written in order) to `target` atomically. */
export async function writeFileAtomic(target: string, data: string | Uint8Array | readonly Uint8Array[]): Promise<void> {
  const dir = path.dirname(target);
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let created = false;
  try {
    fault('open', target);
    const handle = await fs.open(tmp, 'w');
    created = true;
    try {
      fault('write', target);
      if (typeof data === 'string' || data instanceof Uint8Array) await handle.writeFile(data);
      else {
        for (const chunk of data) {
          for (let done = 0; done < chunk.byteLength; ) done += (await handle.write(chunk, done, chunk.byteLength - done)).bytesWritten;
        }
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    fault('rename', target);
    await fs.rename(tmp, target);
  } catch (err) {
    // A half-written temporary file (disk full) must not stay behind taking space.
    if (created) await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw isWriteErrno(err) ? writeError(err, target, `its previous content is unchanged`) : err;
  }
  await syncDir(dir);
}

export async function syncDir(dir: string): Promise<void> {
  // Not every platform lets a folder be opened for fsync (Windows); the rename is still atomic.
  const handle = await fs.open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/** fsyncs a file written by someone else (a library) before it is made live. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Removes the temporary files that writers of this machine killed mid-write left in `dir` (their
 * pid, which the name carries, no longer runs); a live writer's are left alone. Returns how many.
 */
export async function removeDeadWritersTemps(dir: string): Promise<number> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const n of names) {
    const m = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/.exec(n);
    if (!m || Number(m[1]) === process.pid || processRuns(Number(m[1]))) continue;
    await fs.rm(path.join(dir, n), { force: true });
    removed++;
  }
  return removed;
}

/** Whether a process with this id runs on this machine (one we may not signal counts as running). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes stray temporary files a killed writer left behind. */
export async function removeStaleTemps(dir: string): Promise<number> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((n) => n.startsWith('.') && n.endsWith('.tmp'));
  await Promise.all(stale.map((n) => fs.rm(path.join(dir, n), { force: true })));
  return stale.length;
}
