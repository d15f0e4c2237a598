/**
 * The VectorStore port: item vectors for dense retrieval, stored in immutable generations so
 * that an index update is crash-safe (the indexer writes generation N+1 beside N and only then
 * makes it live). vectra is the embedded default (vectraStore.ts); a server-grade engine can
 * implement this port for corpora that outgrow one machine. Nothing outside an adapter knows
 * the engine's types.
 */

export interface VectorEntry {
  id: string;
  vector: Float32Array;
  /** Flat metadata the store can filter on. */
  metadata: { file: string; modality: string };
}

export interface VectorHit {
  id: string;
  score: number;
}

export interface VectorSearch {
  readonly size: number;
  /** Top-k ids by cosine similarity, best first; only the given modalities when set. */
  query(vector: Float32Array, k: number, filter?: { modalities?: readonly string[] }): Promise<VectorHit[]>;
}

export interface VectorStore {
  /**
   * Writes generation `to` as generation `from` (or an empty store) with `remove` taken out and
   * `upsert` put in. Generation `to` must not exist or be live; it is complete and durable when
   * the promise resolves.
   */
  writeGeneration(from: number | undefined, to: number, changes: { upsert: VectorEntry[]; remove: string[] }): Promise<void>;
  open(generation: number): Promise<VectorSearch>;
  dropGeneration(generation: number): Promise<void>;
  /** Generations present on disk (live or stale). */
  listGenerations(): Promise<number[]>;
  /** Every item vector of a generation (the topic compass fits its topics on them). */
  entries?(generation: number): Promise<Array<{ id: string; vector: Float32Array }>>;
}
