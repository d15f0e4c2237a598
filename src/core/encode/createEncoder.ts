/**
 * Picks the encoder from settings: the built-in USE-lite model, or a user's Hugging Face ONNX
 * folder. The caller supplies where the built-in model lives (the extension, the CLI and the
 * tests each know their own package root).
 */
import { isAbsolute, resolve } from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import type { Encoder, EncoderConfig } from './encoder';
import { OnnxFolderEncoder } from './onnxFolderEncoder';
import { UseLiteEncoder } from './useLiteEncoder';

export interface EncoderEnvironment {
  /** Folder of the built-in model, e.g. path.join(packageRoot, 'models', 'use-lite'). */
  builtinModelDir: string;
  /** Relative `onnx-folder` paths resolve against this (e.g. the workspace folder). */
  baseDir?: string;
  /** onnxruntime intra-op threads; 1 by default. */
  intraOpNumThreads?: number;
  batchSize?: number;
}

/**
 * The id the encoder `config` names would have, where it is known without opening the model's
 * runtime session: the built-in model's (its manifest and file hash). A user's ONNX folder is
 * known only once loaded (its id includes what a test run measures): undefined.
 */
export async function encoderIdOf(config: EncoderConfig, env: EncoderEnvironment): Promise<string | undefined> {
  return config.kind === 'builtin' ? UseLiteEncoder.idOf(env.builtinModelDir) : undefined;
}

export async function createEncoder(config: EncoderConfig, env: EncoderEnvironment): Promise<Encoder> {
  const common = {
    ...(env.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: env.intraOpNumThreads }),
    ...(env.batchSize === undefined ? {} : { batchSize: env.batchSize }),
  };
  switch (config.kind) {
    case 'builtin':
      return UseLiteEncoder.create({ modelDir: env.builtinModelDir, ...common });
    case 'onnx-folder': {
      if (typeof config.path !== 'string' || config.path.trim() === '') {
        throw new CanopyError(ErrorCodes.badInput, 'An onnx-folder encoder needs the path of a model folder');
      }
      const folder = isAbsolute(config.path) ? config.path : resolve(env.baseDir ?? process.cwd(), config.path);
      return OnnxFolderEncoder.create({ folder, ...common });
    }
    default: {
      const never: never = config;
      throw new CanopyError(ErrorCodes.badInput, `Unknown encoder kind: ${(never as { kind: string }).kind}`);
    }
  }
}
