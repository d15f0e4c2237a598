/**
 * The round engine's live seams, as a question asked now uses them: candidates from a retriever,
 * node scores from the encoder (through the embedding cache), and a reader input that carries
 * the page images and crops of a long PDF's evidence subgraph when a multimodal reader wants them.
 */
import { hybridRound, type NodeScoreWeights } from '../compress/hybridScore';
import { scoreNodes, type NodeAdapter } from '../compress/nodeScorer';
import type { TokenCounter } from '../compress/tokens';
import { nodeVectors, type EmbedTexts } from '../encode/nodeVectors';
import { throwIfCancelled } from '../errors';
import type { ImageRequest, ReaderImage } from '../read/pageImages';
import { buildReaderInput, type EvidenceRegion, type Reader, type ReaderInput } from '../read/reader';
import type { RetrieveOptions, Retriever } from '../retrieve/retriever';
import { questionSourceNames } from '../text/sources';
import { sourcePreference } from '../text/sourcePeriods';
import type { Tracer } from '../trace/tracer';
import type { Item } from '../../contracts/region';
import type { CandidateSource, NodeScorer, ScoredItem } from './rounds';

/** Of every round's top k, this many at least come from files the question names, when the candidates hold them. */
export const NAMED_SOURCE_RESERVE = 4;

/**
 * The files a question names, as a retrieval preference: names of three or more characters, or
 * with a digit ("4X"), found in a file's name ("ACME's" → ACME_2023_10K.pdf; "Lorne" →
 * Edda_Lorne.md), the filing of the period it names first (text/sourcePeriods.ts `sourcePreference`).
 * Undefined when it names none.
 */
export function namedFiles(question: string): RetrieveOptions['named'] {
  const names = questionSourceNames(question).filter((n) => n.length >= 3 || /\d/.test(n));
  const prefer = sourcePreference(question, names);
  if (!prefer) return undefined;
  return { prefer, reserve: NAMED_SOURCE_RESERVE };
}

/**
 * Each round's query goes to the retriever; the items come back with their score components.
 * With the question, every round keeps a few places for the files it names (`namedFiles`).
 */
export function retrievalSource(retriever: Retriever, question?: string): CandidateSource {
  const named = question === undefined ? undefined : namedFiles(question);
  return {
    async candidates({ query, want, routing, names }, signal) {
      const retrieval = await retriever.retrieve(query, want, { modalities: routing.modalities, ...(named ? { named } : {}), ...(names && names.length > 0 ? { titled: names } : {}), ...(signal ? { signal } : {}) });
      return {
        kind: 'ranked',
        ranked: retrieval.items.map((r) => ({ itemId: r.item.id, rank: r.rank, scores: r.scores, item: r.item })),
        candidates: retrieval.candidates,
        ...(retrieval.topics ? { topics: retrieval.topics } : {}),
      };
    },
    ...(retriever.titled ? { titled: (names: readonly string[], routing) => retriever.titled!(names, routing.modalities) } : {}),
  };
}

/**
 * Every node's score against the round's query: the cosine (after the adapter) of its vector from
 * the encoder, fused with its lexical evidence when the weights say so (compress/hybridScore.ts).
 */
export function encoderScorer(deps: {
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  embedTexts: EmbedTexts;
  adapter?: NodeAdapter;
  weights?: NodeScoreWeights;
  /** The user's question: a follow-up round's items are also scored against it, for the reader (ScoredItem.questionScores). */
  question?: string;
}): NodeScorer {
  return {
    async score(fresh, { query }, signal) {
      const queryVector = await deps.embedQuery(query, signal);
      const questionVector = deps.question !== undefined && deps.question !== query ? await deps.embedQuery(deps.question, signal) : undefined;
      const dense: Array<{ id: string; item: Item; dense: Map<string, number>; question?: Map<string, number> }> = [];
      for (const c of fresh) {
        throwIfCancelled(signal);
        if (!c.item) throw new Error(`retrieval returned ${c.itemId} without its item`);
        const vectors = await nodeVectors(c.item.root, deps.embedTexts, signal);
        dense.push({ id: c.itemId, item: c.item, dense: scoreNodes(queryVector, vectors, deps.adapter), ...(questionVector ? { question: scoreNodes(questionVector, vectors, deps.adapter) } : {}) });
      }
      const fused = hybridRound(query, dense, deps.weights);
      return new Map<string, ScoredItem>(dense.map((d, i) => [d.id, { item: d.item, ...fused[i]!, ...(d.question ? { questionScores: d.question } : {}) }]));
    },
  };
}

/**
 * The reader input with the page images and crops its subgraph XML names, when a renderer is
 * given and the reader takes images. When they cannot be had, the input is text only and `notes`
 * says why; a failed rendering never fails the answer.
 */
export function readerInputWithImages(deps: {
  reader: Reader;
  tokens: TokenCounter;
  cap: number;
  renderImages?: (file: string, requests: ImageRequest[], signal?: AbortSignal) => Promise<ReaderImage[]>;
  tracer?: Tracer;
}): (regions: EvidenceRegion[], signal?: AbortSignal) => Promise<ReaderInput> {
  return async (regions, signal) => {
    const text = () => buildReaderInput(regions, deps.tokens, deps.cap);
    if (!deps.reader.acceptsImages) return { ...text(), notes: [`page images are on, but the ${deps.reader.mode} reader takes no images: it got the text only`] };
    if (!deps.renderImages) return { ...text(), notes: ['page images are on, but nothing here can render PDF pages: the reader got the text only'] };
    const input = buildReaderInput(regions, deps.tokens, deps.cap, { images: true });
    const requests = input.imageRequests ?? [];
    if (requests.length === 0) return input;
    try {
      const byFile = new Map<string, ImageRequest[]>();
      for (const r of requests) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
      const rendered = new Map<string, ReaderImage>();
      for (const [file, list] of byFile) for (const image of await deps.renderImages(file, list, signal)) rendered.set(image.ref, image);
      input.images = requests.map((r) => rendered.get(r.ref)!);
      deps.tracer?.emit('read/images', { images: input.images.length, bytes: input.images.reduce((a, i) => a + i.data.length, 0) });
      return input;
    } catch (err) {
      throwIfCancelled(signal);
      return { ...text(), notes: [`page images could not be rendered, so the reader got the text only: ${err instanceof Error ? err.message : String(err)}`] };
    }
  };
}
