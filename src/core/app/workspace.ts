/**
 * One Canopy workspace, wired: the encoder and its embedding cache, the vector store, the
 * parser, the indexer and the ask pipeline, over one folder and one index directory. The CLI's
 * main and the extension's activate() each build one of these with their own paths, settings
 * and logger; nothing here knows which host it runs in.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ask, type AskOptions } from '../engine/ask';
import { askControllerFromSettings } from '../engine/controllerStage';
import { CanopyError, ErrorCodes } from '../errors';
import type { CompressorSetting, AskTrace } from '../../contracts/trace';
import { defaultSettings, type CanopySettings } from '../config/settings';
import type { NodeScoreWeights } from '../compress/hybridScore';
import { bpeTokenCounter } from '../compress/tokens';
import type { Critic } from '../critic/critic';
import { LlmCritic } from '../critic/llmCritic';
import { RuleCritic } from '../critic/ruleCritic';
import type { ChatModel } from '../llm/llm';
import { routeQuestionWithLlm } from '../compress/llmRouter';
import { LlmReader } from '../read/llmReader';
import { renderPageImages, type ImageRequest } from '../read/pageImages';
import { EmbeddingCache } from '../encode/cache';
import { createEncoder } from '../encode/createEncoder';
import type { Encoder, EncoderConfig } from '../encode/encoder';
import { CorpusIndex } from '../index/corpusIndex';
import { runIndexer, type IndexSummary } from '../index/indexer';
import { paths } from '../index/layout';
import { VectraStore } from '../index/vectraStore';
import { discoverFiles } from '../ingest/discover';
import { ParsePool } from '../ingest/parsePool';
import { silentLogger, type Logger, type ProgressSink } from '../ports';
import { ExtractiveReader } from '../read/extractiveReader';
import type { Reader } from '../read/reader';
import { HybridRetriever } from '../retrieve/hybrid';
import type { Retriever } from '../retrieve/retriever';
import { ensureScorer, openCompass } from '../topics/compassIndex';
import { readTopicBank, topicStage, topicSummaryOf } from '../topics/indexTopics';
import { rememberLastQuery } from '../topics/retriever';
import { writeFileAtomic } from '../store/atomicFile';
import type { Tracer } from '../trace/tracer';
import { replayTrace, type ReplaySettings } from '../engine/replay';
import type { ReplaySource } from '../engine/recorded';
import { loadAdapter, type LoadedAdapter } from '../train/checkpoint';
import { runTraining, type TrainRunOptions, type TrainRunReport } from '../train/run';

/**
 * Bump when parsing changes in a way that must re-parse existing indexes. ingest-2: node vectors
 * derived from the encoded leaves and tables (src/core/encode/nodeVectors.ts), so stored item
 * vectors changed meaning.
 */
export const PARSER_VERSION = 'ingest-2';

const CACHE_SAVE_INTERVAL_MS = 30_000;

export interface WorkspaceConfig {
  /** The folder whose documents are indexed. */
  root: string;
  /** Where the index lives (the extension: workspace storage; the CLI: <root>/.canopy/index). */
  indexDir: string;
  settings: CanopySettings;
  encoder: EncoderConfig;
  builtinModelDir: string;
  /** More exclude globs from the host (files.exclude). */
  extraExclude?: string[];
  logger?: Logger;
}

export interface AskRequest {
  compressor?: CompressorSetting;
  /** 'rule' (default; the LLM critic when `llm` is set), 'none' (one round), or a critic. */
  critic?: 'rule' | 'none' | Critic;
  reader?: Reader;
  /** An LLM for the router, the critic and the reader (each falls back to its rule / extractive twin). */
  llm?: ChatModel;
  /** Modality / aggregate routing with `llm` (default: the `llmRouting` setting), or the rule. */
  routing?: 'llm' | 'rule';
  topK?: number;
  maxRounds?: number;
  /** The MAGE controller for long PDFs: the settings decide (default), or force it off / on. */
  controller?: boolean;
  /** A node-encoder adapter checkpoint instead of the `adapterCheckpoint` setting ('' = none). */
  adapter?: string;
  /** Page images and crops for a multimodal LLM reader (default: the `readerPageImages` setting). */
  pageImages?: boolean;
  /** Node score weights (dense cosine, lexical evidence); the dense cosine alone when absent. */
  nodeScore?: NodeScoreWeights;
  tracer?: Tracer;
  signal?: AbortSignal;
}

/** One saved trace, as the history list shows it. */
export interface SavedTraceSummary {
  /** File name inside the traces folder. */
  name: string;
  id: string;
  question: string;
  createdAt: string;
  mode: 'extractive' | 'llm';
  evidenceTokens: number;
  replayOf?: string;
}

export class CanopyWorkspace {
  private encoder: Encoder | undefined;
  private cache: EmbeddingCache | undefined;
  private lastCacheSave = 0;
  private corpus: CorpusIndex | undefined;
  private readonly store: VectraStore;
  private readonly log: Logger;
  private readonly tokens = bpeTokenCounter();

  constructor(readonly config: WorkspaceConfig) {
    this.store = new VectraStore(config.indexDir);
    this.log = config.logger ?? silentLogger;
  }

  private embeddingsLoading: Promise<{ encoder: Encoder; cache: EmbeddingCache }> | undefined;

  /**
   * The encoder and cache, created on first use (loading the model takes a moment). Concurrent
   * first calls share one load: 20 questions asked at once used to load the model and a 232 MB
   * cache 20 times over.
   */
  private async embeddings(): Promise<{ encoder: Encoder; cache: EmbeddingCache }> {
    if (this.encoder && this.cache) return { encoder: this.encoder, cache: this.cache };
    this.embeddingsLoading ??= (async () => {
      const encoder = await createEncoder(this.config.encoder, { builtinModelDir: this.config.builtinModelDir, baseDir: this.config.root });
      const cache = await EmbeddingCache.open({ dir: paths(this.config.indexDir).embeddings, encoder, logger: this.log });
      this.encoder = encoder;
      this.cache = cache;
      return { encoder, cache };
    })().finally(() => {
      this.embeddingsLoading = undefined;
    });
    return this.embeddingsLoading;
  }

  private embedTexts = async (texts: string[], signal?: AbortSignal): Promise<Float32Array[]> => {
    const { encoder, cache } = await this.embeddings();
    return cache.getOrEncode(texts, encoder, signal);
  };

  private embedQuery = async (text: string, signal?: AbortSignal): Promise<Float32Array> => {
    const { encoder } = await this.embeddings();
    const [v] = await encoder.encode([text], signal);
    this.rememberQuery(text, v!);
    return v!;
  };

  /** Query vectors this workspace encoded (the newest 512), so replays never need the encoder. */
  private readonly queryVectors = new Map<string, { encoderId: string; vector: Float32Array }>();

  private rememberQuery(text: string, vector: Float32Array): void {
    this.queryVectors.delete(text);
    this.queryVectors.set(text, { encoderId: this.encoder?.id ?? '', vector });
    if (this.queryVectors.size > 512) this.queryVectors.delete(this.queryVectors.keys().next().value!);
  }

  async index(options: { signal?: AbortSignal; progress?: ProgressSink; tracer?: Tracer } = {}): Promise<IndexSummary> {
    const s = this.config.settings;
    const indexInside = path.relative(this.config.root, this.config.indexDir);
    const discovery = await discoverFiles(this.config.root, {
      include: s.include,
      exclude: [
        ...s.exclude,
        ...(this.config.extraExclude ?? []),
        '**/.canopy/**',
        ...(indexInside && !indexInside.startsWith('..') && !path.isAbsolute(indexInside) ? [`${indexInside.split(path.sep).join('/')}/**`] : []),
      ],
      maxFileSizeMB: s.maxFileSizeMB,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // Only now that the folder is known to exist is the index folder created.
    await fs.mkdir(this.config.indexDir, { recursive: true });
    const { encoder, cache } = await this.embeddings();
    const pool = this.parsePool(s.maxParseMemoryMB);
    const summary = await runIndexer(
      discovery,
      {
        dir: this.config.indexDir,
        store: this.store,
        parse: (rel, bytes, signal, onProgress) =>
          pool.parse(rel, bytes, {
            branchingFactor: s.branchingFactor,
            maxBytes: s.maxFileSizeMB * 1024 * 1024,
            maxNodes: s.maxNodesPerFile,
            embed: (texts) => cache.getOrEncode(texts, encoder, signal),
            ...(onProgress ? { onProgress } : {}),
            ...(signal ? { signal } : {}),
          }),
        embeddings: { id: encoder.id, embed: this.embedTexts, persist: () => cache.save() },
        // Another node cap re-parses every file (a capped file would otherwise keep its old cut).
        parserVersion: s.maxNodesPerFile === defaultSettings.maxNodesPerFile ? PARSER_VERSION : `${PARSER_VERSION}+maxNodes=${s.maxNodesPerFile}`,
        branchingFactor: s.branchingFactor,
        logger: this.log,
        ...(options.progress ? { progress: options.progress } : {}),
        ...(options.tracer ? { tracer: options.tracer } : {}),
        ...(s.topicsEnabled ? { stage: topicStage({ k: s.topicsCount }) } : {}),
      },
      options.signal,
    );
    this.corpus = undefined; // reopen the new generation on the next question
    this.corpusLoading = undefined;
    this.corpusEpoch++;
    if (s.topicsEnabled && topicSummaryOf(summary)) {
      // A first scorer from the documents' own structure, so the compass works before `canopy topics train`.
      try {
        const corpus = await this.openIndex();
        const embedQuery = rememberLastQuery(this.embedQuery);
        const bank = await readTopicBank(corpus.dir, corpus.generation);
        if (bank) await ensureScorer({ corpus, bank, hybrid: new HybridRetriever(corpus, embedQuery), embedQuery, logger: this.log }, options.signal ? { signal: options.signal } : {});
      } catch (err) {
        this.log.log('warn', `topics: no scorer trained (${(err as Error).message}); retrieval stays hybrid`);
      }
    }
    return summary;
  }

  private parsePoolInstance: ParsePool | undefined;

  /** The parse workers (per-file memory limit), kept between index runs so a re-index does not start them again. */
  private parsePool(maxMemoryMB: number): ParsePool {
    if (this.parsePoolInstance?.maxMemoryMB !== maxMemoryMB) {
      void this.parsePoolInstance?.close();
      this.parsePoolInstance = new ParsePool({ maxMemoryMB, logger: this.log });
    }
    return this.parsePoolInstance;
  }

  /** The live index; CanopyError(E_NOT_FOUND) before the first index run. */
  private corpusLoading: Promise<CorpusIndex> | undefined;
  /** Bumped when an index run makes the open corpus stale, so an open begun before it is not kept. */
  private corpusEpoch = 0;

  /** The live index, opened on first use; concurrent first calls share one open. */
  async openIndex(): Promise<CorpusIndex> {
    if (this.corpus) return this.corpus;
    const epoch = this.corpusEpoch;
    const loading = (this.corpusLoading ??= CorpusIndex.open(this.config.indexDir, this.store)
      .then((corpus) => {
        if (epoch === this.corpusEpoch) this.corpus = corpus;
        return corpus;
      })
      .finally(() => {
        if (this.corpusLoading === loading) this.corpusLoading = undefined;
      }));
    return loading;
  }

  private adapterCache: { file: string; mtimeMs: number; loaded: LoadedAdapter } | undefined;
  /** Why the configured adapter is not in use (missing or corrupt checkpoint), or undefined. */
  adapterProblem: string | undefined;

  /**
   * The adapter checkpoint `ask` uses: `override` when given, else the setting; relative paths are
   * taken from the workspace folder. Re-read when the file changes. A checkpoint that cannot be
   * used (missing, corrupt, another encoder) is logged with its file name and `ask` falls back to
   * the untrained encoder; `loadAdapter` is the strict variant.
   */
  async activeAdapter(override: string | undefined, encoderId: string): Promise<LoadedAdapter | undefined> {
    const setting = (override ?? this.config.settings.adapterCheckpoint).trim();
    this.adapterProblem = undefined;
    if (!setting) return undefined;
    const file = path.resolve(this.config.root, setting);
    try {
      const mtimeMs = (await fs.stat(file).catch(() => undefined))?.mtimeMs ?? -1;
      if (this.adapterCache?.file === file && this.adapterCache.mtimeMs === mtimeMs && mtimeMs >= 0) return this.adapterCache.loaded;
      const loaded = await loadAdapter(file, encoderId);
      this.adapterCache = { file, mtimeMs, loaded };
      return loaded;
    } catch (err) {
      this.adapterCache = undefined;
      this.adapterProblem = `${(err as Error).message}; asking with the untrained encoder`;
      this.log.log('warn', `adapter: ${this.adapterProblem}`);
      return undefined;
    }
  }

  /**
   * Trains the node-encoder adapter on this folder's gold annotations (`canopy train` does the
   * same headless): node and query vectors come through this workspace's embedding cache.
   */
  async trainAdapter(options: Omit<TrainRunOptions, 'root' | 'embed' | 'encoderId' | 'dim' | 'tokens' | 'logger'>): Promise<TrainRunReport> {
    const { encoder, cache } = await this.embeddings();
    try {
      return await runTraining({
        branchingFactor: this.config.settings.branchingFactor,
        ...options,
        root: this.config.root,
        embed: this.embedTexts,
        encoderId: encoder.id,
        dim: encoder.dim,
        tokens: this.tokens,
        logger: this.log,
      });
    } finally {
      await cache.save();
    }
  }

  async ask(question: string, request: AskRequest = {}): Promise<AskTrace> {
    const s = this.config.settings;
    const corpus = await this.openIndex();
    const { encoder } = await this.embeddings();
    const adapter = await this.activeAdapter(request.adapter, encoder.id);
    // One query embedding shared by the hybrid retriever, the compass and the pipeline.
    const embedQuery = rememberLastQuery(this.embedQuery);
    const hybrid = new HybridRetriever(corpus, embedQuery, { dense: true, bm25: true });
    let retriever: Retriever = hybrid;
    if (s.topicsEnabled) {
      const compass = await openCompass(corpus, hybrid, embedQuery).catch((err: Error) => ({ reason: err.message }));
      if ('retriever' in compass) retriever = compass.retriever;
      else this.log.log('warn', `topics: retrieval stays hybrid: ${compass.reason}`);
    }
    const retrieval = { dense: true, bm25: true, topics: retriever !== hybrid, fusion: 'rrf' as const, rrfK: 60 };
    const options: AskOptions = {
      topK: request.topK ?? s.topK,
      maxRounds: request.critic === 'none' ? 1 : (request.maxRounds ?? s.maxRounds),
      branchingFactor: s.branchingFactor,
      compressor: request.compressor ?? { name: 'canopy' },
      readerTokenCap: s.readerTokenCap,
      encoderId: encoder.id,
      ...(adapter ? { adapterId: adapter.id } : {}),
      retrieval,
      controller: { ...askControllerFromSettings(s), ...(request.controller !== undefined ? { enabled: request.controller } : {}) },
      ...((request.pageImages ?? s.readerPageImages) ? { pageImages: true } : {}),
      ...(request.nodeScore ? { nodeScore: request.nodeScore } : {}),
    };
    const llm = request.llm;
    const critic =
      request.critic === 'none'
        ? undefined
        : typeof request.critic === 'object'
          ? request.critic
          : llm && request.critic === undefined
            ? new LlmCritic(llm, { logger: this.log })
            : new RuleCritic();
    const reader = request.reader ?? (llm ? new LlmReader(llm, { fallback: new ExtractiveReader(), logger: this.log }) : new ExtractiveReader());
    const trace = await ask(
      question,
      options,
      {
        retriever,
        embedQuery,
        embedTexts: this.embedTexts,
        ...(adapter ? { adapter: adapter.adapter } : {}),
        ...(critic ? { critic } : {}),
        reader,
        ...(llm && (request.routing ?? (s.llmRouting ? 'llm' : 'rule')) === 'llm' ? { route: (q: string, sig?: AbortSignal) => routeQuestionWithLlm(q, llm, {}, sig) } : {}),
        ...(llm ? { llm: { id: llm.id, remote: llm.remote } } : {}),
        tokens: this.tokens,
        ...(request.tracer ? { tracer: request.tracer } : {}),
        index: { root: corpus.manifest.root, generation: corpus.generation, items: corpus.itemCount },
        // The MAGE controller reads long PDFs from the index's parsed-document cache; its evaluator is the LLM when one is set.
        loadDocument: (file: string) => corpus.document(file),
        ...(llm ? { controllerLlm: llm } : {}),
        // Page images and crops are rendered from the file on disk, only while it is the version indexed (else the boxes would lie).
        renderImages: async (file: string, requests: ImageRequest[], sig?: AbortSignal) => {
          const bytes = await fs.readFile(path.resolve(corpus.manifest.root, file));
          if (createHash('sha256').update(bytes).digest('hex') !== corpus.manifest.files[file]?.hash) {
            throw new CanopyError(ErrorCodes.badInput, `${file} changed since it was indexed; re-index it for page images`, { file });
          }
          return renderPageImages(file, bytes, requests, sig ? { signal: sig } : {});
        },
      },
      request.signal,
    );
    await this.saveCacheThrottled();
    return trace;
  }

  /**
   * After a question: the embedding cache is saved at most every 30 s (each save rewrites the
   * whole file — tens of MB on a large index), and always on dispose and after indexing. A crash
   * loses at most the vectors of the last 30 s of questions, which are recomputed when needed.
   */
  private async saveCacheThrottled(): Promise<void> {
    const now = Date.now();
    if (now - this.lastCacheSave < CACHE_SAVE_INTERVAL_MS) return;
    this.lastCacheSave = now;
    await this.cache?.save();
  }

  /**
   * What a replay reads beyond the trace: items from the live index, node vectors from the
   * embedding cache (cached ones only) and the query vectors remembered above. Never encodes.
   */
  async replaySource(): Promise<ReplaySource> {
    const corpus = await this.openIndex();
    const { encoder, cache } = await this.embeddings();
    return {
      encoderId: encoder.id,
      item: (id) => corpus.item(id),
      cachedVectors: async (texts) => texts.map((t) => cache.get(t)),
      queryVector: async (query) => {
        const hit = this.queryVectors.get(query);
        return hit && hit.encoderId === encoder.id ? hit.vector : cache.get(query);
      },
    };
  }

  /** Replays a trace with other settings from its cached scores (src/core/replay). */
  async replay(trace: AskTrace, settings: ReplaySettings, signal?: AbortSignal): Promise<AskTrace> {
    return replayTrace(trace, settings, { tokens: this.tokens, source: await this.replaySource() }, signal);
  }

  /** Writes a trace under <index>/traces/ and returns its path. */
  async saveTrace(trace: AskTrace): Promise<string> {
    const dir = path.join(this.config.indexDir, 'traces');
    await fs.mkdir(dir, { recursive: true });
    const file = path.join(dir, `${trace.createdAt.replace(/[:.]/g, '-')}-${trace.id}.json`);
    await writeFileAtomic(file, JSON.stringify(trace));
    return file;
  }

  /** The folder saveTrace writes to. */
  tracesDir(): string {
    return path.join(this.config.indexDir, 'traces');
  }

  /**
   * The saved traces, newest first, with what a history list shows. Files that are not traces
   * of a readable version are left out (and logged), never fatal.
   */
  async listTraces(): Promise<SavedTraceSummary[]> {
    let names: string[];
    try {
      names = (await fs.readdir(this.tracesDir())).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const out: SavedTraceSummary[] = [];
    for (const name of names) {
      try {
        const t = await this.readTrace(name);
        out.push({
          name,
          id: t.id,
          question: t.question,
          createdAt: t.createdAt,
          mode: t.answer.mode,
          evidenceTokens: t.totals.evidenceTokens,
          ...(t.replay ? { replayOf: t.replay.of } : {}),
        });
      } catch (err) {
        this.log.log('warn', `trace ${name} skipped: ${(err as Error).message}`);
      }
    }
    return out.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.name.localeCompare(a.name));
  }

  /** Reads one saved trace by its file name (a bare name inside the traces folder). */
  async readTrace(name: string): Promise<AskTrace> {
    const file = this.traceFile(name);
    const t = JSON.parse(await fs.readFile(file, 'utf8')) as AskTrace;
    if (t?.schema !== 'canopy.trace' || t.version !== 1) throw new CanopyError(ErrorCodes.badInput, `${name} is not a Canopy trace of version 1`);
    return t;
  }

  /** Deletes one saved trace by its file name. */
  async deleteTrace(name: string): Promise<void> {
    await fs.rm(this.traceFile(name), { force: true });
  }

  private traceFile(name: string): string {
    if (!/^[A-Za-z0-9._-]+\.json$/.test(name) || name.startsWith('.')) throw new CanopyError(ErrorCodes.badInput, `not a trace file name: ${name}`);
    return path.join(this.tracesDir(), name);
  }

  async dispose(): Promise<void> {
    await this.parsePoolInstance?.close();
    this.parsePoolInstance = undefined;
    await this.cache?.save();
    await this.encoder?.dispose();
    this.encoder = undefined;
    this.cache = undefined;
  }
}
