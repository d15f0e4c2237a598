/**
 * The topic compass over an opened index, for the workspace, the CLI and `canopy eval`: open the
 * bank of the live generation and the trained scorer and wrap the hybrid retriever; train a
 * scorer against the index (qrels, annotations, synthetic queries, or an LLM teacher) and store
 * it with the index; fit the bank of an index that was built without topics.
 */
import type { CorpusIndex } from '../index/corpusIndex';
import type { IndexStore } from '../index/indexStore';
import { CanopyError, ErrorCodes } from '../errors';
import type { ChatModel } from '../llm/llm';
import { silentLogger, type Logger } from '../ports';
import type { Retriever } from '../retrieve/retriever';
import type { TopicBank } from './bank';
import { defaultCompassOptions, type CompassOptions } from './compass';
import { fitIndexTopics, itemTexts, readTopicBank, readTopicScorer, writeTopicScorer, type TopicIndexOptions, type TopicScorerCheckpoint } from './indexTopics';
import { TopicCompassRetriever } from './retriever';
import { TopicScorer } from './scorer';
import { labelQueries, structuralQueries, teacherQueries, trainOnLabelled, type CompassTrainingOptions, type TrainingQuery, type TrainingSource } from './trainIndex';

type EmbedQuery = (text: string, signal?: AbortSignal) => Promise<Float32Array>;

/** The folder topic banks and scorers live in: the local store's (a database store has none yet). */
export function topicDir(corpus: CorpusIndex): string {
  if (corpus.dir === undefined) throw new CanopyError(ErrorCodes.badInput, `the topic compass needs the local store; ${corpus.store.location} is a ${corpus.store.kind} store`);
  return corpus.dir;
}

/** The bank of the index's live generation; fitted (and written) when `fit` is set and it is missing. */
export async function bankFor(corpus: CorpusIndex, store: Pick<IndexStore, 'entries'>, options: { fit?: boolean; topics?: TopicIndexOptions; logger?: Logger } = {}): Promise<TopicBank | undefined> {
  const existing = await readTopicBank(topicDir(corpus), corpus.generation);
  if (existing && existing.model.encoderId === corpus.manifest.encoderId) return existing;
  if (!options.fit) return undefined;
  (options.logger ?? silentLogger).log('info', `topics: fitting the topic model over ${corpus.itemCount} items of generation ${corpus.generation}`);
  return fitIndexTopics(topicDir(corpus), store, corpus.generation, corpus.manifest.files, corpus.manifest.encoderId, options.topics);
}

export function compassOptionsOf(checkpoint: TopicScorerCheckpoint): Partial<CompassOptions> & { candidates: number } {
  const c = checkpoint.compass;
  return { selectEntries: c.selectEntries, topics: c.topics, selection: c.selection, abstraction: c.abstraction, candidates: c.candidates };
}

/**
 * The compass retriever over `hybrid`, when the live generation has a bank and the index a scorer
 * trained under the same encoder; otherwise undefined and the reason (the caller keeps the hybrid).
 */
export async function openCompass(
  corpus: CorpusIndex,
  hybrid: Retriever,
  embedQuery: EmbedQuery,
): Promise<{ retriever: TopicCompassRetriever; checkpoint: TopicScorerCheckpoint } | { reason: string }> {
  if (corpus.dir === undefined) return { reason: `the topic compass needs the local store (this index is a ${corpus.store.kind} store)` };
  const bank = await readTopicBank(corpus.dir, corpus.generation);
  if (!bank) return { reason: `no topic bank for generation ${corpus.generation} (index with canopy.topics.enabled)` };
  if (bank.model.encoderId !== corpus.manifest.encoderId) return { reason: `the topic bank was fitted under another encoder (${bank.model.encoderId})` };
  const checkpoint = await readTopicScorer(corpus.dir);
  if (!checkpoint) return { reason: 'no trained topic scorer (run canopy topics train)' };
  if (checkpoint.encoderId !== corpus.manifest.encoderId) return { reason: `the topic scorer was trained under another encoder (${checkpoint.encoderId})` };
  const retriever = new TopicCompassRetriever(hybrid, corpus, embedQuery, bank, TopicScorer.fromJSON(checkpoint.weights), compassOptionsOf(checkpoint));
  return { retriever, checkpoint };
}

export interface TrainOnIndexInput {
  corpus: CorpusIndex;
  bank: TopicBank;
  hybrid: Retriever;
  embedQuery: EmbedQuery;
  source: TrainingSource;
  /** The hybrid's candidates in words (decision.ts candidatesOf): recorded in the checkpoint, which the automatic decision compares with today's default. */
  candidates?: string;
  /** For qrels / annotations: the labelled queries (item ids as positives). */
  queries?: readonly TrainingQuery[];
  /** For synthetic / teacher: how many queries to make; default min(500, items). */
  count?: number;
  llm?: ChatModel;
  logger?: Logger;
}

/** Builds the training queries, labels them with the hybrid candidates, trains, and returns the checkpoint (not yet written). */
export async function trainOnIndex(input: TrainOnIndexInput, options: CompassTrainingOptions = {}): Promise<{ checkpoint: TopicScorerCheckpoint; queries: number }> {
  const seed = options.seed ?? 1;
  const notes: string[] = [];
  let queries: readonly TrainingQuery[];
  if (input.source === 'synthetic' || input.source === 'teacher') {
    const texts = await itemTexts(topicDir(input.corpus), input.corpus.manifest.files);
    const count = input.count ?? Math.min(500, texts.size);
    if (input.source === 'teacher') {
      if (!input.llm) throw new Error('the LLM teacher needs a configured LLM');
      const t = await teacherQueries(input.llm, texts, input.hybrid, { count, seed, ...(options.signal ? { signal: options.signal } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
      queries = t.queries;
      notes.push(`teacher ${input.llm.id}: ${t.queries.length} queries, ${t.failures} failed generations`);
    } else {
      queries = structuralQueries(texts, count, seed);
      notes.push('synthetic queries from document structure (first sentence, else title); the query text is in its positive chunk');
    }
  } else queries = input.queries ?? [];
  const known = queries.map((q) => ({ ...q, positives: q.positives.filter((p) => input.bank.indexOf(p) !== undefined) })).filter((q) => q.positives.length > 0);
  if (known.length < queries.length) notes.push(`${queries.length - known.length} queries without a gold item in the index were dropped`);
  if (known.length === 0) throw new Error('no training query has a gold item in this index');
  const labelled = await labelQueries(input.hybrid, input.embedQuery, known, {
    candidates: options.candidates ?? 50,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const { checkpoint } = trainOnLabelled(input.bank, labelled, { source: input.source, encoderId: input.corpus.manifest.encoderId, notes, ...(input.candidates ? { candidates: input.candidates } : {}) }, { ...options, compass: { ...defaultCompassOptions, ...options.compass } });
  return { checkpoint, queries: known.length };
}

/** Trains from synthetic queries and writes the checkpoint, unless the index already has one for this encoder. */
export async function ensureScorer(input: Omit<TrainOnIndexInput, 'source'>, options: CompassTrainingOptions = {}): Promise<TopicScorerCheckpoint | undefined> {
  const existing = await readTopicScorer(topicDir(input.corpus)).catch(() => undefined);
  // A synthetic scorer of other candidates (an older default retrieval) is replaced; a trained one (qrels, annotations, teacher) is the user's to retrain.
  const stale = existing?.training.source === 'synthetic' && input.candidates !== undefined && existing.training.candidates !== input.candidates;
  if (existing && existing.encoderId === input.corpus.manifest.encoderId && !stale) return existing;
  const { checkpoint } = await trainOnIndex({ ...input, source: 'synthetic' }, options);
  await writeTopicScorer(topicDir(input.corpus), checkpoint);
  (input.logger ?? silentLogger).log('info', `topics: trained a scorer on ${checkpoint.training.trainQueries} synthetic queries (run canopy topics train with qrels or annotations for a better one)`);
  return checkpoint;
}
