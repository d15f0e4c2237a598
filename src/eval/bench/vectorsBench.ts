/**
 * Eager or lazy node vectors? Both variants index the same documents from an empty embedding
 * cache with the real indexer: eager (today's indexer: every leaf encoded at index time, the other
 * node vectors derived from them) and lazy (only each item's own text, for its retrieval vector;
 * leaves encoded when a query first compresses that item, then cached). Then the same questions run through the ask pipeline
 * twice: the first pass pays the lazy index's deferred encoding, the second is warm.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ask } from '../../core/engine/ask';
import { bpeTokenCounter } from '../../core/compress/tokens';
import { RuleCritic } from '../../core/critic/ruleCritic';
import type { EncoderConfig } from '../../core/encode/encoder';
import { CorpusIndex } from '../../core/index/corpusIndex';
import { LocalStore } from '../../core/index/localStore';
import { ExtractiveReader } from '../../core/read/extractiveReader';
import { HybridRetriever } from '../../core/retrieve/hybrid';
import type { PoolDoc } from '../datasets/types';
import { openEvalEmbeddings } from '../embeddings';
import { indexPoolFiles, writePoolFiles } from '../poolIndex';
import { latency, timed, type Latency } from './measure';

export interface VectorsBenchOptions {
  docs: PoolDoc[];
  queries: string[];
  workDir: string;
  encoder: EncoderConfig;
  builtinModelDir: string;
  branchingFactor: number;
  topK: number;
  rounds: number;
}

export interface VectorsVariant {
  mode: 'eager' | 'lazy';
  indexSeconds: number;
  indexEncodedTexts: number;
  nodes: number;
  query: { first: Latency; second: Latency; encodedDuringFirst: number; encodedDuringSecond: number };
}

export interface VectorsBenchResult {
  documents: number;
  queries: number;
  variants: VectorsVariant[];
  /** Queries after which the lazy index has spent as much time as the eager one saved (NaN when it never does). */
  breakEvenQueries: number;
  /** Share of the texts eager indexing encodes (leaves, tables) that the query set needed (lazy). */
  nodesTouchedShare: number;
}

export async function runVectorsBench(o: VectorsBenchOptions): Promise<VectorsBenchResult> {
  mkdirSync(o.workDir, { recursive: true });
  const { discovery } = await writePoolFiles(join(o.workDir, 'files'), o.docs);
  const variants: VectorsVariant[] = [];
  for (const mode of ['eager', 'lazy'] as const) {
    const dir = join(o.workDir, mode);
    rmSync(dir, { recursive: true, force: true });
    // An empty cache per variant: both pay for every vector they compute.
    const embeddings = await openEvalEmbeddings({ encoder: o.encoder, builtinModelDir: o.builtinModelDir, cacheDir: join(dir, 'cache') });
    try {
      // Query vectors are not what is compared: encode the questions first, outside the timings.
      for (const q of o.queries) await embeddings.embedQuery(q);
      const e0 = embeddings.encoded;
      const built = await timed(() => indexPoolFiles(discovery, join(dir, 'index'), { branchingFactor: o.branchingFactor, embeddings, nodeVectors: mode }));
      const indexEncoded = embeddings.encoded - e0;
      const corpus = await CorpusIndex.open(new LocalStore(join(dir, 'index')), { maxCachedDocs: 4096 });
      const retriever = new HybridRetriever(corpus, embeddings.embedQuery);
      const tokens = bpeTokenCounter();
      const pass = async (): Promise<{ ms: number[]; encoded: number }> => {
        const before = embeddings.encoded;
        const ms: number[] = [];
        for (const q of o.queries) {
          const t = await timed(() =>
            ask(
              q,
              {
                topK: o.topK,
                maxRounds: o.rounds,
                branchingFactor: o.branchingFactor,
                compressor: { name: 'canopy' },
                readerTokenCap: 16000,
                encoderId: embeddings.id,
                retrieval: { dense: true, bm25: true, topics: false, fusion: 'rrf', rrfK: 60 },
              },
              { retriever, embedQuery: embeddings.embedQuery, embedTexts: embeddings.embedTexts, critic: new RuleCritic(), reader: new ExtractiveReader(), tokens, index: { root: dir, generation: corpus.generation, items: corpus.itemCount } },
            ),
          );
          ms.push(t.seconds * 1000);
        }
        return { ms, encoded: embeddings.encoded - before };
      };
      const first = await pass();
      const second = await pass();
      variants.push({
        mode,
        indexSeconds: built.seconds,
        indexEncodedTexts: indexEncoded,
        nodes: built.value.nodes,
        query: { first: latency(first.ms), second: latency(second.ms), encodedDuringFirst: first.encoded, encodedDuringSecond: second.encoded },
      });
    } finally {
      await embeddings.dispose();
    }
  }
  const eager = variants[0]!;
  const lazy = variants[1]!;
  const saved = eager.indexSeconds - lazy.indexSeconds;
  const extraPerQuery = (lazy.query.first.mean - eager.query.first.mean) / 1000;
  // The texts eager indexing encodes (leaves and tables): the share of them the questions needed.
  const encodedNodes = eager.indexEncodedTexts;
  return {
    documents: o.docs.length,
    queries: o.queries.length,
    variants,
    breakEvenQueries: saved > 0 && extraPerQuery > 0 ? saved / extraPerQuery : Number.NaN,
    nodesTouchedShare: encodedNodes > 0 ? lazy.query.encodedDuringFirst / encodedNodes : Number.NaN,
  };
}
