/**
 * The node-vector cache port: every text's vector under one encoder, keyed by the text's content
 * (SHA-256 of its normalised form, `contentKey`), so a text is encoded once per model. The index
 * store provides it (IndexStore.vectorCache): the local store keeps it in binary segment files
 * read on demand (cache.ts), the Postgres store in a table — so other machines answering from a
 * shared index read node vectors instead of re-encoding them.
 */
import type { Encoder } from './encoder';

export interface VectorCache {
  readonly modelId: string;
  readonly dim: number;
  /** Vectors for `texts`, in order; only texts without a cached vector go to the encoder (one call). */
  getOrEncode(texts: readonly string[], encoder: Encoder, signal?: AbortSignal): Promise<Float32Array[]>;
  /** Cached vectors only, in order (undefined where none); never encodes. */
  lookup(texts: readonly string[]): Promise<Array<Float32Array | undefined>>;
  /** Makes the vectors added so far durable. */
  save(): Promise<void>;
}
