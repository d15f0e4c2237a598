/**
 * The CLI's wiring: finds the package root (for the built-in model), builds the core services
 * for one folder and index with constructors, and reports on stderr. Each command takes the
 * services it needs and passes its flags as settings with every request.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { AdapterCheckpoints } from '../core/app/adapters';
import { AskService } from '../core/app/askService';
import { Embeddings } from '../core/app/embeddings';
import { IndexService } from '../core/app/indexService';
import { IndexStores } from '../core/app/indexStores';
import { ParseWorkers } from '../core/app/parseWorkers';
import { TraceStore } from '../core/app/traceStore';
import type { TrainingService } from '../core/app/trainingService';
import type { EncoderConfig } from '../core/encode/encoder';
import { CanopyError, ErrorCodes } from '../core/errors';
import { parseStoreSpec } from '../core/index/storeSpec';
import type { Logger } from '../core/ports';
import { type CliIO, UsageError } from './io';

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

/** The store setting from `--store` or CANOPY_STORE (checked here, so a bad one is a usage error). */
export function storeSetting(flag: string | undefined, io: CliIO): { store?: string } {
  const spec = flag ?? io.env.CANOPY_STORE;
  if (spec === undefined || spec.trim() === '') return {};
  try {
    parseStoreSpec(spec);
  } catch (err) {
    throw new UsageError(`--store: ${(err as Error).message}`);
  }
  return { store: spec };
}

/** `--look-ahead` / `--no-look-ahead` as the critic setting; neither leaves the default (on). */
export function lookAheadSetting(on: boolean | undefined, off: boolean | undefined): { criticLookAhead?: boolean } {
  if (on && off) throw new UsageError('--look-ahead and --no-look-ahead contradict each other; give one');
  return on ? { criticLookAhead: true } : off ? { criticLookAhead: false } : {};
}

/** `--no-critic-model`: the rule critic's verdict alone (canopy.critic.model off); the default is the learned stop. */
export function criticModelSetting(off: boolean | undefined): { criticModel?: boolean } {
  return off ? { criticModel: false } : {};
}

/** `--no-profiles`: every document read as fitting no document profile (canopy.profiles.enabled off). */
export function profilesSetting(off: boolean | undefined): { profilesEnabled?: boolean } {
  return off ? { profilesEnabled: false } : {};
}

/** The encoder of the CLI: `CANOPY_ENCODER_FOLDER` (a Hugging Face ONNX folder), else the built-in model. */
export function cliEncoder(io: CliIO): EncoderConfig {
  const modelFolder = io.env.CANOPY_ENCODER_FOLDER;
  return modelFolder ? { kind: 'onnx-folder', path: modelFolder } : { kind: 'builtin' };
}

/** The services of one folder and its index, wired for a CLI command. */
export interface CliServices {
  root: string;
  indexDir: string;
  embeddings: Embeddings;
  index: IndexService;
  traces: TraceStore;
  ask: AskService;
  training: TrainingService;
  /** The index stores (`--store`): the command's settings choose one per request. */
  stores: IndexStores;
  /** Stops the parse workers, saves the embedding cache, releases the encoder and closes the stores. */
  close(): Promise<void>;
}

/**
 * `store`: the command's store setting (`storeSetting`), whose node-vector cache the encoder
 * uses; the same setting goes with the command's requests.
 */
export function cliServices(root: string, indexDir: string | undefined, io: CliIO, verbose = false, store?: string): CliServices {
  const absRoot = path.resolve(io.cwd, root);
  const absIndex = indexDir ? path.resolve(io.cwd, indexDir) : defaultIndexDir(absRoot);
  const logger = cliLogger(io, verbose);
  const encoder = cliEncoder(io);
  const stores = new IndexStores(absIndex);
  const embeddings = new Embeddings({ store: () => stores.get(store), encoder: () => encoder, builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'), baseDir: absRoot, logger });
  const parseWorkers = new ParseWorkers(logger);
  const index = new IndexService({ root: absRoot, indexDir: absIndex, embeddings, parseWorkers, storeFor: stores.storeFor, logger });
  let training: TrainingService | undefined;
  return {
    root: absRoot,
    indexDir: absIndex,
    embeddings,
    index,
    traces: new TraceStore(path.join(absIndex, 'traces'), logger),
    ask: new AskService({ index, embeddings, adapters: new AdapterCheckpoints(absRoot), logger }),
    // Built (and its module, with the trainer and the parsers, loaded) only by a command that trains.
    get training(): TrainingService {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { TrainingService: Training } = require('../core/app/trainingService') as typeof import('../core/app/trainingService');
      training ??= new Training({ root: absRoot, embeddings, parseWorkers, index, logger });
      return training;
    },
    stores,
    async close() {
      await parseWorkers.close();
      await embeddings.dispose();
      await stores.close();
    },
  };
}
