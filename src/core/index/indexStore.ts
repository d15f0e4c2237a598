/**
 * The storage port: everything the indexer writes and the retriever reads, in immutable
 * generations, so that an index update is crash-safe (generation N+1 is written beside N and
 * becomes live in one atomic step; a writer killed before that step leaves N live). Two adapters
 * implement it: `LocalStore` (localStore.ts: binary files in a folder, the default the extension
 * ships with) and `PostgresStore` (postgresStore.ts: Postgres with pgvector, for shared and large
 * indexes). One contract suite (test/unit/index/storeContract.ts) runs against both.
 *
 * The store ranks (dense top-k, lexical top-k); the retriever fuses (src/core/retrieve). Nothing
 * outside an adapter knows the engine's types.
 */
import type { Encoder } from '../encode/encoder';
import type { VectorCache } from '../encode/vectorCache';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { Logger } from '../ports';
import type { StageClock } from './indexTimings';
import type { IndexManifest } from './layout';

/** One item as the store keeps it: its vector for dense search and its text for lexical search. */
export interface ItemRecord {
  id: string;
  /** The file (relative path) the item came from. */
  file: string;
  modality: string;
  title: string;
  text: string;
  /** Unit length (cosine = dot product); the store may normalise again. */
  vector: Float32Array;
}

export interface SearchHit {
  id: string;
  score: number;
}

export interface SearchFilter {
  /** Only items of these modalities; all when absent. */
  modalities?: readonly string[];
  /**
   * Lexical scoring (bm25.ts): per field (default) or flat. A store whose lexical ranking is not
   * Canopy's BM25 (Postgres full text) ranks the same either way.
   */
  scoring?: 'fields' | 'flat';
}

/** What changes from one generation to the next. An upserted id replaces the old item of that id. */
export interface GenerationChanges {
  upsert: ItemRecord[];
  remove: string[];
}

/** One generation, opened for reading: what CorpusIndex (and so the retriever) needs. */
export interface GenerationReader {
  readonly generation: number;
  /** Items in this generation. */
  readonly size: number;
  /** Top-k ids by cosine similarity to `vector`, best first. */
  dense(vector: Float32Array, k: number, filter?: SearchFilter): Promise<SearchHit[]>;
  /** Top-k ids by the store's lexical ranking of `text` (OR over its terms), best first. */
  lexical(text: string, k: number, filter?: SearchFilter): Promise<SearchHit[]>;
  /**
   * The items a title names, by title key (text/titles.ts `titleKey`; an item's key is
   * `titleKeyOf` its title): for each key, the ids of the items whose key it is; a key no item
   * has is absent. Items written before the stores kept keys are found by none.
   */
  titled(keys: readonly string[], filter?: SearchFilter): Promise<Map<string, string[]>>;
  /** A parsed document by its content key (FileEntry.doc). */
  document(key: string): Promise<ParsedDocument>;
  /** Every item vector of the generation (the topic compass fits its topics on them). */
  entries(): Promise<Array<{ id: string; vector: Float32Array }>>;
  /** Releases what the reader holds (file handles, memory); the store stays open. */
  close(): Promise<void>;
}

export interface IndexStore {
  /** 'local' or 'postgres'. */
  readonly kind: 'local' | 'postgres';
  /** Where the index lives, for messages: a folder, or a database URL without its password. */
  readonly location: string;
  /** The folder of a local store (topic banks and traces live beside the index there); undefined for a database. */
  readonly localDir: string | undefined;

  /**
   * Takes the single-writer lock (one indexer at a time, across processes and machines); resolves
   * to its release. CanopyError(E_BAD_INPUT) naming the holder when a live writer has it; a lock
   * left by a dead writer is taken over.
   */
  lockWriter(): Promise<() => Promise<void>>;
  /** Under the writer lock: removes what a killed writer left (data of generations that never went live). */
  recover(): Promise<void>;
  /** The live generation; undefined when there is no index yet; CanopyError (E_INDEX_CORRUPT, E_INDEX_VERSION) when unreadable. */
  liveGeneration(): Promise<number | undefined>;
  /** The manifest of a written generation; CanopyError(E_INDEX_CORRUPT) when missing or unreadable. */
  readManifest(generation: number): Promise<IndexManifest>;
  /** Every generation number that has any data (live, stale or torn), so a new one is numbered above all. */
  generations(): Promise<number[]>;
  /**
   * Stores a parsed document under its content key; idempotent. Readers see it once a live
   * manifest names it. `clock` hears where the time went (`bm25`, `write`), when given.
   */
  putDocument(key: string, doc: ParsedDocument, clock?: StageClock): Promise<void>;
  /**
   * Writes generation `to` as generation `from` (or an empty index) with `changes` applied: item
   * vectors and the lexical index. Complete and durable when the promise resolves, but not live.
   */
  writeGeneration(from: number | undefined, to: number, changes: GenerationChanges, clock?: StageClock): Promise<void>;
  /** Stores the manifest of generation `manifest.generation` and makes that generation live in one atomic step: the commit point. */
  commit(manifest: IndexManifest): Promise<void>;
  /**
   * After a commit: removes the data of generations no reader needs any more and parsed documents
   * no kept manifest names. `previous` (the generation the live one was built from) may be kept
   * for readers that opened it before the commit.
   */
  collectGarbage(live: IndexManifest, previous: number | undefined): Promise<void>;
  /** Opens a written generation for reading. */
  open(generation: number): Promise<GenerationReader>;
  /** Every item vector of a written generation (the topic compass fits its topics on them). */
  entries(generation: number): Promise<Array<{ id: string; vector: Float32Array }>>;
  /** The node-vector cache of this store for an encoder: every node vector, keyed by its text. */
  vectorCache(encoder: Pick<Encoder, 'id' | 'dim'>, logger?: Logger): Promise<VectorCache>;
  /** Closes connections and handles. */
  close(): Promise<void>;
}
