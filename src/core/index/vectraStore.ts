/**
 * VectorStore on vectra's LocalIndex: one vectra index per generation, each in its own folder
 * (`vectors-<N>/index.json`). vectra keeps a whole index in memory and writes it as one JSON
 * file, so a torn write can only hit a generation that is not live yet. Each generation needs its
 * own folder because vectra's createIndex/deleteIndex remove the whole folder they are given.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LocalIndex } from 'vectra/lib/LocalIndex';
import { syncFile } from '../store/atomicFile';
import type { VectorEntry, VectorHit, VectorSearch, VectorStore } from './vectorStore';

type Meta = { file: string; modality: string };

const folderName = (generation: number) => `vectors-${generation}`;

export class VectraStore implements VectorStore {
  constructor(private readonly folder: string) {}

  private index(generation: number): LocalIndex<Meta> {
    return new LocalIndex<Meta>(path.join(this.folder, folderName(generation)), 'index.json');
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
    await syncFile(path.join(this.folder, folderName(to), 'index.json'));
  }

  async open(generation: number): Promise<VectorSearch> {
    const index = this.index(generation);
    if (!(await index.isIndexCreated())) throw new Error(`vector generation ${generation} is missing (${folderName(generation)})`);
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

  async entries(generation: number): Promise<Array<{ id: string; vector: Float32Array }>> {
    const index = this.index(generation);
    if (!(await index.isIndexCreated())) throw new Error(`vector generation ${generation} is missing (${folderName(generation)})`);
    return (await index.listItems()).map((item) => ({ id: item.id, vector: Float32Array.from(item.vector) }));
  }

  async dropGeneration(generation: number): Promise<void> {
    await fs.rm(path.join(this.folder, folderName(generation)), { recursive: true, force: true });
  }

  async listGenerations(): Promise<number[]> {
    const names = await fs.readdir(this.folder).catch(() => [] as string[]);
    return names.flatMap((n) => {
      const m = /^vectors-(\d+)$/.exec(n);
      return m ? [Number(m[1])] : [];
    });
  }
}
