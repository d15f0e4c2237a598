/**
 * Questions and replays: assembles the round engine's live configuration — retriever (hybrid, or
 * the topic compass over it), critic, reader, router, MAGE controller, options — from the
 * settings given with each request, and runs it (core/engine). Nothing is read from settings
 * captured earlier, so a changed `canopy.topK`, `maxRounds`, `readerTokenCap`, `controller.*`,
 * `topics.enabled`, `llm.routing` or `reader.pageImages` applies to the next question. What went
 * wrong without failing the question (an unusable adapter checkpoint, topics unavailable) comes
 * back as warnings with the trace.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { checkQuestion, QUESTION_MAX } from '../../contracts/agent';
import { ReplaySettings } from '../../contracts/askSettings';
import { check } from '../../contracts/validation';
import { checkTrace, type AskTrace, type CompressorSetting } from '../../contracts/trace';
import { routeQuestionWithLlm } from '../compress/llmRouter';
import { bpeTokenCounter, type TokenCounter } from '../compress/tokens';
import { askCompressor, type CanopySettings } from '../config/settings';
import type { Critic } from '../critic/critic';
import { LlmCritic } from '../critic/llmCritic';
import { RuleCritic } from '../critic/ruleCritic';
import { LearnedCritic } from '../judge/learnedCritic';
import { ask, type AskDeps, type AskOptions } from '../engine/ask';
import { askControllerFromSettings } from '../engine/controllerStage';
import type { ReplaySource } from '../engine/recorded';
import { replayTrace } from '../engine/replay';
import { CanopyError, ErrorCodes } from '../errors';
import type { CorpusIndex } from '../index/corpusIndex';
import type { ChatModel } from '../llm/llm';
import { silentLogger, type Logger } from '../ports';
import { ExtractiveReader } from '../read/extractiveReader';
import { readWorkspaceReaderModel } from '../train/readerFit';
import { LlmReader } from '../read/llmReader';
import { renderPageImages, type ImageRequest } from '../read/pageImages';
import type { Reader } from '../read/reader';
import { HybridRetriever } from '../retrieve/hybrid';
import { PROFILE_FILE, profileFor, readProfile, retrievalRecord, RRF_EQUAL, type FusionSetting, type RetrievalProfile } from '../retrieve/profile';
import type { NodeScoreWeights } from '../compress/hybridScore';
import type { Retriever } from '../retrieve/retriever';
import { openCompass } from '../topics/compassIndex';
import { candidatesOf, decideCompass, indexGrain } from '../topics/decision';
import { rememberLastQuery } from '../topics/retriever';
import type { Tracer } from '../trace/tracer';
import type { AdapterCheckpoints } from './adapters';
import type { Embeddings } from './embeddings';
import type { IndexService } from './indexService';

/** What a question needs beyond the settings: choices a host or a flag makes for this request only. */
export interface AskRequest {
  /** The compressor; when absent, CANOPY as the settings describe it (rank gate, glimpse: `canopyCompressor`). */
  compressor?: CompressorSetting;
  /** 'rule' (default; the LLM critic when `llm` is set), 'none' (one round), or a critic. */
  critic?: 'rule' | 'none' | Critic;
  reader?: Reader;
  /** An LLM for the router, the critic and the reader (each falls back to its rule / extractive twin). */
  llm?: ChatModel;
  /** Modality / aggregate routing with `llm` (default: the `llmRouting` setting), or the rule. */
  routing?: 'llm' | 'rule';
  /** Overrides `topK` for this question (a CLI flag). */
  topK?: number;
  /** Overrides `maxRounds` for this question (a CLI flag). */
  maxRounds?: number;
  /** The MAGE controller for long PDFs: the settings decide (default), or force it off / on. */
  controller?: boolean;
  /** A node-encoder adapter checkpoint instead of the `adapterCheckpoint` setting ('' = none). */
  adapter?: string;
  /** Page images and crops for a multimodal LLM reader (default: the `readerPageImages` setting). */
  pageImages?: boolean;
  /**
   * Node score weights (dense cosine, lexical evidence); when absent, those of the encoder's
   * retrieval profile (fitted by `canopy train`, else the built-in one's) unless the `nodeScore`
   * setting is `dense`, else the dense cosine alone.
   */
  nodeScore?: NodeScoreWeights;
  tracer?: Tracer;
  signal?: AbortSignal;
}

/** Something that went wrong without failing the question; the host decides how loudly to say it. */
export interface AskWarning {
  /** What it is about: the adapter checkpoint, the topic compass, the tuned retrieval profile, or the workspace's reader model. */
  source: 'adapter' | 'topics' | 'retrieval' | 'reader';
  message: string;
}

export interface AskResult {
  trace: AskTrace;
  warnings: AskWarning[];
}

export interface AskServiceConfig {
  index: IndexService;
  embeddings: Embeddings;
  adapters: AdapterCheckpoints;
  tokens?: TokenCounter;
  logger?: Logger;
}

export class AskService {
  private readonly log: Logger;
  private readonly tokens: TokenCounter;

  constructor(private readonly config: AskServiceConfig) {
    this.log = config.logger ?? silentLogger;
    this.tokens = config.tokens ?? bpeTokenCounter();
  }

  /** Answers a question with these settings and the request's choices. */
  async ask(question: string, s: CanopySettings, request: AskRequest = {}): Promise<AskResult> {
    // One limit for every host (CLI, extension, language-model tools, MCP): contracts/agent.ts.
    const checked = checkQuestion(question);
    if (!checked.ok) throw new CanopyError(ErrorCodes.badInput, `${checked.problem} (at most ${QUESTION_MAX.toLocaleString('en-US')}; the CLI, the extension and the agent tools take the same).`);
    const { index, embeddings, adapters } = this.config;
    const warnings: AskWarning[] = [];
    const corpus = await index.corpus(s);
    const { encoder } = await embeddings.load();
    const chosen = await adapters.choose(request.adapter ?? s.adapterCheckpoint, encoder.id);
    if (chosen.problem) warnings.push({ source: 'adapter', message: chosen.problem });
    const adapter = chosen.adapter;
    // One query embedding shared by the hybrid retriever, the compass and the engine.
    const embedQuery = rememberLastQuery(embeddings.embedQuery);
    const profile = await this.profile(encoder.id, warnings);
    const fusion = s.retrievalFusion === 'rrf' ? RRF_EQUAL : profile.fusion;
    // Node-score weights: the request's, else (unless the settings ask for the cosine alone) the
    // encoder's profile's — fitted by `canopy train`, else the built-in one's — else the dense cosine alone.
    const nodeScore = request.nodeScore ?? (s.nodeScore === 'dense' ? undefined : profile.nodeScore);
    const hybrid = new HybridRetriever(corpus, embedQuery, { dense: true, bm25: true, fusion });
    let retriever: Retriever = hybrid;
    // The topic compass: on by the setting, or by itself where the index's items are coarse and its
    // scorer's held-back figure beats the default retrieval (topics/decision.ts); the reason goes in the trace.
    const grain = indexGrain(corpus.manifest.files);
    const compass = s.topicsEnabled || grain.coarse ? await openCompass(corpus, hybrid, embedQuery).catch((err: Error) => ({ reason: err.message })) : { reason: 'not opened' };
    const topics = decideCompass({ enabled: s.topicsEnabled, grain, compass, defaultCandidates: candidatesOf(fusion, 'checkpoint' in compass ? compass.checkpoint.compass.candidates : 50) });
    if (topics.on && 'retriever' in compass) retriever = compass.retriever;
    else if (s.topicsEnabled) warnings.push({ source: 'topics', message: `retrieval stays hybrid: ${'reason' in compass ? compass.reason : topics.reason}` });
    const options: AskOptions = {
      topK: request.topK ?? s.topK,
      maxRounds: request.critic === 'none' ? 1 : (request.maxRounds ?? s.maxRounds),
      branchingFactor: s.branchingFactor,
      // The settings' compressor, or the gate `canopy train` fitted while the gate settings are the defaults.
      compressor: request.compressor ?? askCompressor(s, profile.gate),
      readerTokenCap: s.readerTokenCap,
      encoderId: encoder.id,
      ...(adapter ? { adapterId: adapter.id } : {}),
      retrieval: retrievalRecord({ dense: true, bm25: true, fusion }, retriever !== hybrid, topics.reason),
      controller: { ...askControllerFromSettings(s), ...(request.controller !== undefined ? { enabled: request.controller } : {}) },
      ...((request.pageImages ?? s.readerPageImages) ? { pageImages: true } : {}),
      ...(nodeScore ? { nodeScore } : {}),
      ...(s.profilesEnabled ? {} : { profiles: false }),
    };
    const llm = request.llm;
    const critic = this.critic(request, llm, s);
    // The reader model `canopy train` fitted to this workspace's gold spans, else the built-in one.
    const workspace = await readWorkspaceReaderModel(this.config.index.indexDir);
    if (workspace.problem) warnings.push({ source: 'reader', message: `the workspace's reader model is not used — ${workspace.problem}` });
    const extractive = () => new ExtractiveReader(workspace.model ? { model: workspace.model } : {});
    const reader = request.reader ?? (llm ? new LlmReader(llm, { fallback: extractive(), logger: this.log }) : extractive());
    const routeWithLlm = llm && (request.routing ?? (s.llmRouting ? 'llm' : 'rule')) === 'llm';
    const deps: AskDeps = {
      retriever,
      embedQuery,
      embedTexts: embeddings.embedTexts,
      ...(adapter ? { adapter: adapter.adapter } : {}),
      ...(critic ? { critic } : {}),
      reader,
      ...(routeWithLlm ? { route: (q: string, sig?: AbortSignal) => routeQuestionWithLlm(q, llm, {}, sig) } : {}),
      ...(llm ? { llm: { id: llm.id, remote: llm.remote } } : {}),
      tokens: this.tokens,
      ...(request.tracer ? { tracer: request.tracer } : {}),
      index: { root: corpus.manifest.root, generation: corpus.generation, items: corpus.itemCount },
      staleFiles: new Set(Object.entries(corpus.manifest.files).filter(([, e]) => e.staleError !== undefined).map(([file]) => file)),
      // The MAGE controller reads long PDFs from the index's parsed-document cache; its evaluator is the LLM when one is set.
      loadDocument: (file: string) => corpus.document(file),
      ...(llm ? { controllerLlm: llm } : {}),
      renderImages: (file, requests, sig) => renderIndexedPageImages(corpus, file, requests, sig),
    };
    const trace = await ask(question, options, deps, request.signal);
    await embeddings.saveSoon();
    return { trace, warnings };
  }

  /** Replays a trace with other settings from its cached scores (core/engine/replay.ts); never encodes. */
  async replay(trace: AskTrace, settings: ReplaySettings, s: CanopySettings, signal?: AbortSignal): Promise<AskTrace> {
    // Both inputs are checked before the index is opened: a trace from anywhere but this process, settings from a user.
    const checkedTrace = checkTrace(trace);
    if (!checkedTrace.ok) throw new CanopyError(ErrorCodes.badInput, `replay: ${checkedTrace.problem}`);
    const checkedSettings = check(ReplaySettings, settings, 'settings');
    if (!checkedSettings.ok) throw new CanopyError(ErrorCodes.badInput, `replay: ${checkedSettings.problem}`);
    return replayTrace(checkedTrace.value, checkedSettings.value, { tokens: this.tokens, source: await this.replaySource(s) }, signal);
  }

  /**
   * The fusion the settings ask for: the design's equal-weight RRF, or the encoder's retrieval
   * profile — one tuned for this encoder in the index folder (`canopy tune`), else the built-in
   * one. A tuned profile that cannot be read is a warning, and the built-in profile is used.
   */
  async fusion(s: CanopySettings, encoderId: string, warnings: AskWarning[] = []): Promise<FusionSetting> {
    if (s.retrievalFusion === 'rrf') return RRF_EQUAL;
    return (await this.profile(encoderId, warnings)).fusion;
  }

  /**
   * The encoder's retrieval profile: the one tuned for it in the index folder (`canopy tune`,
   * `canopy train` — fusion and node-score weights), else the built-in one. One that cannot be
   * read is a warning, and the built-in profile is used.
   */
  async profile(encoderId: string, warnings: AskWarning[] = []): Promise<RetrievalProfile> {
    let tuned: RetrievalProfile | undefined;
    try {
      tuned = await readProfile(path.join(this.config.index.indexDir, PROFILE_FILE));
    } catch (err) {
      warnings.push({ source: 'retrieval', message: `the tuned retrieval profile is not used — ${(err as Error).message}` });
    }
    return profileFor(encoderId, tuned);
  }

  /**
   * What a replay reads beyond the trace: items from the live index, node vectors from the
   * embedding cache (cached ones only) and the query vectors remembered from questions.
   */
  async replaySource(s: CanopySettings): Promise<ReplaySource> {
    const { index, embeddings } = this.config;
    const corpus = await index.corpus(s);
    const { encoder } = await embeddings.load();
    return {
      encoderId: encoder.id,
      item: (id) => corpus.item(id),
      cachedVectors: (texts) => embeddings.cachedVectors(texts),
      queryVector: (query) => embeddings.knownQueryVector(query),
    };
  }

  private critic(request: AskRequest, llm: ChatModel | undefined, s: CanopySettings): Critic | undefined {
    if (request.critic === 'none') return undefined;
    if (typeof request.critic === 'object') return request.critic;
    if (llm && request.critic === undefined) return new LlmCritic(llm, { logger: this.log });
    const rule = new RuleCritic({ lookAhead: s.criticLookAhead });
    return s.criticModel ? new LearnedCritic(rule) : rule;
  }
}

/** Page images and crops rendered from the file on disk, only while it is the version indexed (else the boxes would lie). */
async function renderIndexedPageImages(corpus: CorpusIndex, file: string, requests: ImageRequest[], signal?: AbortSignal) {
  const bytes = await fs.readFile(path.resolve(corpus.manifest.root, file));
  if (createHash('sha256').update(bytes).digest('hex') !== corpus.manifest.files[file]?.hash) {
    throw new CanopyError(ErrorCodes.badInput, `${file} changed since it was indexed; re-index it for page images`, { file });
  }
  return renderPageImages(file, bytes, requests, signal ? { signal } : {});
}
