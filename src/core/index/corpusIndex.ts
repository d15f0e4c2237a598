/**
 * An opened, read-only index generation of any store (indexStore.ts): the manifest, dense and
 * lexical top-k, and the parsed documents (loaded on demand, kept in a small LRU). The retriever
 * and the pipeline read the corpus only through this.
 */
import type { Item } from '../../contracts/region';
import { CanopyError, ErrorCodes } from '../errors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { GenerationReader, IndexStore, SearchHit } from './indexStore';
import type { IndexManifest } from './layout';

export class CorpusIndex {
  private readonly itemFile = new Map<string, string>();
  /**
   * Parsed documents by content key, most recently used last: the promise, so that items of one
   * file retrieved together (the retriever loads its hits in parallel) share one read and parse.
   */
  private readonly docs = new Map<string, Promise<ParsedDocument>>();
  /** Dense top-k by cosine similarity (the store's). */
  readonly vectors: { readonly size: number; query(vector: Float32Array, k: number, filter?: { modalities?: readonly string[] }): Promise<SearchHit[]> };
  /** Lexical top-k (the store's: BM25 or the database's full-text ranking). */
  /** `scoring`: bm25.ts's per-field score (default) or flat. */
  readonly lexical: { readonly size: number; query(text: string, k: number, modalities?: readonly string[], scoring?: 'fields' | 'flat'): Promise<SearchHit[]> };

  private constructor(
    readonly store: IndexStore,
    readonly manifest: IndexManifest,
    private readonly reader: GenerationReader,
    private readonly maxCachedDocs: number,
  ) {
    for (const [file, entry] of Object.entries(manifest.files)) for (const id of entry.items) this.itemFile.set(id, file);
    this.vectors = { size: reader.size, query: (vector, k, filter) => reader.dense(vector, k, filter) };
    this.lexical = { size: reader.size, query: (text, k, modalities, scoring) => reader.lexical(text, k, modalities || scoring ? { ...(modalities ? { modalities } : {}), ...(scoring ? { scoring } : {}) } : undefined) };
  }

  /** Opens the live generation; CanopyError(E_NOT_FOUND) when the store holds no index yet. */
  static async open(store: IndexStore, options: { maxCachedDocs?: number } = {}): Promise<CorpusIndex> {
    for (let attempt = 0; ; attempt++) {
      const generation = await store.liveGeneration();
      if (generation === undefined) throw new CanopyError(ErrorCodes.notFound, `no Canopy index at ${store.location}: index the folder first`);
      try {
        const manifest = await store.readManifest(generation);
        const reader = await store.open(generation);
        return new CorpusIndex(store, manifest, reader, options.maxCachedDocs ?? 256);
      } catch (err) {
        // Two commits between reading the live generation and opening it removed it: open the new one.
        if (attempt < 2 && err instanceof CanopyError && err.code === ErrorCodes.indexCorrupt && (await store.liveGeneration()) !== generation) continue;
        throw err;
      }
    }
  }

  /**
   * The items a title names, by title key (text/titles.ts): for each key the ids of the items whose
   * title's key it is, from the store's key table — no document is read.
   */
  titled(keys: readonly string[], modalities?: readonly string[]): Promise<Map<string, string[]>> {
    return this.reader.titled(keys, modalities ? { modalities } : undefined);
  }

  /** The local store's folder (topic banks and scorers live there); undefined for a database store. */
  get dir(): string | undefined {
    return this.store.localDir;
  }

  get generation(): number {
    return this.manifest.generation;
  }

  get itemCount(): number {
    return this.itemFile.size;
  }

  /** The file an item belongs to (from the manifest; nothing is loaded). */
  fileOf(itemId: string): string | undefined {
    return this.itemFile.get(itemId);
  }

  hasFile(relPath: string): boolean {
    return relPath in this.manifest.files;
  }

  async document(relPath: string): Promise<ParsedDocument> {
    const entry = this.manifest.files[relPath];
    if (!entry) throw new CanopyError(ErrorCodes.notFound, `${relPath} is not in the index`, { file: relPath });
    const hit = this.docs.get(entry.doc);
    if (hit) {
      this.docs.delete(entry.doc);
      this.docs.set(entry.doc, hit);
      return hit;
    }
    const loading = this.reader.document(entry.doc).catch((err: unknown) => {
      // A failed read is not kept: the next caller tries again.
      if (this.docs.get(entry.doc) === loading) this.docs.delete(entry.doc);
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.store.location} is corrupt: parsed ${relPath} unreadable (${(err as Error).message})`, {
        file: relPath,
        cause: err,
      });
    });
    this.docs.set(entry.doc, loading);
    if (this.docs.size > this.maxCachedDocs) this.docs.delete(this.docs.keys().next().value!);
    return loading;
  }

  async item(id: string): Promise<Item> {
    const file = this.itemFile.get(id);
    if (!file) throw new CanopyError(ErrorCodes.notFound, `item ${id} is not in the index`);
    const doc = await this.document(file);
    const item = doc.items.find((it) => it.id === id);
    if (!item) throw new CanopyError(ErrorCodes.indexCorrupt, `item ${id} is missing from the parsed ${file}`, { file });
    return item;
  }

  /** Releases the generation's reader (file handles, connections it holds); the store stays open. */
  async close(): Promise<void> {
    this.docs.clear();
    await this.reader.close();
  }
}
