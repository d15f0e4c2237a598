/**
 * Builds a CanopyWorkspace for the CLI: finds the package root (for the built-in model), turns
 * flags into settings, and reports progress on stderr.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { CanopyWorkspace } from '../core/app/workspace';
import { resolveSettings, type CanopySettings } from '../core/config/settings';
import { CanopyError, ErrorCodes } from '../core/errors';
import type { Logger } from '../core/ports';
import type { CliIO } from './io';

/** The folder holding Canopy's package.json, from the bundle (dist/) or the sources (src/cli/). */
export function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === 'canopy-evidence') return dir;
      } catch {
        // keep looking upwards
      }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find Canopy's package.json above ${__dirname}`);
    dir = up;
  }
}

/**
 * The folder a command was pointed at (`--dir`, or index's argument), resolved; a user mistake
 * (missing, or a file) fails here with a message that says which, before anything looks for an index.
 */
export function requireFolder(dir: string, io: CliIO, flag = '--dir'): string {
  const abs = path.resolve(io.cwd, dir);
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    throw new CanopyError(ErrorCodes.notFound, `${flag} ${abs} does not exist`, { file: abs });
  }
  if (!isDir) throw new CanopyError(ErrorCodes.badInput, `${flag} ${abs} is a file, not a folder`, { file: abs });
  return abs;
}

export function defaultIndexDir(root: string): string {
  return path.join(root, '.canopy', 'index');
}

export function cliLogger(io: CliIO, verbose: boolean): Logger {
  return {
    log(level, message) {
      if (level === 'error' || level === 'warn' || verbose) io.err(`${level}: ${message}`);
    },
  };
}

export function openWorkspace(root: string, indexDir: string | undefined, settings: Partial<CanopySettings>, io: CliIO, verbose = false): CanopyWorkspace {
  const absRoot = path.resolve(io.cwd, root);
  const modelFolder = io.env.CANOPY_ENCODER_FOLDER;
  return new CanopyWorkspace({
    root: absRoot,
    indexDir: indexDir ? path.resolve(io.cwd, indexDir) : defaultIndexDir(absRoot),
    settings: resolveSettings(settings),
    encoder: modelFolder ? { kind: 'onnx-folder', path: modelFolder } : { kind: 'builtin' },
    builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'),
    logger: cliLogger(io, verbose),
  });
}
