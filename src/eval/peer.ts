/**
 * The peer: vectra's own document pipeline — `LocalDocumentIndex` (its TextSplitter chunking,
 * its cosine + optional BM25 chunk search, `queryDocuments`) and `LocalDocumentResult.
 * renderSections` — given the same evidence token budget as a Canopy configuration. vectra's
 * built-in embedding classes download models, so it gets Canopy's built-in encoder through an
 * `EmbeddingsModel` object, and the cl100k_base tokenizer Canopy counts with, so both sides'
 * budgets are in the same tokens.
 *
 * Two vectra behaviours handled here:
 *  - BM25 (`isBm25`) throws (`winkBM25S: document collection is too small…`) when fewer than 3
 *    chunks remain outside the semantic top `maxChunks`: it is switched off for that query then;
 *  - every `upsertDocument` clones and rewrites the whole index (quadratic for a large corpus):
 *    `addBulk` holds one update open across many documents (the same writes, done once);
 *  - with BM25, every query builds a new wink-nlp instance, and wink-eng-lite-web-model 1.8.1's
 *    `metaCER()` JSON-stringifies its module-level model again on each call (the string's escapes
 *    double every time), so a BM25 query past the 20th in a process dies with "Invalid string length":
 *    `stabiliseWinkModel` makes `metaCER()` return its first (correct) result every time.
 */
import { promises as fs } from 'node:fs';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { LocalDocumentIndex } from 'vectra/lib/LocalDocumentIndex';
import type { EmbeddingsModel, EmbeddingsResponse, Tokenizer } from 'vectra/lib/types';

let winkStabilised = false;

/** See the header: makes wink-eng-lite-web-model's `metaCER()` idempotent (once per process). */
export function stabiliseWinkModel(): void {
  if (winkStabilised) return;
  winkStabilised = true;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const model = require('wink-eng-lite-web-model') as { metaCER?: () => unknown };
  const original = model.metaCER;
  if (typeof original !== 'function') return;
  let first: unknown;
  model.metaCER = () => (first ??= original.call(model));
}

export interface PeerEmbeddings {
  embedTexts(texts: string[]): Promise<Float32Array[]>;
}

export interface PeerDoc {
  id: string;
  text: string;
}

export interface PeerOptions {
  /** vectra TextSplitter chunk size in tokens (vectra's default is 512). */
  chunkSize: number;
  chunkOverlap?: number;
}

export interface PeerHit {
  id: string;
  score: number;
}

export interface PeerRendered {
  id: string;
  text: string;
  tokens: number;
}

let tokenizer: Tokenizer | undefined;

/** cl100k_base, the tokenizer Canopy counts evidence tokens with. */
export function cl100kTokenizer(): Tokenizer {
  if (!tokenizer) {
    const t = new Tiktoken(cl100k);
    tokenizer = { encode: (text) => t.encode(text), decode: (tokens) => t.decode(tokens) };
  }
  return tokenizer;
}

/** An EmbeddingsModel for vectra that calls Canopy's encoder (through the embedding cache). */
export function peerEmbeddingsModel(embeddings: PeerEmbeddings): EmbeddingsModel {
  return {
    maxTokens: 8000,
    async createEmbeddings(inputs: string | string[]): Promise<EmbeddingsResponse> {
      const texts = Array.isArray(inputs) ? inputs : [inputs];
      try {
        const vectors = await embeddings.embedTexts(texts);
        return { status: 'success', output: vectors.map((v) => Array.from(v)) };
      } catch (err) {
        return { status: 'error', message: (err as Error).message };
      }
    },
  };
}

export class VectraPeer {
  /** Queries whose BM25 part was switched off (too few chunks outside the semantic top). */
  bm25Skipped = 0;

  private constructor(
    readonly folder: string,
    private readonly index: LocalDocumentIndex,
  ) {
    stabiliseWinkModel();
  }

  /** A fresh (emptied) index in `folder`. */
  static async create(folder: string, embeddings: PeerEmbeddings, options: PeerOptions): Promise<VectraPeer> {
    await fs.rm(folder, { recursive: true, force: true });
    const index = new LocalDocumentIndex({
      folderPath: folder,
      embeddings: peerEmbeddingsModel(embeddings),
      tokenizer: cl100kTokenizer(),
      chunkingConfig: { chunkSize: options.chunkSize, chunkOverlap: options.chunkOverlap ?? 0 },
    });
    await index.createIndex({ version: 1, deleteIfExists: true });
    return new VectraPeer(folder, index);
  }

  /** An index built earlier in `folder` (see `isBuilt`). */
  static async open(folder: string, embeddings: PeerEmbeddings, options: PeerOptions): Promise<VectraPeer> {
    const index = new LocalDocumentIndex({
      folderPath: folder,
      embeddings: peerEmbeddingsModel(embeddings),
      tokenizer: cl100kTokenizer(),
      chunkingConfig: { chunkSize: options.chunkSize, chunkOverlap: options.chunkOverlap ?? 0 },
    });
    return new VectraPeer(folder, index);
  }

  static async isBuilt(folder: string): Promise<boolean> {
    try {
      await fs.access(`${folder}/catalog.json`);
      await fs.access(`${folder}/index.json`);
      return true;
    } catch {
      return false;
    }
  }

  get chunkCount(): Promise<number> {
    return this.index.getIndexStats().then((s) => s.items);
  }

  /** One `upsertDocument` per document, as vectra's README does it. */
  async add(docs: PeerDoc[]): Promise<void> {
    for (const d of docs) await this.index.upsertDocument(d.id, d.text, 'txt');
  }

  /**
   * The same upserts inside one open update: vectra's `upsertDocument` begins and ends an update
   * per document (clone + full rewrite); with an update already open those calls are skipped
   * and the index and catalog are written once at the end.
   */
  async addBulk(docs: PeerDoc[]): Promise<void> {
    const idx = this.index as unknown as { beginUpdate(): Promise<void>; endUpdate(): Promise<void> };
    await idx.beginUpdate();
    const realBegin = idx.beginUpdate;
    const realEnd = idx.endUpdate;
    idx.beginUpdate = async () => undefined;
    idx.endUpdate = async () => undefined;
    try {
      for (const d of docs) await this.index.upsertDocument(d.id, d.text, 'txt');
    } finally {
      idx.beginUpdate = realBegin;
      idx.endUpdate = realEnd;
    }
    await idx.endUpdate();
  }

  /**
   * vectra's `queryDocuments` (top `maxChunks` chunks by cosine, plus BM25 chunks when `bm25`
   * and at least 3 chunks remain outside them), then `renderSections` per document in score
   * order, each given what is left of the budget (one section each), until the budget is spent.
   */
  async retrieveAndRender(question: string, budget: number, options: { maxDocuments: number; maxChunks: number; bm25: boolean }): Promise<{ hits: PeerHit[]; rendered: PeerRendered[] }> {
    const chunks = await this.chunkCount;
    const useBm25 = options.bm25 && chunks - options.maxChunks >= 3;
    if (options.bm25 && !useBm25) this.bm25Skipped++;
    const results = await this.index.queryDocuments(question, { maxDocuments: options.maxDocuments, maxChunks: options.maxChunks, isBm25: useBm25 });
    const hits = results.map((r) => ({ id: r.uri, score: r.score }));
    const rendered: PeerRendered[] = [];
    let remaining = budget;
    for (const r of results) {
      if (remaining <= 0) break;
      const sections = await r.renderSections(remaining, 1, true);
      for (const s of sections) {
        if (s.tokenCount > remaining || s.text.trim() === '') continue;
        rendered.push({ id: r.uri, text: s.text, tokens: s.tokenCount });
        remaining -= s.tokenCount;
      }
    }
    return { hits, rendered };
  }

  async dispose(): Promise<void> {
    await fs.rm(this.folder, { recursive: true, force: true });
  }
}
