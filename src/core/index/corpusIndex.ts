/**
 * An opened, read-only index generation: the manifest, the item vectors, the BM25 index and the
 * parsed documents (loaded on demand, kept in a small LRU). The retriever and the pipeline read
 * the corpus only through this.
 */
import { promises as fs } from 'node:fs';
import { CanopyError, ErrorCodes } from '../errors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { Item } from '../../contracts/region';
import { paths, readCurrent, readManifest, type IndexManifest } from './layout';
import { LexicalIndex } from './lexicalIndex';
import type { VectorSearch, VectorStore } from './vectorStore';

export class CorpusIndex {
  private readonly itemFile = new Map<string, string>();
  private readonly docs = new Map<string, ParsedDocument>();

  private constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
    readonly vectors: VectorSearch,
    readonly lexical: LexicalIndex,
    private readonly maxCachedDocs: number,
  ) {
    for (const [file, entry] of Object.entries(manifest.files)) for (const id of entry.items) this.itemFile.set(id, file);
  }

  /** Opens the live generation; CanopyError(E_NOT_FOUND) when the folder holds no index yet. */
  static async open(dir: string, store: VectorStore, options: { maxCachedDocs?: number } = {}): Promise<CorpusIndex> {
    const generation = await readCurrent(dir);
    if (generation === undefined) throw new CanopyError(ErrorCodes.notFound, `no Canopy index at ${dir}: index the folder first`);
    const manifest = await readManifest(dir, generation);
    const vectors = await store.open(generation);
    let lexical: LexicalIndex;
    try {
      lexical = LexicalIndex.fromJSON(await fs.readFile(paths(dir).lexical(generation), 'utf8'));
    } catch (err) {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${dir} is corrupt: BM25 index unreadable (${(err as Error).message})`, { cause: err });
    }
    return new CorpusIndex(dir, manifest, vectors, lexical, options.maxCachedDocs ?? 256);
  }

  get generation(): number {
    return this.manifest.generation;
  }

  get itemCount(): number {
    return this.itemFile.size;
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
    let doc: ParsedDocument;
    try {
      doc = JSON.parse(await fs.readFile(paths(this.dir).doc(entry.doc), 'utf8')) as ParsedDocument;
    } catch (err) {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.dir} is corrupt: parsed ${relPath} unreadable (${(err as Error).message})`, {
        file: relPath,
        cause: err,
      });
    }
    this.docs.set(entry.doc, doc);
    if (this.docs.size > this.maxCachedDocs) this.docs.delete(this.docs.keys().next().value!);
    return doc;
  }

  async item(id: string): Promise<Item> {
    const file = this.itemFile.get(id);
    if (!file) throw new CanopyError(ErrorCodes.notFound, `item ${id} is not in the index`);
    const doc = await this.document(file);
    const item = doc.items.find((it) => it.id === id);
    if (!item) throw new CanopyError(ErrorCodes.indexCorrupt, `item ${id} is missing from the parsed ${file}`, { file });
    return item;
  }
}
