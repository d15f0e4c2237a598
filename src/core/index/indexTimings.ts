/**
 * Where indexing spends its time, stage by stage, per file and in total — so every claim about
 * indexing speed is a measured one (`canopy bench index`, issue 34). The indexer, the parse
 * workers (through `ParsedDocument.stats.stages`), the store and the encoder report into one
 * `IndexTimings` when a host passes one; without it nothing is measured and nothing changes.
 *
 * Stages (milliseconds; in a worker or on the main thread, as named):
 *   read          main: reading the file's bytes and hashing them
 *   extract       worker: pdf.js text extraction (PDF only)
 *   layout        worker: a PDF's lines, columns, tables, blocks and draft tree; another format's parser
 *   tableContext  worker: captions, units, subheaders and groups of every table
 *   hierarchy     worker: inner texts and anchors, items, B-ary groups, numbering; traits
 *   graph         worker: the document graph without its semantic edges
 *   semantic      the semantic-neighbour edges (cosines): on the main thread when the indexer encodes
 *                 for the parse (IndexService), in the worker when the parse has the encoder
 *   encodeWait    worker: time a parse with the encoder waited for vectors from the main thread
 *   transfer      from the worker posting the parsed document to the indexer holding it (clone, message)
 *   vectors       main: every node's vector for the index (cache look-ups; derivation)
 *   encode        main: encoder calls (tokenising + inference), as the encoder reports them
 *   tokenize      main: the part of `encode` spent tokenising
 *   bm25          main: BM25 of the items and a PDF's element BM25
 *   write         main: parsed documents, item vectors, BM25 files, cache segments, manifest (serialising, writing, syncing)
 */
import type { ParseStages } from '../ingest/parsedDocument';

export type StageName =
  | 'read'
  | 'extract'
  | 'layout'
  | 'tableContext'
  | 'hierarchy'
  | 'graph'
  | 'semantic'
  | 'encodeWait'
  | 'transfer'
  | 'vectors'
  | 'encode'
  | 'tokenize'
  | 'bm25'
  | 'write';

/** A place to add measured milliseconds to; the store and encoder take one where they can. */
export interface StageClock {
  add(stage: StageName, ms: number, file?: string): void;
}

/** What one file cost, by stage (ms). */
export interface FileTimings {
  file: string;
  format: string;
  pages?: number;
  regions: number;
  /** Texts the file's leaves and tables gave the encoder (before the cache). */
  encodedTexts: number;
  stages: Partial<Record<StageName, number>>;
  /** Worker CPU time of the parse, ms, when known. */
  workerCpu?: number;
  /** Wall time from the start of the file's read to its last write, ms (files overlap in a pipeline). */
  wall: number;
}

/** Collects stage times in total and per file. */
export class IndexTimings implements StageClock {
  readonly totals: Partial<Record<StageName, number>> = {};
  readonly files = new Map<string, FileTimings>();

  add(stage: StageName, ms: number, file?: string): void {
    this.totals[stage] = (this.totals[stage] ?? 0) + ms;
    if (file === undefined) return;
    const f = this.files.get(file);
    if (f) f.stages[stage] = (f.stages[stage] ?? 0) + ms;
  }

  /** Starts a file's record (before its stages are added). */
  startFile(file: string, format: string): FileTimings {
    const f: FileTimings = { file, format, regions: 0, encodedTexts: 0, stages: {}, wall: 0 };
    this.files.set(file, f);
    return f;
  }

  /** Adds a worker's parse stages to the totals and the file. */
  addParse(file: string, stages: ParseStages | undefined): void {
    if (!stages) return;
    for (const [k, v] of Object.entries(stages)) {
      if (k === 'cpu' || k === 'sentAt' || typeof v !== 'number') continue;
      this.add(k as StageName, v, file);
    }
    const f = this.files.get(file);
    if (f && stages.cpu !== undefined) f.workerCpu = stages.cpu;
  }
}

/** Times `fn` into `clock` (when there is one). */
export async function timedStage<T>(clock: StageClock | undefined, stage: StageName, fn: () => Promise<T>, file?: string): Promise<T> {
  if (!clock) return fn();
  const t = performance.now();
  try {
    return await fn();
  } finally {
    clock.add(stage, performance.now() - t, file);
  }
}
