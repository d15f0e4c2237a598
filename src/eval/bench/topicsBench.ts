/**
 * `canopy bench topics`: query latency of the topic compass against the hybrid retriever it
 * wraps, on a dataset's open pool (the cached pool index of `canopy eval --mode pool`). The
 * scorer is trained on a seeded split of the questions (as in the ablation) and the held-back
 * questions are timed. Query encoding is left out of both: the split's labelling has put every
 * question's vector in the embedding cache (the encoder's time is the same with and without
 * topics; `canopy bench encode` measures it), so `queryVectorMs` is only that cache lookup.
 * The hybrid is the default retrieval (the encoder's profile), the one the compass re-ranks.
 * Hybrid and compass retrievals of the same k alternate, `repeat` times, so both see the same
 * cache state and machine load.
 */
import { loadDataset } from '../datasets/load';
import { openEvalEmbeddings } from '../embeddings';
import { openPoolIndex } from '../poolIndex';
import { prepareTopicVariants } from '../topicsAblation';
import { coarsenPool, coarsenQuestion, type CoarseSpec } from '../datasets/coarse';
import { profileFor } from '../../core/retrieve/profile';
import type { EncoderConfig } from '../../core/encode/encoder';
import { CanopyError, ErrorCodes } from '../../core/errors';
import { join } from 'node:path';
import { latency, type Latency } from './measure';

export interface TopicsBenchOptions {
  file: string;
  cacheDir: string;
  encoder: EncoderConfig;
  builtinModelDir: string;
  topK: number;
  seed: number;
  holdout: number;
  repeat: number;
  /** At most this many held-back questions are timed. */
  limit?: number;
  /** The pool grouped into coarse items (datasets/coarse.ts), as in `canopy eval --pool-chunks`. */
  poolChunks?: CoarseSpec;
  onProgress?: (message: string) => void;
}

export interface TopicsBenchResult {
  dataset: string;
  poolDocuments: number;
  k: number;
  timedQuestions: number;
  repeat: number;
  topK: number;
  /** Fetching the (cached) query vector: what the compass's own embedQuery call costs. */
  queryVectorMs: Latency;
  hybridMs: Latency;
  compassMs: Latency;
  /** Per query and repetition: compass − hybrid. */
  overheadMs: Latency;
}

export async function runTopicsBench(options: TopicsBenchOptions): Promise<TopicsBenchResult> {
  const dataset = loadDataset(options.file);
  const pool = dataset.pool;
  if (!pool || pool.kind !== 'docs') throw new CanopyError(ErrorCodes.badInput, `${dataset.file}: no open pool of documents for ${dataset.schema}`);
  let docs = pool.read();
  let questions = dataset.questions;
  if (options.poolChunks) {
    const coarse = coarsenPool(docs, options.poolChunks);
    docs = coarse.docs;
    questions = questions.map((q) => coarsenQuestion(q, coarse));
  }
  const embeddings = await openEvalEmbeddings({ encoder: options.encoder, builtinModelDir: options.builtinModelDir, cacheDir: join(options.cacheDir, 'embeddings') });
  try {
    const index = await openPoolIndex(docs, { cacheDir: options.cacheDir, branchingFactor: 2, embeddings, logger: { log: (_l, m) => options.onProgress?.(m) } });
    // The compass wraps, and is timed against, the default retrieval (the encoder's profile).
    const fusion = profileFor(embeddings.id, undefined).fusion;
    const setup = await prepareTopicVariants(questions, ['off', 'full'], index, embeddings, { seed: options.seed, holdout: options.holdout, fusion, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
    const compass = setup.retrievers.get('full')!;
    const timed = setup.questions.slice(0, options.limit ?? setup.questions.length);
    const encodeMs: number[] = [];
    const hybridMs: number[] = [];
    const compassMs: number[] = [];
    const overhead: number[] = [];
    for (const q of timed) {
      const t0 = performance.now();
      await embeddings.embedQuery(q.question);
      encodeMs.push(performance.now() - t0);
    }
    for (let r = 0; r < options.repeat; r++) {
      for (const [i, q] of timed.entries()) {
        const time = async (fn: () => Promise<unknown>) => {
          const t = performance.now();
          await fn();
          return performance.now() - t;
        };
        // Alternate which goes first so neither always meets a warm cache.
        const first = (i + r) % 2 === 0;
        const a = first ? await time(() => setup.hybrid.retrieve(q.question, options.topK)) : 0;
        const c = await time(() => compass.retrieve(q.question, options.topK));
        const h = first ? a : await time(() => setup.hybrid.retrieve(q.question, options.topK));
        hybridMs.push(h);
        compassMs.push(c);
        overhead.push(c - h);
      }
      options.onProgress?.(`pass ${r + 1}/${options.repeat}: ${timed.length} questions`);
    }
    return {
      dataset: dataset.file,
      poolDocuments: docs.length,
      k: setup.diagnostics.k,
      timedQuestions: timed.length,
      repeat: options.repeat,
      topK: options.topK,
      queryVectorMs: latency(encodeMs),
      hybridMs: latency(hybridMs),
      compassMs: latency(compassMs),
      overheadMs: latency(overhead),
    };
  } finally {
    await embeddings.save();
    await embeddings.dispose();
  }
}
