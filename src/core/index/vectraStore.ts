/**
 * VectorStore on vectra's LocalIndex: one vectra index file per generation
 * (`vectors-<N>.json` in the index folder). vectra keeps a whole index in memory and writes it
 * as one JSON file; we give every generation its own file name so a torn write can only hit a
 * generation that is not live yet.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LocalIndex } from 'vectra/lib/LocalIndex';
import { syncFile } from '../store/atomicFile';
import type { VectorEntry, VectorHit, VectorSearch, VectorStore } from './vectorStore';

type Meta = { file: string; modality: string };

const fileName = (generation: number) => `vectors-${generation}.json`;

export class VectraStore implements VectorStore {
  constructor(private readonly folder: string) {}

  private index(generation: number): LocalIndex<Meta> {
    return new LocalIndex<Meta>(this.folder, fileName(generation));
  }

  async writeGeneration(from: number | undefined, to: number, changes: { upsert: VectorEntry[]; remove: string[] }): Promise<void> {
    const removed = new Set([...changes.remove, ...changes.upsert.map((e) => e.id)]);
    const previous = from === undefined ? [] : await this.index(from).listItems();
    const target = this.index(to);
    await target.createIndex({ version: 1, deleteIfExists: true });
    await target.beginUpdate();
    for (const item of previous) {
      if (!removed.has(item.id)) await target.insertItem({ id: item.id, vector: item.vector, metadata: item.metadata });
    }
    for (const e of changes.upsert) {
      await target.insertItem({ id: e.id, vector: Array.from(e.vector), metadata: e.metadata });
    }
    await target.endUpdate();
    await syncFile(path.join(this.folder, fileName(to)));
  }

  async open(generation: number): Promise<VectorSearch> {
    const index = this.index(generation);
    if (!(await index.isIndexCreated())) throw new Error(`vector generation ${generation} is missing (${fileName(generation)})`);
    const size = (await index.getIndexStats()).items;
    return {
      size,
      async query(vector: Float32Array, k: number, filter?: { modalities?: readonly string[] }): Promise<VectorHit[]> {
        if (size === 0) return [];
        const metaFilter = filter?.modalities ? { modality: { $in: [...filter.modalities] } } : undefined;
        const results = await index.queryItems(Array.from(vector), '', k, metaFilter, false);
        return results.map((r) => ({ id: r.item.id, score: r.score }));
      },
    };
  }

  async dropGeneration(generation: number): Promise<void> {
    await fs.rm(path.join(this.folder, fileName(generation)), { force: true });
  }

  async listGenerations(): Promise<number[]> {
    const names = await fs.readdir(this.folder).catch(() => [] as string[]);
    return names.flatMap((n) => {
      const m = /^vectors-(\d+)\.json$/.exec(n);
      return m ? [Number(m[1])] : [];
    });
  }
}
