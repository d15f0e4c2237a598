/**
 * The index of one folder: discover the files, parse them in the parse workers, run the indexer
 * (a new generation, switched atomically), and open the live generation for questions. Settings
 * come with each request, so a changed `canopy.include`, `canopy.topics.enabled`… applies to the
 * next run. The index store is chosen from the request's settings (`canopy.store`) by an injected
 * `storeFor` (the hosts wire IndexStores: the local store or Postgres), so nothing here names an
 * engine.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { defaultSettings, type CanopySettings } from '../config/settings';
import { CorpusIndex } from '../index/corpusIndex';
import { runIndexer, type IndexSummary } from '../index/indexer';
import type { IndexTimings } from '../index/indexTimings';
import type { IndexStore } from '../index/indexStore';
import { discoverFiles } from '../ingest/discover';
import { silentLogger, type Logger, type ProgressSink } from '../ports';
import { HybridRetriever } from '../retrieve/hybrid';
import { indexProfile } from '../retrieve/profile';
import { candidatesOf } from '../topics/decision';
import { ensureScorer } from '../topics/compassIndex';
import { readTopicBank, topicStage, topicSummaryOf } from '../topics/indexTopics';
import { rememberLastQuery } from '../topics/retriever';
import type { Tracer } from '../trace/tracer';
import type { Embeddings } from './embeddings';
import type { ParseWorkers } from './parseWorkers';

/**
 * Bump when parsing changes in a way that must re-parse existing indexes. ingest-2: node vectors
 * derived from the encoded leaves and tables (src/core/encode/nodeVectors.ts), so stored item
 * vectors changed meaning. ingest-3: every item carries its document's traits — language and
 * profiles (profiles/profiles.ts) — which the reader's and critic's features read; tables'
 * captions, units and grouping label rows (ingest/tableContext.ts) on every table and row.
 * ingest-4: a sentence that opens with a code span ("… no adapter. `createApp` is …") is a
 * sentence of its own (ingest/sentences.ts). ingest-5: no sentence ends inside brackets ("(lit.
 * This is love)", "[O.S. January 12, 1736]").
 */
export const PARSER_VERSION = 'ingest-5';

/** Picks the index store for a request's settings; the same choice must return the same store object. */
export type StoreChooser = (settings: CanopySettings) => IndexStore;

export interface IndexServiceConfig {
  /** The folder whose documents are indexed. */
  root: string;
  /** Where the index lives (the extension: workspace storage; the CLI: <root>/.canopy/index); with a database store, traces only. */
  indexDir: string;
  embeddings: Embeddings;
  parseWorkers: ParseWorkers;
  storeFor: StoreChooser;
  logger?: Logger;
}

export interface IndexRequest {
  /** More exclude globs from the host (the editor's files.exclude). */
  extraExclude?: string[];
  signal?: AbortSignal;
  progress?: ProgressSink;
  tracer?: Tracer;
  /** Where the run's time goes (`canopy bench index`). */
  timings?: IndexTimings;
}

export class IndexService {
  private readonly log: Logger;
  private open: { store: IndexStore; corpus: CorpusIndex } | undefined;
  private opening: { store: IndexStore; promise: Promise<CorpusIndex> } | undefined;
  /** Bumped when an index run makes the open corpus stale, so an open begun before it is not kept. */
  private epoch = 0;

  constructor(readonly config: IndexServiceConfig) {
    this.log = config.logger ?? silentLogger;
  }

  get root(): string {
    return this.config.root;
  }

  get indexDir(): string {
    return this.config.indexDir;
  }

  /** Indexes the folder incrementally with these settings. */
  async index(s: CanopySettings, request: IndexRequest = {}): Promise<IndexSummary> {
    const { root, indexDir, embeddings } = this.config;
    const indexInside = path.relative(root, indexDir);
    const discovery = await discoverFiles(root, {
      include: s.include,
      exclude: [
        ...s.exclude,
        ...(request.extraExclude ?? []),
        '**/.canopy/**',
        ...(indexInside && !indexInside.startsWith('..') && !path.isAbsolute(indexInside) ? [`${indexInside.split(path.sep).join('/')}/**`] : []),
      ],
      maxFileSizeMB: s.maxFileSizeMB,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    // Only now that the folder is known to exist is the index folder created.
    await fs.mkdir(indexDir, { recursive: true });
    // The encoder and its cache load on the first text to encode: an unchanged folder needs neither.
    const encoding = await embeddings.forIndexing();
    const pool = this.config.parseWorkers.pool(s.maxParseMemoryMB);
    const store = this.config.storeFor(s);
    const summary = await runIndexer(
      discovery,
      {
        store,
        parse: (rel, bytes, signal, onProgress, share) =>
          pool.parse(
            rel,
            bytes,
            {
              branchingFactor: s.branchingFactor,
              maxBytes: s.maxFileSizeMB * 1024 * 1024,
              maxNodes: s.maxNodesPerFile,
              ...(onProgress ? { onProgress } : {}),
              ...(signal ? { signal } : {}),
            },
            share,
          ),
        // The whole run uses the encoder it started with (its id goes into the manifest).
        embeddings: encoding,
        // The workers parse without the encoder; this thread encodes (batched across files) while they read the next files.
        semanticEdges: true,
        parallelism: pool.size,
        // Another node cap re-parses every file (a capped file would otherwise keep its old cut).
        parserVersion: s.maxNodesPerFile === defaultSettings.maxNodesPerFile ? PARSER_VERSION : `${PARSER_VERSION}+maxNodes=${s.maxNodesPerFile}`,
        branchingFactor: s.branchingFactor,
        logger: this.log,
        ...(request.progress ? { progress: request.progress } : {}),
        ...(request.tracer ? { tracer: request.tracer } : {}),
        ...(request.timings ? { timings: request.timings } : {}),
        ...(s.topicsEnabled ? { stage: topicStage({ k: s.topicsCount }) } : {}),
      },
      request.signal,
    );
    // Reopen the new generation on the next question.
    this.open = undefined;
    this.opening = undefined;
    this.epoch++;
    if (s.topicsEnabled && topicSummaryOf(summary)) {
      // A first scorer from the documents' own structure, so the compass works before `canopy topics train`.
      try {
        const corpus = await this.corpus(s);
        const embedQuery = rememberLastQuery(embeddings.embedQuery);
        const bank = corpus.dir === undefined ? undefined : await readTopicBank(corpus.dir, corpus.generation);
        // Trained on the default retrieval's candidates (the encoder's profile), the ones it re-ranks at question time.
        const fusion = (await indexProfile(this.indexDir, corpus.manifest.encoderId)).fusion;
        const hybrid = new HybridRetriever(corpus, embedQuery, { dense: true, bm25: true, fusion });
        if (bank) await ensureScorer({ corpus, bank, hybrid, embedQuery, candidates: candidatesOf(fusion), logger: this.log }, request.signal ? { signal: request.signal } : {});
      } catch (err) {
        this.log.log('warn', `topics: no scorer trained (${(err as Error).message}); retrieval stays hybrid`);
      }
    }
    return summary;
  }

  /** The live index for these settings' store, opened on first use; concurrent first calls share one open. CanopyError(E_NOT_FOUND) before the first run. */
  async corpus(s: CanopySettings): Promise<CorpusIndex> {
    const store = this.config.storeFor(s);
    if (this.open?.store === store) return this.open.corpus;
    if (this.opening?.store === store) return this.opening.promise;
    const epoch = this.epoch;
    const promise = CorpusIndex.open(store)
      .then((corpus) => {
        if (epoch === this.epoch) this.open = { store, corpus };
        return corpus;
      })
      .finally(() => {
        if (this.opening?.promise === promise) this.opening = undefined;
      });
    this.opening = { store, promise };
    return promise;
  }
}
