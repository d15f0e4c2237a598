/**
 * Finds the files of a workspace folder that Canopy should index: walks the tree once,
 * honours nested .gitignore files, the user's include/exclude globs (canopy.include,
 * canopy.exclude, files.exclude) and the maximum file size, follows no symlink loop, and says
 * for every file it leaves out why. Format detection is by extension only; reading and parsing
 * happen later, per file, so one bad file never stops the walk.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { formatForPath, type DocumentFormat } from './documentFormat';

export interface DiscoverOptions {
  include: string[];
  exclude: string[];
  maxFileSizeMB: number;
  /** Whether to read .gitignore files (default true). */
  respectGitignore?: boolean;
  /**
   * Whether stand-alone images are listed. Images are indexed as nodes of the documents that
   * reference them, so by default a walk does not list them on their own.
   */
  listImages?: boolean;
  signal?: AbortSignal;
}

export interface DiscoveredFile {
  /** Workspace-relative, forward slashes. */
  relPath: string;
  absPath: string;
  format: DocumentFormat;
  size: number;
  mtimeMs: number;
}

export interface SkippedFile {
  relPath: string;
  reason: string;
}

export interface Discovery {
  root: string;
  files: DiscoveredFile[];
  skipped: SkippedFile[];
}

const toPosix = (p: string) => p.split(path.sep).join('/');

/** Walks `root` and returns the indexable files in a stable (sorted) order. */
export async function discoverFiles(root: string, options: DiscoverOptions): Promise<Discovery> {
  const absRoot = path.resolve(root);
  const rootStat = await fs.stat(absRoot).catch(() => undefined);
  if (!rootStat) throw new CanopyError(ErrorCodes.notFound, `${absRoot} does not exist`, { file: absRoot });
  if (!rootStat.isDirectory()) throw new CanopyError(ErrorCodes.badInput, `${absRoot} is not a folder`, { file: absRoot });

  const isIncluded = picomatch(options.include.length > 0 ? options.include : ['**/*'], { dot: true });
  const isExcluded = options.exclude.length > 0 ? picomatch(options.exclude, { dot: true }) : () => false;
  const maxBytes = options.maxFileSizeMB * 1024 * 1024;
  const files: DiscoveredFile[] = [];
  const skipped: SkippedFile[] = [];
  const seenDirs = new Set<string>();

  interface Rules {
    base: string; // posix path relative to root of the folder holding the .gitignore ('' for root)
    rules: Ignore;
  }

  const ignoredByGit = (relPosix: string, isDir: boolean, stack: Rules[]) =>
    stack.some(({ base, rules }) => {
      const local = base === '' ? relPosix : relPosix.slice(base.length + 1);
      return rules.ignores(isDir ? `${local}/` : local);
    });

  async function walk(absDir: string, relDir: string, stack: Rules[]): Promise<void> {
    throwIfCancelled(options.signal);
    const real = await fs.realpath(absDir);
    if (seenDirs.has(real)) {
      skipped.push({ relPath: relDir || '.', reason: 'symlink loop: this folder was already visited' });
      return;
    }
    seenDirs.add(real);

    let rules = stack;
    if (options.respectGitignore !== false) {
      const text = await fs.readFile(path.join(absDir, '.gitignore'), 'utf8').catch(() => undefined);
      if (text !== undefined) rules = [...stack, { base: relDir, rules: ignore().add(text) }];
    }

    let entries;
    try {
      entries = await fs.readdir(absDir, { withFileTypes: true });
    } catch (err) {
      skipped.push({ relPath: relDir || '.', reason: `cannot read folder: ${(err as Error).message}` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

    for (const entry of entries) {
      const relPath = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      const absPath = path.join(absDir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        let target: Awaited<ReturnType<typeof fs.stat>> | undefined;
        try {
          target = await fs.stat(absPath);
        } catch (err) {
          // ELOOP: links that point at each other (a → b → a) never reach a file.
          const loop = (err as NodeJS.ErrnoException).code === 'ELOOP';
          skipped.push({ relPath, reason: loop ? 'symlink loop: the link leads back to itself' : 'broken symlink' });
          continue;
        }
        isDir = target.isDirectory();
        isFile = target.isFile();
      }
      if (entry.name === '.git' && isDir) continue;
      if (ignoredByGit(relPath, isDir, rules)) continue;
      if (isDir) {
        if (isExcluded(relPath) || isExcluded(`${relPath}/`)) continue;
        await walk(absPath, relPath, rules);
        continue;
      }
      if (!isFile) continue;
      if (isExcluded(relPath) || !isIncluded(relPath)) continue;
      const format = formatForPath(relPath);
      if (!format) continue; // not a document format: silently out of scope, like source code
      if (format === 'image' && !options.listImages) continue;
      const stat = await fs.stat(absPath).catch(() => undefined);
      if (!stat) {
        skipped.push({ relPath, reason: 'vanished while reading the folder' });
        continue;
      }
      if (stat.size > maxBytes) {
        skipped.push({
          relPath,
          reason: `larger than canopy.maxFileSizeMB (${(stat.size / 1024 / 1024).toFixed(1)} MB > ${options.maxFileSizeMB} MB)`,
        });
        continue;
      }
      files.push({ relPath: toPosix(relPath), absPath, format, size: stat.size, mtimeMs: stat.mtimeMs });
    }
  }

  await walk(absRoot, '', []);
  return { root: absRoot, files, skipped };
}
