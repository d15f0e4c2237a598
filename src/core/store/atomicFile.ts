/**
 * Crash-safe file writes: write to a temporary file in the same folder, fsync it, rename it over
 * the target (atomic on POSIX and NTFS), then fsync the folder so the rename itself survives a
 * power cut. A reader therefore sees either the old or the new content, never a torn file.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(target);
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, target);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
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

/** Removes stray temporary files a killed writer left behind. */
export async function removeStaleTemps(dir: string): Promise<number> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((n) => n.startsWith('.') && n.endsWith('.tmp'));
  await Promise.all(stale.map((n) => fs.rm(path.join(dir, n), { force: true })));
  return stale.length;
}
