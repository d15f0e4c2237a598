/**
 * `canopy bench <what>`: the benchmark commands. `encode` is the encoder benchmark
 * (benchEncode.ts); `index` and `query` measure indexing and query latency (benchIndex.ts,
 * benchQuery.ts); `realdocs` is the real-document benchmark (benchRealDocs.ts); `npm run bench`
 * runs them all and writes BENCHMARKS.md (tools/bench.ts).
 */
import { type CliIO, UsageError } from '../io';
import { benchCorpusHelp, runBenchCorpus } from './benchCorpus';
import { benchEncodeHelp, runBenchEncode } from './benchEncode';
import { benchIndexHelp, runBenchIndex } from './benchIndex';
import { benchRealDocsHelp, runBenchRealDocs } from './benchRealDocs';
import { benchVectorsHelp, runBenchVectors } from './benchVectors';
import { benchTopicsHelp, runBenchTopics } from './benchTopics';
import { benchStoreHelp, runBenchStore } from './benchStore';

export const benchHelp = `Usage: canopy bench <what> [options]

  encode    built-in encoder throughput (canopy bench encode --help)
  corpus    index throughput, index size, peak RSS and query latency at corpus scale; --engine vectra for the peer
  index     indexing a real folder (Markdown or PDFs) and re-indexing after one edit
  vectors   eager against lazy node vectors
  topics    query latency with and without the topic compass (canopy bench topics --help)
  store     an index store at corpus scale: write, HNSW build, dense / lexical / hybrid latency,
            recall@10 against exact search (canopy bench store --help)
  realdocs  real documents (FinanceBench PDFs, SQuAD articles, Canopy's docs; NQ passages with a
            flat BM25 baseline; a documentation folder): latency, rounds, gold answer, gold
            citation and gold evidence per question (canopy bench realdocs --help)

"npm run bench" runs them all and writes BENCHMARKS.md.`;

const subcommands: Record<string, { help: string; run: (args: string[], io: CliIO) => Promise<number> }> = {
  corpus: { help: benchCorpusHelp, run: runBenchCorpus },
  index: { help: benchIndexHelp, run: runBenchIndex },
  vectors: { help: benchVectorsHelp, run: runBenchVectors },
  topics: { help: benchTopicsHelp, run: runBenchTopics },
  store: { help: benchStoreHelp, run: runBenchStore },
  realdocs: { help: benchRealDocsHelp, run: runBenchRealDocs },
};

export async function runBench(args: string[], io: CliIO): Promise<number> {
  const [what, ...rest] = args;
  switch (what) {
    case 'encode':
      if (rest.includes('--help')) {
        io.out(benchEncodeHelp);
        return 0;
      }
      return runBenchEncode(rest, (l) => io.out(l));
    default: {
      const sub = what === undefined ? undefined : subcommands[what];
      if (sub) {
        if (rest.includes('--help')) {
          io.out(sub.help);
          return 0;
        }
        return sub.run(rest, io);
      }
      throw new UsageError(what === undefined ? 'bench needs what to measure' : `unknown benchmark "${what}"`);
    }
  }
}
