/**
 * Embeddings: the encoder, its embedding cache (under the index folder) and the query vectors
 * encoded lately, loaded on first use and shared by indexing, questions, replays and training.
 *
 * The encoder is read from `encoder()` on every use, so a changed `canopy.encoder.modelFolder`
 * takes effect on the next request without rebuilding anything: the old encoder's cache is saved
 * and the encoder released first. Concurrent first calls share one load (20 questions asked at
 * once used to load the model and a 232 MB cache 20 times over).
 */
import { createEncoder } from '../encode/createEncoder';
import { EmbeddingCache } from '../encode/cache';
import type { Encoder, EncoderConfig } from '../encode/encoder';
import { paths } from '../index/layout';
import { silentLogger, type Logger } from '../ports';

/** How often, at most, the cache is written after a question (each save rewrites the whole file). */
const CACHE_SAVE_INTERVAL_MS = 30_000;
/** Query vectors remembered for replays (the newest). */
const REMEMBERED_QUERIES = 512;

export interface EmbeddingsConfig {
  /** The index folder; the cache lives in its `embeddings/` folder. */
  indexDir: string;
  /** The encoder to use, asked on every use (a constant in the CLI, the current setting in the extension). */
  encoder: () => EncoderConfig;
  /** Folder of the built-in model. */
  builtinModelDir: string;
  /** Relative model folders resolve against this (the workspace folder). */
  baseDir: string;
  logger?: Logger;
}

interface Loaded {
  key: string;
  encoder: Encoder;
  cache: EmbeddingCache;
}

export class Embeddings {
  private loaded: Loaded | undefined;
  private loading: { key: string; promise: Promise<Loaded> } | undefined;
  private lastSave = 0;
  private readonly log: Logger;
  /** Query vectors encoded here (the newest), so a replay never needs the encoder. */
  private readonly queries = new Map<string, { encoderId: string; vector: Float32Array }>();

  constructor(private readonly config: EmbeddingsConfig) {
    this.log = config.logger ?? silentLogger;
  }

  /** The encoder and its cache for the current encoder setting, loaded (or switched) on demand. */
  async load(): Promise<{ encoder: Encoder; cache: EmbeddingCache }> {
    const wanted = this.config.encoder();
    const key = JSON.stringify(wanted);
    if (this.loaded?.key === key) return this.loaded;
    if (this.loading?.key === key) return this.loading.promise;
    const loading = { key, promise: this.open(wanted, key) };
    this.loading = loading;
    try {
      const next = await loading.promise;
      // A load overtaken by another setting still serves its own callers; the newest one is kept.
      if (this.loading === loading) this.loaded = next;
      return next;
    } finally {
      if (this.loading === loading) this.loading = undefined;
    }
  }

  private async open(wanted: EncoderConfig, key: string): Promise<Loaded> {
    const old = this.loaded;
    this.loaded = undefined;
    if (old) await this.release(old);
    const encoder = await createEncoder(wanted, { builtinModelDir: this.config.builtinModelDir, baseDir: this.config.baseDir });
    const cache = await EmbeddingCache.open({ dir: paths(this.config.indexDir).embeddings, encoder, logger: this.log });
    return { key, encoder, cache };
  }

  /** Texts → unit vectors through the cache (only misses reach the encoder). */
  readonly embedTexts = async (texts: string[], signal?: AbortSignal): Promise<Float32Array[]> => {
    const { encoder, cache } = await this.load();
    return cache.getOrEncode(texts, encoder, signal);
  };

  /** A query → its vector, straight from the encoder, remembered for replays. */
  readonly embedQuery = async (text: string, signal?: AbortSignal): Promise<Float32Array> => {
    const { encoder } = await this.load();
    const [v] = await encoder.encode([text], signal);
    this.queries.delete(text);
    this.queries.set(text, { encoderId: encoder.id, vector: v! });
    if (this.queries.size > REMEMBERED_QUERIES) this.queries.delete(this.queries.keys().next().value!);
    return v!;
  };

  /** A query's vector without encoding: remembered from a question, else cached; undefined when neither. */
  async knownQueryVector(text: string): Promise<Float32Array | undefined> {
    const { encoder, cache } = await this.load();
    const hit = this.queries.get(text);
    return hit && hit.encoderId === encoder.id ? hit.vector : cache.get(text);
  }

  /** Cached vectors only (undefined where the cache has none); never encodes. */
  async cachedVectors(texts: readonly string[]): Promise<Array<Float32Array | undefined>> {
    const { cache } = await this.load();
    return texts.map((t) => cache.get(t));
  }

  /** Writes the cache now (after indexing and training, and on dispose). */
  async save(): Promise<void> {
    this.lastSave = Date.now();
    await this.loaded?.cache.save();
  }

  /**
   * After a question: the cache is saved at most every 30 s (each save rewrites the whole file —
   * tens of MB on a large index), and always on dispose and after indexing. A crash loses at most
   * the vectors of the last 30 s of questions, which are recomputed when needed.
   */
  async saveSoon(): Promise<void> {
    if (Date.now() - this.lastSave < CACHE_SAVE_INTERVAL_MS) return;
    await this.save();
  }

  async dispose(): Promise<void> {
    const loaded = this.loaded ?? (await this.loading?.promise.catch(() => undefined));
    this.loaded = undefined;
    this.loading = undefined;
    if (loaded) await this.release(loaded);
  }

  private async release(l: Loaded): Promise<void> {
    try {
      await l.cache.save();
    } catch (err) {
      this.log.log('warn', `the embedding cache could not be saved (${(err as Error).message}); its new vectors are recomputed when needed`);
    }
    await l.encoder.dispose();
  }
}
