/**
 * Ask (design §1, §5, §6): the round engine with live seams — hybrid retrieval, node scores from
 * the encoder, the rule or LLM critic, the MAGE controller for long PDFs — and the reader. Every
 * score and decision goes into the returned AskTrace, which is all the inspector renders.
 */
import { isDenseOnly, type NodeScoreWeights } from '../compress/hybridScore';
import { routeQuestion } from '../compress/router';
import type { NodeAdapter } from '../compress/nodeScorer';
import type { TokenCounter } from '../compress/tokens';
import type { Critic } from '../critic/critic';
import type { EmbedTexts } from '../encode/nodeVectors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import type { ChatModel } from '../llm/llm';
import { systemClock, type Clock } from '../ports';
import type { ImageRequest, ReaderImage } from '../read/pageImages';
import type { Reader } from '../read/reader';
import type { Retriever } from '../retrieve/retriever';
import { languageRecord, readQuestion } from '../judge/questionReading';
import type { Item } from '../../contracts/region';
import type { Tracer } from '../trace/tracer';
import { TRACE_SCHEMA, TRACE_SCHEMA_VERSION, type AskTrace, type CompressorSetting, type TraceRouting, type TraceSettings } from '../../contracts/trace';
import { controllerRefineStage, controllerSettingsRecord, resolveAskController, type AskControllerOptions } from './controllerStage';
import { encoderScorer, readerInputWithImages, retrievalSource } from './live';
import { readEvidence, roundCritic, runRounds } from './rounds';
import { traceOutcome } from './traceTree';

export interface AskDeps {
  retriever: Retriever;
  /** The frozen query encoder: one unit vector per query. */
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  /** Node texts → vectors, normally through the embedding cache. */
  embedTexts: EmbedTexts;
  adapter?: NodeAdapter;
  /** No critic: one round only. */
  critic?: Critic;
  /** Query routing; the no-LLM rule when absent. */
  route?: (question: string, signal?: AbortSignal) => Promise<TraceRouting>;
  /** The LLM behind the critic, reader or router, for the trace. */
  llm?: { id: string; remote: boolean };
  reader: Reader;
  tokens: TokenCounter;
  clock?: Clock;
  tracer?: Tracer;
  index: { root: string; generation: number; items: number };
  newId?: () => string;
  /** The parsed document of an item's file (the index's cache); without it the MAGE controller never runs. */
  loadDocument?: (file: string) => Promise<ParsedDocument>;
  /** The LLM for the controller's evaluator; absent → the deterministic rule. */
  controllerLlm?: ChatModel;
  /** Files whose last good version the index serves (they no longer parse): evidence from them is flagged stale in the trace. */
  staleFiles?: ReadonlySet<string>;
  /** Renders page images and element crops of a PDF (pageImages.ts over the file's bytes); needed for `AskOptions.pageImages`. */
  renderImages?: (file: string, requests: ImageRequest[], signal?: AbortSignal) => Promise<ReaderImage[]>;
}

export interface AskOptions {
  topK: number;
  maxRounds: number;
  branchingFactor: number;
  compressor: CompressorSetting;
  readerTokenCap: number;
  encoderId: string;
  adapterId?: string;
  retrieval: TraceSettings['retrieval'];
  /** The MAGE controller for long PDFs (design §7); needs `AskDeps.loadDocument`. */
  controller?: AskControllerOptions;
  /** Send the controller subgraph's page images and element crops to a multimodal reader (needs `AskDeps.renderImages`). */
  pageImages?: boolean;
  /** Node score weights (compress/hybridScore.ts); the dense cosine alone when absent. */
  nodeScore?: NodeScoreWeights;
  /** The document profiles (profiles/profiles.ts) on: off, every document is read as fitting none (for measuring them). Default on. */
  profiles?: boolean;
}

export async function ask(question: string, options: AskOptions, deps: AskDeps, signal?: AbortSignal): Promise<AskTrace> {
  const clock = deps.clock ?? systemClock;
  const started = clock.now();
  const routing = deps.route ? await deps.route(question, signal) : routeQuestion(question);
  deps.tracer?.emit('ask/route', { ...routing });
  const controller = deps.loadDocument ? resolveAskController(options.controller) : undefined;

  // With the profiles off, every item and document is read as fitting none.
  const plain = options.profiles === false;
  const retriever = plain ? withoutProfiles(deps.retriever) : deps.retriever;
  const loadDocument = plain && deps.loadDocument ? async (file: string) => { const d = await deps.loadDocument!(file); return { ...d, items: d.items.map(stripProfiles) }; } : deps.loadDocument;
  const result = await runRounds(
    { question, topK: options.topK, maxRounds: options.maxRounds, compressor: options.compressor, readerTokenCap: options.readerTokenCap, routing },
    {
      source: retrievalSource(retriever, question),
      scorer: encoderScorer({ ...deps, question, ...(options.nodeScore ? { weights: options.nodeScore } : {}) }),
      ...(deps.critic ? { critic: roundCritic(deps.critic) } : {}),
      ...(controller
        ? {
            // Long PDFs: the controller's evidence subgraph replaces CANOPY's kept regions of the file's fresh items.
            refine: controllerRefineStage(controller, {
              loadDocument: loadDocument!,
              embedQuery: deps.embedQuery,
              embedTexts: deps.embedTexts,
              tokens: deps.tokens,
              clock,
              ...(deps.adapter ? { adapter: deps.adapter } : {}),
              ...(deps.controllerLlm ? { llm: deps.controllerLlm } : {}),
              ...(deps.tracer ? { tracer: deps.tracer } : {}),
            }),
          }
        : {}),
      tokens: deps.tokens,
      ...(deps.tracer ? { tracer: deps.tracer } : {}),
      clock,
    },
    signal,
  );
  const read = await readEvidence(
    question,
    result,
    {
      reader: deps.reader,
      tokens: deps.tokens,
      cap: options.readerTokenCap,
      ...(options.pageImages
        ? {
            readerInput: readerInputWithImages({
              reader: deps.reader,
              tokens: deps.tokens,
              cap: options.readerTokenCap,
              ...(deps.renderImages ? { renderImages: deps.renderImages } : {}),
              ...(deps.tracer ? { tracer: deps.tracer } : {}),
            }),
          }
        : {}),
      ...(deps.tracer ? { tracer: deps.tracer } : {}),
      ...(deps.staleFiles ? { staleFiles: deps.staleFiles } : {}),
    },
    signal,
  );
  const stale = deps.staleFiles;
  const rounds = stale && stale.size > 0 ? result.rounds.map((r) => ({ ...r, retrieved: r.retrieved.map((it) => (stale.has(it.file) ? { ...it, stale: true } : it)) })) : result.rounds;

  return {
    schema: TRACE_SCHEMA,
    version: TRACE_SCHEMA_VERSION,
    id: deps.newId?.() ?? `${started.toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
    createdAt: new Date(started).toISOString(),
    question,
    settings: {
      topK: options.topK,
      maxRounds: options.maxRounds,
      branchingFactor: options.branchingFactor,
      compressor: options.compressor,
      critic: deps.critic?.kind ?? 'none',
      ...(deps.critic?.modelId ? { criticModel: deps.critic.modelId } : {}),
      ...(deps.reader.modelId ? { readerModel: deps.reader.modelId } : {}),
      reader: deps.reader.mode,
      readerTokenCap: options.readerTokenCap,
      tokenizer: deps.tokens.name,
      encoderId: options.encoderId,
      ...(options.adapterId ? { adapterId: options.adapterId } : {}),
      retrieval: options.retrieval,
      ...(options.nodeScore && !isDenseOnly(options.nodeScore) ? { nodeScore: { ...options.nodeScore } } : {}),
      ...(deps.llm ? { llm: deps.llm } : {}),
      ...(controller ? { controller: controllerSettingsRecord(controller, deps.controllerLlm !== undefined) } : {}),
      ...(options.pageImages ? { pageImages: true } : {}),
    },
    index: deps.index,
    rounds,
    stop: result.stop,
    ...traceOutcome(read.readerInput, read.uncompressed, read.answer, result.items),
    ms: clock.now() - started,
    language: languageRecord(readQuestion(question)),
  };
}

function stripProfiles(item: Item): Item {
  return item.traits?.profiles?.length ? { ...item, traits: { ...item.traits, profiles: [] } } : item;
}

/** A retriever whose items fit no document profile (AskOptions.profiles off). */
function withoutProfiles(retriever: Retriever): Retriever {
  const wrapped: Retriever = {
    async retrieve(query, k, options) {
      const r = await retriever.retrieve(query, k, options);
      return { ...r, items: r.items.map((x) => ({ ...x, item: stripProfiles(x.item) })) };
    },
  };
  if (retriever.titled) wrapped.titled = (names, modalities) => retriever.titled!(names, modalities);
  return wrapped;
}
