/**
 * `canopy bench corpus`: indexing throughput, index size, peak RSS and query latency of one
 * engine (Canopy or the vectra peer) over N pool documents (see eval/bench/corpusBench.ts).
 * One engine per process, so the peak RSS is that engine's.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { canopyBuild, canopyQuery, canopyQueryInTurn, prepareBenchCache, replicateDocs, runCorpusBench } from '../../eval/bench/corpusBench';
import { machine } from '../../eval/bench/measure';
import { openEvalEmbeddings } from '../../eval/embeddings';
import { canopyCompressor, resolveSettings } from '../../core/config/settings';
import { BUILTIN_PROFILE, describeFusion, type FusionSetting, RRF_EQUAL } from '../../core/retrieve/profile';
import type { NodeScoreWeights } from '../../core/compress/hybridScore';
import type { CompressorSetting } from '../../contracts/trace';
import { compressorFlagOptions, compressorFlags, compressorFlagsHelp } from '../compressorFlags';
import { type CliIO, UsageError } from '../io';
import { cliLogger, packageRoot } from '../runtime';
import { benchDocs, benchQueries, evalCacheDir, nonNegative, positive } from './benchShared';

export const benchCorpusHelp = `Usage: canopy bench corpus --pool <file>... --queries <file> [options]

Options:
  --pool <file>        pool / corpus JSONL or SQuAD articles (repeatable; their union, in order)
  --docs <n>           the first n documents (default: all)
  --replicate-to <n>   canopy: replicate them up to n documents, each copy with a fresh id (its own
                       file, item and node ids) and the original's text, so the embedding cache
                       serves its vectors; --prepare needs only the originals
  --queries <file>     questions for latency (any file canopy eval reads)
  --query-count <n>    questions per pass (default 50)
  --engine <e>         canopy (default) | vectra
  --repeats <n>        warm rebuilds; the median is reported (default 3; 0: the first build only)
  --phase <p>          canopy: all (default) | index (build only) | query (answer only, from the
                       index a --phase index run left in <work>/index, read no pools): index and
                       query in separate processes give each its own peak RSS
  --in-turn <dir>      with --phase query: also answer from the index in <dir>/index (repeatable),
                       question by question in turn with <work>'s, so both sizes see the same
                       machine load; reports each index's latencies (peak RSS is theirs together)
  --against="<flags>"  with --phase query: also answer every question with these CANOPY flags
                       (e.g. --against="--gate-items 0 --glimpse 0 --node-score dense"; the = is
                       needed, the value starts with a dash), in turn with the
                       ones given, on the same index: the latency ratio of two configurations
                       from one run (per question: warm ÷ the first run's warm)
  --fusion <f>         canopy: how retrieval fuses its lists — profile (default: the built-in
                       encoder's profile, what an ask runs) | rrf (the design's equal-weight RRF);
                       also inside --against
  --peer-chunk <n>     vectra chunk size in tokens (default 512, vectra's own default)
  --peer-budget <n>    vectra renderSections token budget per query (default 1000)
  --cache <dir>        embedding cache folder root (default ~/.cache/canopy-eval)
  --work <dir>         where the indexes are built (default <cache>/bench/corpus-<engine>-<n>)
  --prepare            only fill <work>/emb, the corpus's own embedding cache, from the shared
                       cache (encoding what it lacks); run it before measuring, in its own process,
                       so the measuring process holds only this corpus's vectors
  --json               print one JSON object
  CANOPY in every timed question (canopy ask's flags; absent ones take the settings' defaults,
  --node-score profile is the built-in encoder's profile):
${compressorFlagsHelp}

Measuring reads vectors from <work>/emb (texts missing there are encoded, and counted).`;

export async function runBenchCorpus(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      pool: { type: 'string', multiple: true },
      docs: { type: 'string' },
      'replicate-to': { type: 'string' },
      phase: { type: 'string' },
      'in-turn': { type: 'string', multiple: true },
      against: { type: 'string' },
      queries: { type: 'string' },
      'query-count': { type: 'string' },
      engine: { type: 'string' },
      repeats: { type: 'string' },
      'peer-chunk': { type: 'string' },
      fusion: { type: 'string' },
      'peer-budget': { type: 'string' },
      cache: { type: 'string' },
      work: { type: 'string' },
      json: { type: 'boolean' },
      prepare: { type: 'boolean' },
      verbose: { type: 'boolean' },
      ...compressorFlagOptions,
    },
  });
  const engine = values.engine ?? 'canopy';
  if (engine !== 'canopy' && engine !== 'vectra') throw new UsageError('--engine must be canopy or vectra');
  const phase = values.phase ?? 'all';
  if (phase !== 'all' && phase !== 'index' && phase !== 'query') throw new UsageError('--phase must be all, index or query');
  if (engine === 'vectra' && (phase !== 'all' || values['replicate-to'] !== undefined)) throw new UsageError('--phase and --replicate-to are for --engine canopy');
  const queries = benchQueries(io, values.queries, positive(values['query-count'], '--query-count', 50));
  const cache = evalCacheDir(io, values.cache);
  const builtinModelDir = path.join(packageRoot(), 'models', 'use-lite');
  const verbose = values.verbose ?? false;
  const canopy = canopyAsk(values);
  if (engine === 'canopy' && !values.prepare && phase !== 'index') io.err(`bench corpus: compressor ${JSON.stringify(canopy.compressor)}, node score ${canopy.nodeScore ? JSON.stringify(canopy.nodeScore) : 'dense cosine'}, fusion ${describeFusion(canopy.fusion)}`);
  if (phase === 'query') {
    // No pools read: the answering process holds only what answering needs.
    if (!values.work) throw new UsageError('--phase query needs --work <dir>, the folder of a --phase index run');
    const workDir = path.resolve(io.cwd, values.work);
    const indexDir = path.join(workDir, 'index');
    if (!existsSync(path.join(indexDir, 'CURRENT'))) throw new UsageError(`${indexDir}: no index there; build it with --phase index --work ${values.work}`);
    const others = (values['in-turn'] ?? []).map((d) => path.join(path.resolve(io.cwd, d), 'index'));
    for (const dir of others) if (!existsSync(path.join(dir, 'CURRENT'))) throw new UsageError(`${dir}: no index there (--in-turn names the --work folder of a --phase index run)`);
    const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir, cacheDir: path.join(workDir, 'emb') });
    const against = values.against === undefined ? undefined : canopyAsk(againstFlags(values.against));
    if (others.length > 0 || against) {
      try {
        const before = embeddings.encoded;
        const result = await canopyQueryInTurn({ queries, embeddings, branchingFactor: 2, topK: 10, rounds: 3, ...canopy }, [indexDir, ...others], against);
        const out = { machine: machine(), phase: 'query-in-turn', result, encodedTexts: embeddings.encoded - before };
        if (values.json) io.out(JSON.stringify(out));
        else {
          for (const x of result.indexes) {
            const q = x.query;
            const what = `${JSON.stringify(x.compressor)}, node score ${x.nodeScore ? JSON.stringify(x.nodeScore) : 'dense cosine'}, fusion ${describeFusion(x.variant === 'against' && against ? against.fusion : canopy.fusion)}`;
            const ratio = x.warmRatio ? `; warm ÷ first run's per question: median ${x.warmRatio.median.toFixed(3)} [quartiles ${x.warmRatio.q1.toFixed(3)}, ${x.warmRatio.q3.toFixed(3)}]` : '';
            io.out(`${x.indexDir} (${what}): ${x.documents} documents; open ${x.openSeconds.toFixed(2)} s; query ms p50/p95: first ${q.first.p50.toFixed(1)}/${q.first.p95.toFixed(1)}, warm ${q.warm.p50.toFixed(1)}/${q.warm.p95.toFixed(1)}, retrieval only ${q.retrieveOnly.p50.toFixed(1)}/${q.retrieveOnly.p95.toFixed(1)}${ratio}`);
          }
          io.out(`peak RSS of the process (every index together): ${result.peakRssMiB.toFixed(0)} MiB`);
        }
        return 0;
      } finally {
        await embeddings.dispose();
      }
    }
    try {
      const before = embeddings.encoded;
      const result = await canopyQuery({ queries, embeddings, branchingFactor: 2, topK: 10, rounds: 3, ...canopy }, indexDir);
      const out = { machine: machine(), phase, result, encodedTexts: embeddings.encoded - before };
      if (values.json) io.out(JSON.stringify(out));
      else {
        const q = result.query;
        io.out(`canopy, answering: ${result.documents} documents (${result.items} items); open ${q.openSeconds.toFixed(2)} s; peak RSS ${result.peakRssMiB.toFixed(0)} MiB`);
        io.out(`query ms p50/p95: cold ${q.cold.p50.toFixed(1)}/${q.cold.p95.toFixed(1)}, warm ${q.warm.p50.toFixed(1)}/${q.warm.p95.toFixed(1)}, retrieval only ${q.retrieveOnly.p50.toFixed(1)}/${q.retrieveOnly.p95.toFixed(1)}`);
        io.out(`peak RSS by stage (MiB): ${result.stages.map((s) => `${s.stage} ${s.peakRssMiB.toFixed(0)}`).join(', ')}`);
      }
      return 0;
    } finally {
      await embeddings.dispose();
    }
  }
  const originals = benchDocs(io, values.pool, values.docs === undefined ? undefined : positive(values.docs, '--docs', 1));
  const docs = values['replicate-to'] === undefined ? originals : replicateDocs(originals, Math.max(originals.length, positive(values['replicate-to'], '--replicate-to', 1)));
  const workDir = path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `corpus-${engine}-${docs.length}`));
  const peerChunkSize = positive(values['peer-chunk'], '--peer-chunk', 512);
  if (values.prepare) {
    const source = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir, cacheDir: path.join(cache, 'embeddings') });
    try {
      // Replicas repeat their originals' texts: the originals' vectors are every vector the index needs.
      const r = await prepareBenchCache({ engine, docs: originals, queries, cacheDir: path.join(workDir, 'emb'), source, branchingFactor: 2, peerChunkSize });
      io.out(values.json ? JSON.stringify({ prepared: r }) : `prepared ${r.texts} vectors in ${path.join(workDir, 'emb')} (${r.encodedTexts} encoded)`);
      return 0;
    } finally {
      await source.dispose();
    }
  }
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir, cacheDir: path.join(workDir, 'emb') });
  const repeats = nonNegative(values.repeats, '--repeats', 3);
  if (phase === 'index') {
    try {
      const result = await canopyBuild({ docs, workDir, embeddings, repeats, branchingFactor: 2, logger: cliLogger(io, verbose) });
      const out = { machine: machine(), phase, originals: originals.length, result };
      if (values.json) io.out(JSON.stringify(out));
      else {
        const r = result;
        io.out(`canopy, indexing: ${r.documents} documents (${originals.length} originals), ${r.items} items, ${r.nodes} nodes; files written in ${r.writeFilesSeconds.toFixed(1)} s; first build ${r.first.seconds.toFixed(1)} s (${r.first.encodedTexts} texts encoded)${r.warm.length > 0 ? `; warm rebuild median ${r.warmMedianSeconds.toFixed(1)} s` : ''} = ${r.docsPerSecond.toFixed(0)} docs/s; index ${(r.indexBytes / 2 ** 20).toFixed(1)} MiB in ${r.indexDir}; peak RSS ${r.peakRssMiB.toFixed(0)} MiB`);
        io.out(`peak RSS by stage (MiB): ${r.stages.map((s) => `${s.stage} ${s.peakRssMiB.toFixed(0)}`).join(', ')}`);
      }
      return 0;
    } finally {
      await embeddings.dispose();
    }
  }
  try {
    const result = await runCorpusBench({
      engine,
      docs,
      queries,
      workDir,
      embeddings,
      repeats,
      branchingFactor: 2,
      topK: 10,
      rounds: 3,
      ...canopy,
      peerChunkSize,
      peerBudget: positive(values['peer-budget'], '--peer-budget', 1000),
      logger: cliLogger(io, verbose),
    });
    const out = { machine: machine(), result };
    if (values.json) io.out(JSON.stringify(out));
    else {
      const r = result;
      io.out(`${r.engine}: ${r.documents} documents, ${r.nodes} ${r.engine === 'vectra' ? 'chunks' : 'nodes'}; first build ${r.first.seconds.toFixed(1)} s (${r.first.encodedTexts} texts encoded); warm rebuild median ${r.warmMedianSeconds.toFixed(1)} s = ${r.docsPerSecond.toFixed(0)} docs/s, ${r.nodesPerSecond.toFixed(0)} nodes/s; index ${(r.indexBytes / 2 ** 20).toFixed(1)} MiB; peak RSS ${r.peakRssMiB.toFixed(0)} MiB`);
      io.out(`query ms p50/p95: cold ${r.query.cold.p50.toFixed(0)}/${r.query.cold.p95.toFixed(0)}, warm ${r.query.warm.p50.toFixed(0)}/${r.query.warm.p95.toFixed(0)}, retrieval only ${r.query.retrieveOnly.p50.toFixed(0)}/${r.query.retrieveOnly.p95.toFixed(0)}`);
    }
    return 0;
  } finally {
    await embeddings.dispose();
  }
}

/** The compressor and node score the CANOPY flags ask for, over the default settings (the built-in profile's weights for `profile`). */
export function canopyAsk(values: Parameters<typeof compressorFlags>[0] & { fusion?: string | undefined }): { compressor: CompressorSetting; nodeScore?: NodeScoreWeights; fusion: FusionSetting } {
  const flags = compressorFlags(values);
  const s = resolveSettings(flags.settings);
  const nodeScore = flags.nodeScore ?? (s.nodeScore === 'dense' ? undefined : BUILTIN_PROFILE.nodeScore);
  return { compressor: canopyCompressor(s), ...(nodeScore ? { nodeScore } : {}), fusion: benchFusion(values.fusion) };
}

/** `--fusion`: the built-in profile's fusion (the default, as an ask runs) or the design's equal-weight RRF. */
function benchFusion(value: string | undefined): FusionSetting {
  if (value === undefined || value === 'profile') return BUILTIN_PROFILE.fusion;
  if (value === 'rrf') return RRF_EQUAL;
  throw new UsageError(`--fusion must be profile or rrf, not ${JSON.stringify(value)}`);
}


/** `--against "<flags>"`: CANOPY flags in one string, parsed as canopy ask parses them. */
function againstFlags(text: string): Parameters<typeof compressorFlags>[0] {
  try {
    return parseArgs({ args: text.trim().split(/\s+/).filter((a) => a !== ''), options: { ...compressorFlagOptions, fusion: { type: 'string' } } }).values;
  } catch (err) {
    throw new UsageError(`--against: ${(err as Error).message}`);
  }
}
