/**
 * Embeddings: the encoder, its node-vector cache (the index store's: binary segments in a local
 * index folder, a table in Postgres) and the query vectors encoded lately, loaded on first use and
 * shared by indexing, questions, replays and training.
 *
 * The encoder is read from `encoder()` on every use, so a changed `canopy.encoder.modelFolder`
 * takes effect on the next request without rebuilding anything: the old encoder's cache is saved
 * and the encoder released first. The store is read the same way (a changed `canopy.store` reads
 * and writes the new store's cache). Concurrent first calls share one load (20 questions asked at
 * once used to load the model and a 232 MB cache 20 times over).
 */
import { createEncoder, encoderIdOf } from '../encode/createEncoder';
import { CanopyError, ErrorCodes } from '../errors';
import type { Encoder, EncoderConfig } from '../encode/encoder';
import type { VectorCache } from '../encode/vectorCache';
import type { IndexStore } from '../index/indexStore';
import { silentLogger, type Logger } from '../ports';

/** How often, at most, the cache is written after a question (each save rewrites the whole file). */
const CACHE_SAVE_INTERVAL_MS = 30_000;
/** Query vectors remembered for replays (the newest). */
const REMEMBERED_QUERIES = 512;

export interface EmbeddingsConfig {
  /** The index store whose node-vector cache is used, asked on every use (the store of the current `canopy.store`). */
  store: () => IndexStore;
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
  store: IndexStore;
  encoder: Encoder;
  cache: VectorCache;
}

export class Embeddings {
  private loaded: Loaded | undefined;
  private loading: { key: string; store: IndexStore; promise: Promise<Loaded> } | undefined;
  private lastSave = 0;
  private readonly log: Logger;
  /** Query vectors encoded here (the newest), so a replay never needs the encoder. */
  private readonly queries = new Map<string, { encoderId: string; vector: Float32Array }>();
  /** Encoder ids known without loading the encoder, by setting. */
  private readonly knownIds = new Map<string, string>();

  constructor(private readonly config: EmbeddingsConfig) {
    this.log = config.logger ?? silentLogger;
  }

  /** The encoder and its cache for the current encoder setting, loaded (or switched) on demand. */
  async load(): Promise<{ encoder: Encoder; cache: VectorCache }> {
    const wanted = this.config.encoder();
    const store = this.config.store();
    const key = JSON.stringify(wanted);
    if (this.loaded?.key === key && this.loaded.store === store) return this.loaded;
    if (this.loading?.key === key && this.loading.store === store) return this.loading.promise;
    const loading = { key, store, promise: this.open(wanted, key, store) };
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

  private async open(wanted: EncoderConfig, key: string, store: IndexStore): Promise<Loaded> {
    const old = this.loaded;
    this.loaded = undefined;
    let encoder: Encoder;
    if (old?.key === key) {
      // Only the store changed: keep the encoder, save the old store's cache.
      await this.saveCache(old.cache);
      encoder = old.encoder;
    } else {
      if (old) await this.release(old);
      encoder = await createEncoder(wanted, { builtinModelDir: this.config.builtinModelDir, baseDir: this.config.baseDir });
    }
    const cache = await store.vectorCache(encoder, this.log);
    return { key, store, encoder, cache };
  }

  /**
   * The id of the encoder the current setting names — without loading it where the id is known
   * from the model's files (the built-in encoder), else by loading it.
   */
  async encoderId(): Promise<string> {
    const wanted = this.config.encoder();
    const key = JSON.stringify(wanted);
    if (this.loaded?.key === key) return this.loaded.encoder.id;
    // Known once per setting (the built-in model's hash reads 7 MB; the extension indexes on every save).
    let id = this.knownIds.get(key);
    if (id === undefined) {
      id = await encoderIdOf(wanted, { builtinModelDir: this.config.builtinModelDir, baseDir: this.config.baseDir });
      if (id !== undefined) this.knownIds.set(key, id);
    }
    return id ?? (await this.load()).encoder.id;
  }

  /**
   * What an indexing run needs: the encoder's id at once; the encoder and its cache only when a
   * text needs a vector, so an unchanged re-index neither opens the model nor reads the cache.
   * The run keeps the encoder it started with (its id goes into the manifest): a setting changed
   * while it runs fails the run's next encoding instead of mixing two encoders' vectors.
   */
  async forIndexing(): Promise<{ id: string; embed: (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>; persist: () => Promise<void> }> {
    const id = await this.encoderId();
    let used: VectorCache | undefined;
    return {
      id,
      embed: async (texts, signal) => {
        const { encoder, cache } = await this.load();
        if (encoder.id !== id) throw new CanopyError(ErrorCodes.encoderFailed, `the encoder changed while indexing (${id} → ${encoder.id}); index again`);
        used = cache;
        return cache.getOrEncode(texts, encoder, signal);
      },
      persist: async () => {
        await used?.save();
      },
    };
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
    return hit && hit.encoderId === encoder.id ? hit.vector : (await cache.lookup([text]))[0];
  }

  /** Cached vectors only (undefined where the cache has none); never encodes. */
  async cachedVectors(texts: readonly string[]): Promise<Array<Float32Array | undefined>> {
    const { cache } = await this.load();
    return cache.lookup(texts);
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
    await this.saveCache(l.cache);
    await l.encoder.dispose();
  }

  private async saveCache(cache: VectorCache): Promise<void> {
    try {
      await cache.save();
    } catch (err) {
      this.log.log('warn', `the embedding cache could not be saved (${(err as Error).message}); its new vectors are recomputed when needed`);
    }
  }
}
