/**
 * The encoder and embedding cache an evaluation run uses: the same `createEncoder` and
 * `EmbeddingCache` as the workspace, with the cache in the evaluation cache folder so reruns do
 * not re-encode. Queries go through the cache too (same vectors; reruns are faster).
 */
import { EmbeddingCache } from '../core/encode/cache';
import { createEncoder } from '../core/encode/createEncoder';
import type { Encoder, EncoderConfig } from '../core/encode/encoder';
import type { Logger } from '../core/ports';

export interface EvalEmbeddings {
  readonly id: string;
  readonly dim: number;
  readonly encoder: Encoder;
  embedTexts(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array>;
  /** Texts sent to the encoder so far (cache misses). */
  readonly encoded: number;
  save(): Promise<void>;
  dispose(): Promise<void>;
}

export async function openEvalEmbeddings(options: { encoder: EncoderConfig; builtinModelDir: string; cacheDir: string; logger?: Logger }): Promise<EvalEmbeddings> {
  const encoder = await createEncoder(options.encoder, { builtinModelDir: options.builtinModelDir });
  const cache = await EmbeddingCache.open({ dir: options.cacheDir, encoder, ...(options.logger ? { logger: options.logger } : {}) });
  let encoded = 0;
  let savedAt = 0;
  // Long first runs (a whole pool) save the cache every so often, so an interrupted run keeps its work.
  const autosave = async () => {
    if (encoded - savedAt >= 20_000) {
      savedAt = encoded;
      await cache.save();
    }
  };
  const counting: Encoder = {
    id: encoder.id,
    dim: encoder.dim,
    maxPieces: encoder.maxPieces,
    encode: (texts, signal) => {
      encoded += texts.length;
      return encoder.encode(texts, signal);
    },
    dispose: () => encoder.dispose(),
  };
  return {
    id: encoder.id,
    dim: encoder.dim,
    encoder,
    get encoded() {
      return encoded;
    },
    embedTexts: async (texts, signal) => {
      const out = await cache.getOrEncode(texts, counting, signal);
      await autosave();
      return out;
    },
    embedQuery: async (text, signal) => (await cache.getOrEncode([text], counting, signal))[0]!,
    save: () => cache.save(),
    dispose: async () => {
      await cache.save();
      await encoder.dispose();
    },
  };
}
