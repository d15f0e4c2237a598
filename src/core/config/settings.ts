/**
 * Canopy's settings as the core sees them: one typed object with defaults. The extension reads
 * `canopy.*` from the VS Code configuration and the CLI reads flags; both produce this shape.
 * `settingKeys` names each setting's key in package.json; a unit test checks that keys, defaults
 * and ranges agree with package.json's contributes.configuration.
 */
import { BRANCHING_FACTOR, GLIMPSE, ITEM_SHARE, MAX_ROUNDS, MIN_ITEMS, TOP_K, WHOLE_BELOW } from '../../contracts/askSettings';
import type { CompressorSetting } from '../../contracts/trace';

export type LlmProviderName = 'none' | 'openai-compatible' | 'vscode-lm';
export type RetrievalFusionChoice = 'profile' | 'rrf';
/** What the CANOPY rule compares: the encoder profile's node-score weights (hybrid), or the dense cosine alone. */
export type NodeScoreChoice = 'profile' | 'dense';

export interface CanopySettings {
  include: string[];
  exclude: string[];
  maxFileSizeMB: number;
  /** Heap limit (MB) of the worker thread that parses one file; a parse that needs more fails with E_MEMORY_LIMIT. */
  maxParseMemoryMB: number;
  /** Regions (nodes) one file may produce; a file with more keeps its first part, with a warning. */
  maxNodesPerFile: number;
  branchingFactor: number;
  topK: number;
  maxRounds: number;
  /**
   * The rule critic looks at what a follow-up query would retrieve before it asks for the round
   * (src/core/critic/ruleCritic.ts); on by default: it cuts rounds on lookups, and a question
   * multi-hop by its form runs its follow-up without it (docs/evaluation.md, "Critic look-ahead").
   */
  criticLookAhead: boolean;
  /**
   * The no-LLM critic's learned stop (judge/learnedCritic.ts): where the rule critic would ask
   * again, the critic model ends the rounds when the evidence very likely holds the answer; a
   * question in another language is judged by the model alone. Off: the rule critic's verdict.
   */
  criticModel: boolean;
  /**
   * Document profiles (profiles/profiles.ts): knowledge of one kind of document — the filings
   * profile's statement rows, line-item names, reporting periods — applied to the documents that
   * fit it. Off: every document is read as fitting none (to measure what a profile adds).
   */
  profilesEnabled: boolean;
  readerTokenCap: number;
  autoIndex: boolean;
  /** A Hugging Face-style ONNX folder (model.onnx + tokenizer.json); empty = the built-in encoder. */
  encoderModelFolder: string;
  llmProvider: LlmProviderName;
  llmBaseUrl: string;
  llmModel: string;
  llmRequestTimeoutSeconds: number;
  llmMaxRetries: number;
  /** Route questions (aggregate vs lookup, modalities) with the LLM when one is configured; the rule otherwise. */
  llmRouting: boolean;
  /** Send page images and element crops of the MAGE controller's subgraph to the LLM reader (a multimodal model). */
  readerPageImages: boolean;
  /** The MAGE controller (design §7) for PDFs of at least `controllerMinPages` pages; its budgets follow. */
  controllerEnabled: boolean;
  controllerMinPages: number;
  controllerInitialPages: number;
  controllerMaxActivationsPerIteration: number;
  controllerMaxIterations: number;
  controllerMaxOpenedNodes: number;
  controllerMaxSearches: number;
  /**
   * How the hybrid retriever fuses dense and BM25: `profile` — the encoder's fitted retrieval
   * profile (a tuned one in the index folder, else the built-in one; src/core/retrieve/profile.ts);
   * `rrf` — the design's equal-weight reciprocal-rank fusion, for comparison.
   */
  retrievalFusion: RetrievalFusionChoice;
  /**
   * CANOPY's rank gate (src/core/compress/itemGate.ts): the share of a round's items kept for
   * their own rank (beside the items the question or a kept item names); 0 = no gate.
   */
  compressorItems: number;
  /** With the rank gate: an item it keeps of at most this many characters is kept whole; 0 = none. */
  compressorWholeBelow: number;
  /** With the rank gate: the fewest items it keeps in all (the next by rank while fewer are kept). */
  compressorMinItems: number;
  /** Every region CANOPY drops keeps this many of its leaves (a glimpse: below its parent the best-scoring, outside the gate the best per token); 0 = none. */
  compressorGlimpse: number;
  /**
   * The node score CANOPY's rule compares: `profile` — the encoder's retrieval profile's weights
   * (dense cosine and lexical evidence, src/core/compress/hybridScore.ts; a profile from
   * `canopy train` in the index folder, else the built-in one); `dense` — the cosine alone.
   */
  nodeScore: NodeScoreChoice;
  /** The topic compass (design §4): fit topics with the index and re-rank retrieval with them. */
  topicsEnabled: boolean;
  /** K topics; 0 = by corpus size (√N in [8, 100]). */
  topicsCount: number;
  /** The active node-encoder adapter checkpoint (`canopy train`); relative to the workspace folder; empty = none. */
  adapterCheckpoint: string;
  /** Where the index lives: `local` or a `postgres://` URL (src/core/index/storeSpec.ts). */
  store: string;
  /** Export every answer's trace as OpenInference spans to this OTLP/HTTP endpoint; empty = off. */
  exportOtlpEndpoint: string;
  /** ... and/or append them to this file as OTLP JSON lines (relative to the workspace folder); empty = off. */
  exportFile: string;
  /** openinference.project.name of the exported spans (Phoenix files traces under it). */
  exportProject: string;
  /** Saved answers (traces) kept, newest first, after each answer; 0 = no limit on the count. */
  tracesMaxCount: number;
  /** … and at most this many MB of them on disk (gzip-compressed); 0 = no limit on the size. */
  tracesMaxSizeMB: number;
}

export const settingKeys: Readonly<Record<keyof CanopySettings, string>> = Object.freeze({
  include: 'canopy.include',
  exclude: 'canopy.exclude',
  maxFileSizeMB: 'canopy.maxFileSizeMB',
  maxParseMemoryMB: 'canopy.maxParseMemoryMB',
  maxNodesPerFile: 'canopy.maxNodesPerFile',
  branchingFactor: 'canopy.branchingFactor',
  topK: 'canopy.topK',
  maxRounds: 'canopy.maxRounds',
  criticLookAhead: 'canopy.critic.lookAhead',
  criticModel: 'canopy.critic.model',
  profilesEnabled: 'canopy.profiles.enabled',
  readerTokenCap: 'canopy.readerTokenCap',
  autoIndex: 'canopy.autoIndex',
  encoderModelFolder: 'canopy.encoder.modelFolder',
  llmProvider: 'canopy.llm.provider',
  llmBaseUrl: 'canopy.llm.baseUrl',
  llmModel: 'canopy.llm.model',
  llmRequestTimeoutSeconds: 'canopy.llm.requestTimeoutSeconds',
  llmMaxRetries: 'canopy.llm.maxRetries',
  llmRouting: 'canopy.llm.routing',
  readerPageImages: 'canopy.reader.pageImages',
  controllerEnabled: 'canopy.controller.enabled',
  controllerMinPages: 'canopy.controller.minPages',
  controllerInitialPages: 'canopy.controller.initialPages',
  controllerMaxActivationsPerIteration: 'canopy.controller.maxActivationsPerIteration',
  controllerMaxIterations: 'canopy.controller.maxIterations',
  controllerMaxOpenedNodes: 'canopy.controller.maxOpenedNodes',
  controllerMaxSearches: 'canopy.controller.maxSearches',
  retrievalFusion: 'canopy.retrieval.fusion',
  compressorItems: 'canopy.compressor.items',
  compressorWholeBelow: 'canopy.compressor.wholeBelow',
  compressorMinItems: 'canopy.compressor.minItems',
  compressorGlimpse: 'canopy.compressor.glimpse',
  nodeScore: 'canopy.compressor.nodeScore',
  topicsEnabled: 'canopy.topics.enabled',
  topicsCount: 'canopy.topics.count',
  adapterCheckpoint: 'canopy.adapter.checkpoint',
  store: 'canopy.store',
  exportOtlpEndpoint: 'canopy.export.otlpEndpoint',
  exportFile: 'canopy.export.file',
  exportProject: 'canopy.export.project',
  tracesMaxCount: 'canopy.traces.maxCount',
  tracesMaxSizeMB: 'canopy.traces.maxSizeMB',
});

export const defaultSettings: Readonly<CanopySettings> = Object.freeze({
  include: ['**/*'],
  exclude: ['**/node_modules/**', '**/.git/**', '**/dist/**', '**/out/**'],
  maxFileSizeMB: 50,
  maxParseMemoryMB: 1024,
  maxNodesPerFile: 100_000,
  branchingFactor: 2,
  topK: 10,
  maxRounds: 3,
  criticLookAhead: true,
  criticModel: true,
  profilesEnabled: true,
  readerTokenCap: 16000,
  autoIndex: true,
  encoderModelFolder: '',
  llmProvider: 'none',
  llmBaseUrl: 'https://api.openai.com/v1',
  llmModel: '',
  llmRequestTimeoutSeconds: 60,
  llmMaxRetries: 3,
  llmRouting: false,
  readerPageImages: false,
  controllerEnabled: true,
  controllerMinPages: 8,
  controllerInitialPages: 5,
  controllerMaxActivationsPerIteration: 4,
  controllerMaxIterations: 8,
  controllerMaxOpenedNodes: 12,
  controllerMaxSearches: 2,
  retrievalFusion: 'profile',
  // The rank gate, the glimpse and the built-in profile's hybrid node score together: at or above
  // flat top-m at equal tokens on all six given-items sets, more SQuAD answers and golds kept on
  // real documents with fewer tokens (docs/evaluation.md, "The ask's default since").
  compressorItems: 0.3,
  // 800 characters, not 600: a one-passage item (NQ's ~100-word passages) stays whole instead of
  // losing its answer sentence to the rule, at the same tokens; level on the given items and the
  // pools (docs/evaluation.md, "Whole items up to 800 characters").
  compressorWholeBelow: 800,
  compressorMinItems: 4,
  // The plain rule often descends into the sentence that repeats the question's words and drops
  // the one beside it that answers (BENCHMARKS.md, "Glimpse by default").
  compressorGlimpse: 1,
  nodeScore: 'profile',
  topicsEnabled: false,
  topicsCount: 0,
  adapterCheckpoint: '',
  store: 'local',
  exportOtlpEndpoint: '',
  exportFile: '',
  exportProject: 'canopy',
  // A trace is 0.9–2.2 MB of JSON, 0.1–0.3 MB gzip-compressed: 500 keep months of questions within 100 MB.
  tracesMaxCount: 500,
  tracesMaxSizeMB: 100,
});

const providers: readonly LlmProviderName[] = ['none', 'openai-compatible', 'vscode-lm'];

/** Merge a partial, untrusted settings object over the defaults, clamping numbers to their ranges. */
export function resolveSettings(partial: Partial<Record<keyof CanopySettings, unknown>>): CanopySettings {
  const d = defaultSettings;
  return {
    include: stringList(partial.include, d.include),
    exclude: stringList(partial.exclude, d.exclude),
    maxFileSizeMB: clampNumber(partial.maxFileSizeMB, d.maxFileSizeMB, 0.01, Number.MAX_SAFE_INTEGER),
    maxParseMemoryMB: Math.round(clampNumber(partial.maxParseMemoryMB, d.maxParseMemoryMB, 64, 65536)),
    maxNodesPerFile: Math.round(clampNumber(partial.maxNodesPerFile, d.maxNodesPerFile, 100, 10_000_000)),
    branchingFactor: Math.round(clampNumber(partial.branchingFactor, d.branchingFactor, BRANCHING_FACTOR.min, BRANCHING_FACTOR.max)),
    topK: Math.round(clampNumber(partial.topK, d.topK, TOP_K.min, TOP_K.max)),
    maxRounds: Math.round(clampNumber(partial.maxRounds, d.maxRounds, MAX_ROUNDS.min, MAX_ROUNDS.max)),
    readerTokenCap: Math.round(clampNumber(partial.readerTokenCap, d.readerTokenCap, 256, Number.MAX_SAFE_INTEGER)),
    autoIndex: typeof partial.autoIndex === 'boolean' ? partial.autoIndex : d.autoIndex,
    criticLookAhead: typeof partial.criticLookAhead === 'boolean' ? partial.criticLookAhead : d.criticLookAhead,
    criticModel: typeof partial.criticModel === 'boolean' ? partial.criticModel : d.criticModel,
    profilesEnabled: typeof partial.profilesEnabled === 'boolean' ? partial.profilesEnabled : d.profilesEnabled,
    encoderModelFolder: typeof partial.encoderModelFolder === 'string' ? partial.encoderModelFolder : d.encoderModelFolder,
    llmProvider: providers.includes(partial.llmProvider as LlmProviderName) ? (partial.llmProvider as LlmProviderName) : d.llmProvider,
    llmBaseUrl: typeof partial.llmBaseUrl === 'string' && partial.llmBaseUrl.trim() !== '' ? partial.llmBaseUrl.trim() : d.llmBaseUrl,
    llmModel: typeof partial.llmModel === 'string' ? partial.llmModel.trim() : d.llmModel,
    llmRequestTimeoutSeconds: clampNumber(partial.llmRequestTimeoutSeconds, d.llmRequestTimeoutSeconds, 1, 600),
    llmMaxRetries: Math.round(clampNumber(partial.llmMaxRetries, d.llmMaxRetries, 0, 10)),
    llmRouting: typeof partial.llmRouting === 'boolean' ? partial.llmRouting : d.llmRouting,
    readerPageImages: typeof partial.readerPageImages === 'boolean' ? partial.readerPageImages : d.readerPageImages,
    controllerEnabled: typeof partial.controllerEnabled === 'boolean' ? partial.controllerEnabled : d.controllerEnabled,
    controllerMinPages: Math.round(clampNumber(partial.controllerMinPages, d.controllerMinPages, 2, 100_000)),
    controllerInitialPages: Math.round(clampNumber(partial.controllerInitialPages, d.controllerInitialPages, 1, 100)),
    controllerMaxActivationsPerIteration: Math.round(clampNumber(partial.controllerMaxActivationsPerIteration, d.controllerMaxActivationsPerIteration, 1, 4)),
    controllerMaxIterations: Math.round(clampNumber(partial.controllerMaxIterations, d.controllerMaxIterations, 1, 100)),
    controllerMaxOpenedNodes: Math.round(clampNumber(partial.controllerMaxOpenedNodes, d.controllerMaxOpenedNodes, 1, 1000)),
    controllerMaxSearches: Math.round(clampNumber(partial.controllerMaxSearches, d.controllerMaxSearches, 0, 20)),
    retrievalFusion: partial.retrievalFusion === 'rrf' || partial.retrievalFusion === 'profile' ? partial.retrievalFusion : d.retrievalFusion,
    compressorItems: itemShare(partial.compressorItems, d.compressorItems),
    compressorWholeBelow: Math.round(clampNumber(partial.compressorWholeBelow, d.compressorWholeBelow, WHOLE_BELOW.min, WHOLE_BELOW.max)),
    compressorMinItems: Math.round(clampNumber(partial.compressorMinItems, d.compressorMinItems, MIN_ITEMS.min, MIN_ITEMS.max)),
    compressorGlimpse: Math.round(clampNumber(partial.compressorGlimpse, d.compressorGlimpse, GLIMPSE.min, GLIMPSE.max)),
    nodeScore: partial.nodeScore === 'profile' || partial.nodeScore === 'dense' ? partial.nodeScore : d.nodeScore,
    topicsEnabled: typeof partial.topicsEnabled === 'boolean' ? partial.topicsEnabled : d.topicsEnabled,
    topicsCount: Math.round(clampNumber(partial.topicsCount, d.topicsCount, 0, 1000)),
    adapterCheckpoint: typeof partial.adapterCheckpoint === 'string' ? partial.adapterCheckpoint.trim() : d.adapterCheckpoint,
    store: typeof partial.store === 'string' && partial.store.trim() !== '' ? partial.store.trim() : d.store,
    exportOtlpEndpoint: typeof partial.exportOtlpEndpoint === 'string' ? partial.exportOtlpEndpoint.trim() : d.exportOtlpEndpoint,
    exportFile: typeof partial.exportFile === 'string' ? partial.exportFile.trim() : d.exportFile,
    exportProject: typeof partial.exportProject === 'string' && partial.exportProject.trim() !== '' ? partial.exportProject.trim() : d.exportProject,
    tracesMaxCount: Math.round(clampNumber(partial.tracesMaxCount, d.tracesMaxCount, 0, 1_000_000)),
    tracesMaxSizeMB: clampNumber(partial.tracesMaxSizeMB, d.tracesMaxSizeMB, 0, 1_000_000),
  };
}

/** The rank gate's share: 0 (no gate) or within ITEM_SHARE; a share between the two is raised to the least. */
function itemShare(value: unknown, fallback: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  if (value <= 0) return 0;
  return Math.min(ITEM_SHARE.max, Math.max(ITEM_SHARE.min, value));
}

/**
 * The CANOPY compressor the settings describe: the rank gate when `compressorItems` > 0 (with its
 * whole-item size and least item count), the glimpse when `compressorGlimpse` > 0. Options at
 * their neutral value are left out, so the trace records only what is on.
 */
export function canopyCompressor(s: Pick<CanopySettings, 'compressorItems' | 'compressorWholeBelow' | 'compressorMinItems' | 'compressorGlimpse'>): CompressorSetting {
  return {
    name: 'canopy',
    ...(s.compressorItems > 0
      ? {
          items: s.compressorItems,
          ...(s.compressorWholeBelow > 0 ? { wholeBelow: s.compressorWholeBelow } : {}),
          ...(s.compressorMinItems > 1 ? { minItems: s.compressorMinItems } : {}),
        }
      : {}),
    ...(s.compressorGlimpse > 0 ? { glimpse: s.compressorGlimpse } : {}),
  };
}

/**
 * The compressor an ask runs: the settings' (`canopyCompressor`), or — while the rank gate's
 * settings (share, least count, whole size) are at their defaults — the gate options `canopy
 * train` fitted to the workspace's gold and wrote into the retrieval profile (issue 36), with the
 * item order it trained when it trained one. A user's own gate settings always win (and the gate
 * then ranks by BM25).
 */
export function askCompressor(
  s: Pick<CanopySettings, 'compressorItems' | 'compressorWholeBelow' | 'compressorMinItems' | 'compressorGlimpse'>,
  gate: { items: number; minItems: number; wholeBelow: number; order?: { bm25: number; root: number; leaf: number; length: number } } | undefined,
): CompressorSetting {
  const d = defaultSettings;
  const atDefaults = s.compressorItems === d.compressorItems && s.compressorMinItems === d.compressorMinItems && s.compressorWholeBelow === d.compressorWholeBelow;
  if (!gate || !atDefaults) return canopyCompressor(s);
  const fitted = canopyCompressor({ ...s, compressorItems: gate.items, compressorMinItems: gate.minItems, compressorWholeBelow: gate.wholeBelow });
  // The trained item order goes with the fitted gate it was chosen with (and only with a gate on).
  return gate.order && fitted.name === 'canopy' && fitted.items !== undefined ? { ...fitted, itemOrder: { ...gate.order } } : fitted;
}

function stringList(value: unknown, fallback: readonly string[]): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return [...value];
  return [...fallback];
}

function clampNumber(value: unknown, fallback: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, value));
}
