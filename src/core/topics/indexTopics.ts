/**
 * The topic compass as a stage of the index (design §4): after the indexer has written the item
 * vectors of generation N, the metadata bank of generation N is derived from the bank of the
 * generation it was built from (incremental `updateTopics`) or, when there is none, it was fitted
 * under another encoder, or the model has drifted (`needsRefit`), fitted again over every item
 * (`fitTopics`). It is written as `topics-<N>.bin` beside the other files of generation N, before
 * CURRENT names N, so it is committed and garbage-collected with that generation (layout.ts).
 *
 * The trained scorer lives in `topic-scorer.json` at the index root: its features (cosines and
 * ranks) do not name topics, so it stays valid across refits; it records the encoder it was
 * trained under and is ignored under another.
 */
import { promises as fs } from 'node:fs';
import { CanopyError, ErrorCodes } from '../errors';
import type { GenerationInput, GenerationStage, IndexSummary } from '../index/indexer';
import type { FileEntry } from '../index/layout';
import { paths } from '../index/layout';
import type { IndexStore } from '../index/indexStore';
import type { ParsedDocument } from '../ingest/parsedDocument';
import { silentLogger } from '../ports';
import { writeFileAtomic } from '../store/atomicFile';
import { TopicBank } from './bank';
import { chooseTopicCount, fitTopics, topicDefaults, updateTopics, type TopicChunk } from './fit';
import type { ScorerWeights } from './scorer';
import { normalizeInPlace } from './vectorMath';

/** What the index stage needs to know (from settings: `canopy.topics.*`). */
export interface TopicIndexOptions {
  /** K; 0 or absent: `chooseTopicCount(items)` (√N in [8, 100]). */
  k?: number;
  seed?: number;
  /** Share of the fitted corpus that may change before a refit; default 0.2. */
  driftThreshold?: number;
}

export interface TopicIndexSummary {
  /** `fit`: fitted from scratch; `update`: folded into the previous bank; `refit`: update advised a refit. */
  action: 'fit' | 'update' | 'refit';
  k: number;
  entries: number;
  /** Why a fit happened (no previous bank, other encoder, drift). */
  reason?: string;
  seconds: number;
}

export interface TopicStageInput extends GenerationInput {
  options?: TopicIndexOptions;
}

const STAGE_NAME = 'topics';

/** The topic compass's stage for the indexer: fits or updates the metadata bank of each generation. */
export function topicStage(options: TopicIndexOptions = {}): GenerationStage {
  return { name: STAGE_NAME, output: 'topic bank', run: (input) => runTopicStage({ ...input, options }) };
}

/** What the topic stage did in an index run, if it ran. */
export function topicSummaryOf(summary: IndexSummary): TopicIndexSummary | undefined {
  return summary.stage?.name === STAGE_NAME ? (summary.stage.summary as TopicIndexSummary) : undefined;
}

export async function readTopicBank(dir: string, generation: number): Promise<TopicBank | undefined> {
  const file = paths(dir).topics(generation);
  try {
    await fs.access(file);
  } catch {
    return undefined;
  }
  return TopicBank.load(file);
}

/** Every item of a generation as a TopicChunk: vectors from the store, texts from the parsed documents. */
export async function indexChunks(dir: string, store: Pick<IndexStore, 'entries'>, generation: number, files: Readonly<Record<string, FileEntry>>): Promise<TopicChunk[]> {
  const texts = new Map([...(await itemTexts(dir, files))].map(([id, t]) => [id, `${t.title}\n${t.text}`]));
  const entries = await store.entries(generation);
  entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)); // deterministic fit whatever the store's order
  return entries.map((e) => ({ id: e.id, vector: normalizeInPlace(Float32Array.from(e.vector)), text: texts.get(e.id) ?? '' }));
}

/** Title and whole text of every item of the given files, from the parsed documents on disk. */
export async function itemTexts(dir: string, files: Readonly<Record<string, FileEntry>>): Promise<Map<string, { title: string; text: string }>> {
  const texts = new Map<string, { title: string; text: string }>();
  for (const entry of Object.values(files)) {
    let doc: ParsedDocument;
    try {
      doc = JSON.parse(await fs.readFile(paths(dir).doc(entry.doc), 'utf8')) as ParsedDocument;
    } catch (err) {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${dir} is corrupt: a parsed document is unreadable (${(err as Error).message})`, { cause: err });
    }
    for (const item of doc.items) texts.set(item.id, { title: item.title, text: item.root.text });
  }
  return texts;
}

/** Fits a bank for generation N over every item of it and writes `topics-<N>.bin`. */
export async function fitIndexTopics(
  dir: string,
  store: Pick<IndexStore, 'entries'>,
  generation: number,
  files: Readonly<Record<string, FileEntry>>,
  encoderId: string,
  options: TopicIndexOptions = {},
): Promise<TopicBank | undefined> {
  const chunks = await indexChunks(dir, store, generation, files);
  if (chunks.length === 0) return undefined;
  const bank = fitTopics(chunks, {
    k: options.k && options.k > 0 ? options.k : chooseTopicCount(chunks.length),
    seed: options.seed ?? topicDefaults.seed,
    encoderId,
  });
  await bank.save(paths(dir).topics(generation));
  return bank;
}

/** The index stage: update or fit the bank of generation N. Undefined when the index has no items. */
export async function runTopicStage(input: TopicStageInput): Promise<TopicIndexSummary | undefined> {
  const started = Date.now();
  const log = input.logger ?? silentLogger;
  const options = input.options ?? {};
  let previous: TopicBank | undefined;
  let reason: string | undefined;
  if (input.previousGeneration === undefined) reason = 'no previous generation';
  else {
    try {
      previous = await readTopicBank(input.dir, input.previousGeneration);
      if (!previous) reason = 'no topic bank for the previous generation';
    } catch (err) {
      reason = `previous topic bank unreadable (${(err as Error).message})`;
      log.log('warn', `topics: ${reason}; fitting again`);
    }
  }
  if (previous && previous.model.encoderId !== input.encoderId) {
    reason = `topics were fitted under encoder ${previous.model.encoderId}`;
    previous = undefined;
  }
  const wantK = options.k && options.k > 0 ? options.k : undefined;
  if (previous && wantK !== undefined && previous.model.k !== Math.min(wantK, previous.size + input.upsert.length)) {
    reason = `K changed (${previous.model.k} → ${wantK})`;
    previous = undefined;
  }
  if (previous) {
    const upsert = input.upsert.map((u) => ({ id: u.id, vector: normalizeInPlace(Float32Array.from(u.vector)) }));
    const update = updateTopics(previous, { upsert, remove: input.remove }, options.driftThreshold !== undefined ? { driftThreshold: options.driftThreshold } : {});
    if (!update.needsRefit && update.bank.size > 0) {
      await update.bank.save(paths(input.dir).topics(input.generation));
      return { action: 'update', k: update.bank.model.k, entries: update.bank.size, seconds: (Date.now() - started) / 1000 };
    }
    reason = update.bank.size === 0 ? 'the index is empty' : `drift ${update.drift.toFixed(3)} or new subject matter (mean fit ${Number.isNaN(update.addedSimilarity) ? '–' : update.addedSimilarity.toFixed(3)})`;
    const bank = await fitIndexTopics(input.dir, input.store, input.generation, input.files, input.encoderId, options);
    if (!bank) return undefined;
    return { action: 'refit', k: bank.model.k, entries: bank.size, reason, seconds: (Date.now() - started) / 1000 };
  }
  const bank = await fitIndexTopics(input.dir, input.store, input.generation, input.files, input.encoderId, options);
  if (!bank) return undefined;
  return { action: 'fit', k: bank.model.k, entries: bank.size, ...(reason ? { reason } : {}), seconds: (Date.now() - started) / 1000 };
}

// ---- the scorer checkpoint ----

export const TOPIC_SCORER_FORMAT = 'canopy.topic-scorer';

export interface TopicScorerCheckpoint {
  format: typeof TOPIC_SCORER_FORMAT;
  version: 1;
  createdAt: string;
  /** The encoder the query and chunk vectors came from. */
  encoderId: string;
  /** Compass settings the scorer was trained under (its topic features depend on them). */
  compass: { selectEntries: number; topics: number; selection: 'top-l' | 'all'; abstraction: 'pooled' | 'raw'; candidates: number };
  weights: ScorerWeights;
  training: {
    source: 'qrels' | 'annotations' | 'synthetic' | 'teacher';
    seed: number;
    trainQueries: number;
    heldOutQueries: number;
    losses: number[];
    /**
     * The retrieval whose candidates the scorer was trained on and re-ranks (describeFusion, e.g.
     * "hybrid, BM25 (0.6 flat) + 0.15 × cosine (top 100 of each), top 50"); absent in checkpoints
     * written before it was recorded (those trained on the equal-weight RRF hybrid).
     */
    candidates?: string;
    /** Held-out IE@1/3/5 and nDCG@10 of the candidates' own order and of the compass, when a held-out split was kept. */
    heldOut?: Record<string, { hybrid: number; compass: number }>;
    notes?: string[];
  };
}

export async function writeTopicScorer(dir: string, checkpoint: TopicScorerCheckpoint): Promise<string> {
  const file = paths(dir).topicScorer;
  await writeFileAtomic(file, JSON.stringify(checkpoint, null, 1));
  return file;
}

/** The checkpoint at the index root; undefined when there is none; CanopyError(E_BAD_INPUT) when it is not one. */
export async function readTopicScorer(dir: string): Promise<TopicScorerCheckpoint | undefined> {
  const file = paths(dir).topicScorer;
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  let c: TopicScorerCheckpoint;
  try {
    c = JSON.parse(text) as TopicScorerCheckpoint;
  } catch (err) {
    throw new CanopyError(ErrorCodes.indexCorrupt, `${file} is not JSON (${(err as Error).message})`, { file });
  }
  if (c?.format !== TOPIC_SCORER_FORMAT || c.version !== 1 || !c.weights || !Array.isArray(c.weights.mean)) {
    throw new CanopyError(ErrorCodes.indexCorrupt, `${file} is not a Canopy topic-scorer checkpoint of version 1`, { file });
  }
  return c;
}
