/**
 * The local adapter of the storage port: one folder (layout.ts), no server, the default the
 * extension ships with. Item vectors and the BM25 index are one binary file each per generation
 * (itemVectors.ts, bm25.ts), read without parsing JSON; parsed documents are content-addressed
 * JSON files read one at a time (CorpusIndex keeps a few in an LRU); node vectors live in the
 * embedding cache's binary segments, read on demand. So a reader holds the item vectors (2 KiB per
 * item in f32, a quarter in i8), the BM25 postings and what its questions touch — not the corpus.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { EmbeddingCache } from '../encode/cache';
import type { Encoder } from '../encode/encoder';
import type { VectorCache } from '../encode/vectorCache';
import { CanopyError, ErrorCodes } from '../errors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { Logger } from '../ports';
import { removeStaleTemps, writeFileAtomic } from '../store/atomicFile';
import { Bm25Index } from './bm25';
import { attachElementIndex, buildElementIndex, readElementIndex, wantsElementIndex } from './elementIndex';
import type { GenerationChanges, GenerationReader, IndexStore, SearchFilter, SearchHit } from './indexStore';
import type { StageClock } from './indexTimings';
import { encodeItemVectors, ItemVectors, type ItemVector, type VectorEncoding } from './itemVectors';
import { acquireLock, paths, readCurrent, readManifest, writeCurrent, type IndexManifest } from './layout';

export interface LocalStoreOptions {
  /** How item vectors are held: `f32` (default) or `i8` codes with exact rescoring (itemVectors.ts). */
  vectorEncoding?: VectorEncoding;
}

/** Names of per-generation files (and the folders of format 1) with their generation number. */
const GENERATION_FILE = /^(?:gen-(\d+)\.json|items-(\d+)\.vec|lexical-(\d+)\.(?:bm25|json)|topics-(\d+)\.bin|vectors-(\d+))$/;

function generationOf(name: string): number | undefined {
  const m = GENERATION_FILE.exec(name);
  if (!m) return undefined;
  return Number(m.slice(1).find((g) => g !== undefined));
}

/** The files under docs/ that belong to the document stored under `key`. */
function documentFiles(key: string): string[] {
  return [`${key}.json`, `${key}.elements.bm25`];
}

/**
 * A parsed document and, beside it when the indexer wrote one, its element index (attached to
 * the returned object, elementIndex.ts). A damaged element index is an Error naming its file.
 */
async function readDocument(dir: string, key: string): Promise<ParsedDocument> {
  const p = paths(dir);
  const [text, elements] = await Promise.all([
    fs.readFile(p.doc(key), 'utf8'),
    fs.readFile(p.docElements(key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined; // an index written before element indexes: built when asked
      throw err;
    }),
  ]);
  const doc = JSON.parse(text) as ParsedDocument;
  if (elements && doc.graph) {
    try {
      attachElementIndex(doc, readElementIndex(elements, doc.graph));
    } catch (err) {
      throw new Error(`its element index ${path.relative(dir, p.docElements(key))} is damaged (${(err as Error).message}); delete that file: the document is then read without it and the index built when needed`, { cause: err });
    }
  }
  return doc;
}

export class LocalStore implements IndexStore {
  readonly kind = 'local' as const;

  constructor(
    readonly dir: string,
    private readonly options: LocalStoreOptions = {},
  ) {}

  get location(): string {
    return this.dir;
  }

  get localDir(): string {
    return this.dir;
  }

  async lockWriter(): Promise<() => Promise<void>> {
    await fs.mkdir(paths(this.dir).docs, { recursive: true });
    return acquireLock(this.dir);
  }

  async recover(): Promise<void> {
    await removeStaleTemps(this.dir);
    await removeStaleTemps(paths(this.dir).docs);
  }

  liveGeneration(): Promise<number | undefined> {
    return readCurrent(this.dir);
  }

  readManifest(generation: number): Promise<IndexManifest> {
    return readManifest(this.dir, generation);
  }

  async generations(): Promise<number[]> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    return [...new Set(names.flatMap((n) => generationOf(n) ?? []))];
  }

  async putDocument(key: string, doc: ParsedDocument, clock?: StageClock): Promise<void> {
    const p = paths(this.dir);
    const file = p.doc(key);
    let t = performance.now();
    // Content-addressed and written atomically: a file that exists is this document.
    if (await fs.access(file).then(
      () => true,
      () => false,
    ))
      return;
    // The element index first: a document that exists has its element index (when it wants one).
    if (wantsElementIndex(doc)) {
      const t0 = performance.now();
      const elements = buildElementIndex(doc.graph!).toBuffer();
      clock?.add('bm25', performance.now() - t0);
      t += performance.now() - t0;
      await writeFileAtomic(p.docElements(key), elements);
    }
    await writeFileAtomic(file, JSON.stringify(doc));
    clock?.add('write', performance.now() - t);
  }

  async writeGeneration(from: number | undefined, to: number, changes: GenerationChanges, clock?: StageClock): Promise<void> {
    const p = paths(this.dir);
    const t0 = performance.now();
    const replaced = new Set([...changes.remove, ...changes.upsert.map((u) => u.id)]);
    let kept: ItemVector[] = [];
    let lexical = Bm25Index.empty();
    let dim = changes.upsert[0]?.vector.length;
    if (from !== undefined) {
      const base = await this.openVectors(from);
      try {
        dim ??= base.dim;
        if (base.size > 0 && base.dim !== dim) throw new CanopyError(ErrorCodes.badInput, `the index at ${this.dir} holds ${base.dim}-d vectors; new items have ${dim}-d vectors`);
        kept = base.all().filter((v) => !replaced.has(v.id));
      } finally {
        base.close();
      }
      lexical = await this.openLexical(from);
    }
    const items: ItemVector[] = [...kept, ...changes.upsert.map((u) => ({ id: u.id, modality: u.modality, vector: u.vector }))];
    await writeFileAtomic(p.items(to), encodeItemVectors(items, dim ?? 0, this.options.vectorEncoding ?? 'f32'));
    const t1 = performance.now();
    const next = lexical.update(replaced, changes.upsert.map((u) => ({ id: u.id, title: u.title, text: u.text, modality: u.modality })));
    const lexicalBytes = next.toBuffer();
    const t2 = performance.now();
    await writeFileAtomic(p.lexical(to), lexicalBytes);
    clock?.add('bm25', t2 - t1);
    clock?.add('write', t1 - t0 + performance.now() - t2);
  }

  async commit(manifest: IndexManifest): Promise<void> {
    await writeFileAtomic(paths(this.dir).manifest(manifest.generation), JSON.stringify(manifest));
    await writeCurrent(this.dir, manifest.generation); // the commit point
  }

  async collectGarbage(live: IndexManifest, previous: number | undefined): Promise<void> {
    const p = paths(this.dir);
    // The previous generation stays whole for readers that read CURRENT just before the commit.
    for (const name of await fs.readdir(this.dir)) {
      const g = generationOf(name);
      if (g !== undefined && g !== live.generation && g !== previous) await fs.rm(path.join(this.dir, name), { recursive: true, force: true });
    }
    // Documents of the previous generation stay for readers that opened it before the commit.
    const referenced = new Set(Object.values(live.files).flatMap((e) => documentFiles(e.doc)));
    if (previous !== undefined) {
      const old = await this.readManifest(previous).catch(() => undefined);
      for (const e of Object.values(old?.files ?? {})) for (const name of documentFiles(e.doc)) referenced.add(name);
    }
    for (const name of await fs.readdir(p.docs)) if (!referenced.has(name)) await fs.rm(path.join(p.docs, name), { force: true });
  }

  async open(generation: number): Promise<GenerationReader> {
    const vectors = await this.openVectors(generation);
    let lexical: Bm25Index;
    try {
      lexical = await this.openLexical(generation);
    } catch (err) {
      vectors.close();
      throw err;
    }
    if (lexical.size !== vectors.size) {
      vectors.close();
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.dir} is corrupt: generation ${generation} has ${vectors.size} item vectors but ${lexical.size} BM25 entries`);
    }
    const dir = this.dir;
    return {
      generation,
      size: vectors.size,
      dense: async (vector: Float32Array, k: number, filter?: SearchFilter): Promise<SearchHit[]> => vectors.query(vector, k, filter?.modalities),
      lexical: async (text: string, k: number, filter?: SearchFilter): Promise<SearchHit[]> => lexical.query(text, k, filter?.modalities, filter?.scoring),
      titled: async (keys: readonly string[], filter?: SearchFilter) => lexical.titled(keys, filter?.modalities),
      document: (key: string) => readDocument(dir, key),
      entries: async () => vectors.all().map((v) => ({ id: v.id, vector: v.vector })),
      close: async () => vectors.close(),
    };
  }

  async entries(generation: number): Promise<Array<{ id: string; vector: Float32Array }>> {
    const vectors = await this.openVectors(generation);
    try {
      return vectors.all().map((v) => ({ id: v.id, vector: v.vector }));
    } finally {
      vectors.close();
    }
  }

  async vectorCache(encoder: Pick<Encoder, 'id' | 'dim'>, logger?: Logger): Promise<VectorCache> {
    return EmbeddingCache.open({ dir: paths(this.dir).embeddings, encoder, ...(logger ? { logger } : {}) });
  }

  async close(): Promise<void> {}

  private async openVectors(generation: number): Promise<ItemVectors> {
    const file = paths(this.dir).items(generation);
    try {
      return await ItemVectors.open(file);
    } catch (err) {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.dir} is corrupt: ${path.basename(file)} unreadable (${(err as Error).message})`, { file, cause: err });
    }
  }

  private async openLexical(generation: number): Promise<Bm25Index> {
    const file = paths(this.dir).lexical(generation);
    try {
      return Bm25Index.fromBuffer(await fs.readFile(file));
    } catch (err) {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.dir} is corrupt: BM25 index ${path.basename(file)} unreadable (${(err as Error).message})`, { file, cause: err });
    }
  }
}
