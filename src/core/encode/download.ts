/**
 * Optional on-demand download of a model folder (e.g. a larger ONNX sentence encoder) from URLs
 * the user has confirmed — asking is the caller's job; this module only fetches what it is given.
 *
 * Guarantees:
 *   - resumable: bytes land in `<dest>.partial/<name>.partial`; a dropped connection is resumed
 *     with an HTTP Range request (automatically up to `maxAttempts` times, and again on the next
 *     call, which finds the partial file);
 *   - verified: each file's SHA-256 must equal the expected digest, else it is deleted and the
 *     call fails with CanopyError(E_DOWNLOAD);
 *   - atomic: `dest` appears only when every file is verified, by renaming the staging folder,
 *     so nothing ever loads a half-downloaded model;
 *   - reported through a ProgressSink and cancellable with an AbortSignal (CancelledError; the
 *     partial file is kept for resuming).
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { CancelledError, CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { type Logger, type ProgressSink, silentLogger } from '../ports';

export interface ModelFile {
  /** Path inside the model folder, e.g. 'model.onnx' or 'onnx/model.onnx'. */
  name: string;
  url: string;
  /** Expected SHA-256, lowercase hex. */
  sha256: string;
  /** Expected size in bytes, when known (better progress totals). */
  bytes?: number;
}

export interface DownloadOptions {
  files: readonly ModelFile[];
  /** The model folder to create. It must not be in use: it is replaced as a whole. */
  destDir: string;
  progress?: ProgressSink;
  signal?: AbortSignal;
  logger?: Logger;
  /** Connections per file before giving up (each one resumes where the last stopped). Default 3. */
  maxAttempts?: number;
  /** Injected for tests or proxies; the global fetch by default. */
  fetchImpl?: typeof fetch;
}

function sha256OfFile(path: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolvePromise(h.digest('hex')));
  });
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

function checkName(name: string): string {
  const n = normalize(name);
  if (name === '' || isAbsolute(name) || n.startsWith('..') || n.split(sep).includes('..')) {
    throw new CanopyError(ErrorCodes.badInput, `Model file name "${name}" must be a relative path inside the model folder`);
  }
  return n;
}

function isAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (err as { name?: string })?.name === 'AbortError';
}

/** Total size from a 206's Content-Range ("bytes a-b/total") or a 200's Content-Length. */
function totalFromHeaders(res: Response, offset: number): number | undefined {
  const range = res.headers.get('content-range');
  const m = range ? /\/(\d+)\s*$/.exec(range) : null;
  if (m) return Number(m[1]);
  const len = res.headers.get('content-length');
  return len !== null && /^\d+$/.test(len) ? Number(len) + offset : undefined;
}

class Interrupted extends Error {}

export async function downloadModel(options: DownloadOptions): Promise<{ destDir: string; bytes: number }> {
  const { files, destDir, progress, signal } = options;
  const logger = options.logger ?? silentLogger;
  const fetchImpl = options.fetchImpl ?? fetch;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  if (files.length === 0) throw new CanopyError(ErrorCodes.badInput, 'Nothing to download');
  for (const f of files) {
    const protocol = (() => {
      try {
        return new URL(f.url).protocol;
      } catch {
        return '';
      }
    })();
    if (protocol !== 'https:' && protocol !== 'http:') throw new CanopyError(ErrorCodes.badInput, `Not an http(s) URL: ${f.url}`);
    if (!/^[0-9a-f]{64}$/i.test(f.sha256)) throw new CanopyError(ErrorCodes.badInput, `${f.name}: expected sha256 must be 64 hex digits`);
  }
  const names = files.map((f) => checkName(f.name));
  throwIfCancelled(signal);

  const staging = `${destDir}.partial`;
  await mkdir(staging, { recursive: true });
  const knownTotal = files.every((f) => typeof f.bytes === 'number') ? files.reduce((a, f) => a + (f.bytes as number), 0) : undefined;
  let doneBefore = 0;

  for (const [i, file] of files.entries()) {
    const finalPath = join(staging, names[i] as string);
    const partial = `${finalPath}.partial`;
    await mkdir(dirname(finalPath), { recursive: true });
    const expected = file.sha256.toLowerCase();
    if (existsSync(finalPath) && (await sha256OfFile(finalPath)) === expected) {
      // Verified by an earlier call that stopped before installing.
      doneBefore += await sizeOf(finalPath);
      continue;
    }
    let total = file.bytes;
    let attempt = 0;
    for (;;) {
      throwIfCancelled(signal);
      attempt++;
      let offset = await sizeOf(partial);
      try {
        const res = await fetchImpl(file.url, { signal, redirect: 'follow', headers: offset > 0 ? { Range: `bytes=${offset}-` } : {} });
        if (res.status === 416 && offset > 0) {
          // The partial file already holds every byte; verify it below.
          await res.body?.cancel();
          break;
        }
        if (res.status === 200) {
          offset = 0; // the server ignored the Range header: start over
        } else if (res.status === 206) {
          const start = /^bytes\s+(\d+)-/.exec(res.headers.get('content-range') ?? '');
          if (!start || Number(start[1]) !== offset) {
            await res.body?.cancel();
            throw new CanopyError(ErrorCodes.downloadFailed, `${file.url}: the server resumed at the wrong offset (${res.headers.get('content-range') ?? 'no Content-Range'})`);
          }
        } else {
          await res.body?.cancel();
          throw new CanopyError(ErrorCodes.downloadFailed, `Download of ${file.url} failed: HTTP ${res.status} ${res.statusText}`);
        }
        total = totalFromHeaders(res, offset) ?? total;
        if (offset > 0) logger.log('info', `Resuming ${file.url} at byte ${offset}`);
        const fh = await open(partial, offset > 0 ? 'a' : 'w');
        let written = offset;
        try {
          if (res.body) {
            for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
              await fh.write(chunk);
              written += chunk.byteLength;
              progress?.report({ done: doneBefore + written, total: knownTotal ?? doneBefore + (total ?? written), message: file.name });
            }
          }
        } catch (err) {
          if (isAbort(err, signal)) throw err;
          throw new Interrupted(`${(err as Error).message}`);
        } finally {
          await fh.close();
        }
        if (total !== undefined && written < total) throw new Interrupted(`connection closed after ${written} of ${total} bytes`);
        break;
      } catch (err) {
        if (isAbort(err, signal)) throw new CancelledError('Download cancelled; the partial file is kept for resuming');
        if (err instanceof CanopyError) throw err;
        const have = await sizeOf(partial);
        if (attempt >= maxAttempts) {
          throw new CanopyError(
            ErrorCodes.downloadFailed,
            `Download of ${file.url} was interrupted after ${have} bytes (${(err as Error).message}); run it again to resume`,
            { file: partial, cause: err },
          );
        }
        logger.log('warn', `Download of ${file.url} interrupted after ${have} bytes (${(err as Error).message}); resuming`);
      }
    }
    const actual = await sha256OfFile(partial);
    if (actual !== expected) {
      // Never keep (or resume) bytes that hash wrong: the next attempt starts from zero.
      await rm(partial, { force: true });
      throw new CanopyError(ErrorCodes.downloadFailed, `Download of ${file.url} failed its sha256 check (expected ${expected}, got ${actual}); the file was discarded`, {
        file: finalPath,
      });
    }
    await rename(partial, finalPath);
    doneBefore += await sizeOf(finalPath);
  }

  throwIfCancelled(signal);
  // Install: move any old folder aside, rename the verified staging folder into place, drop the old one.
  const old = `${destDir}.old-${process.pid}`;
  const hadOld = existsSync(destDir);
  if (hadOld) await rename(destDir, old);
  try {
    await rename(staging, destDir);
  } catch (err) {
    if (hadOld) await rename(old, destDir);
    throw new CanopyError(ErrorCodes.downloadFailed, `Could not install the model into ${destDir}: ${(err as Error).message}`, { file: destDir, cause: err });
  }
  if (hadOld) await rm(old, { recursive: true, force: true });
  progress?.report({ done: doneBefore, total: doneBefore, message: 'installed' });
  return { destDir, bytes: doneBefore };
}
