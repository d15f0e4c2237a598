/**
 * `canopy bench encode`: throughput of the built-in encoder (sentences/s) at ~20 and ~128
 * pieces for several batch sizes, and the cost of everything around the model — the ratio of
 * the full pipeline (normalise + tokenise + window + batch + infer + split/combine) to bare
 * `InferenceSession.run` calls on the same, pre-built batches. Medians of repeated runs, the
 * pipeline and bare runs interleaved so machine noise hits both alike.
 */
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { planBatches } from '../../core/encode/onnxRuntime';
import { UseLiteEncoder } from '../../core/encode/useLiteEncoder';
import { UsageError } from '../io';
import { seededRandom } from '../../core/random';

export const benchEncodeHelp = `Usage: canopy bench encode [options]

Measure the built-in encoder: sentences/s and pipeline/raw-inference time ratio.

Options:
  --model-dir <dir>    folder with the built-in model (default: <package>/models/use-lite)
  --batches <list>     batch sizes, comma-separated (default 1,8,32,64)
  --pieces <list>      sentence lengths in pieces (default 20,128)
  --sentences <n>      sentences encoded per timed run (default 64)
  --repeats <n>        timed runs per measurement; the median is reported (default 7)
  --threads <n>        onnxruntime intra-op threads (default 1)
  --json               print one JSON object instead of a Markdown table`;

export interface BenchRow {
  pieces: number;
  batch: number;
  sentences: number;
  /** Wall-clock throughput (median run). */
  pipelineSentencesPerSec: number;
  rawSentencesPerSec: number;
  pipelineMs: number;
  rawMs: number;
  /** Median over runs of pipeline wall time / bare-run wall time (paired per batch). */
  ratio: number;
  /** The same ratio in process CPU time (user + system, all threads), which other load on the machine disturbs far less. */
  cpuRatio: number;
  /** Median ms of the pipeline's own work without inference (tokenise, window, batch, build inputs, split outputs). */
  jsMs: number;
  /** (bare run + JS work) / bare run: the ratio the parts predict, measured separately so machine noise cancels less badly. */
  predictedRatio: number;
}

// Common English words; sentences are drawn from them with a fixed seed so runs are comparable.
const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they ' +
  'you were her she there would their we him been has when who will more no if out so said what up its about ' +
  'into than them can only other new some could time these two may then do first any my now such like our over ' +
  'man me even most made after also did many before must through back years where much your way well down ' +
  'should because each just those people how too little state good very make world still own see men work long ' +
  'get here between both life being under never day same another know while last might us great old year off ' +
  'come since against go came right used take three states himself few house use during without again place ' +
  'american around however home small found thought went say part once general high upon school every does ' +
  'got united left number course war until always away something fact though water less public put think ' +
  'almost hand enough far took head yet government system better set told nothing night end why called ' +
  'didn eyes find going look asked later knew point next program city business give group toward young let ' +
  'room president side social given present several order national possible rather second face per among ' +
  'form important often things looked early white case john become large big need four within felt along ' +
  'children saw best church ever least power development light thing seemed family interest want members'
).split(' ');

/** `count` sentences of at most `pieces` pieces each (as close to it as whole words allow). */
export function makeSentences(encoder: UseLiteEncoder, pieces: number, count: number, seed = 1): string[] {
  const next = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const words: string[] = [];
    let text = '';
    for (;;) {
      words.push(WORDS[Math.floor(next() * WORDS.length)] as string);
      const joined = `${words.join(' ')}.`;
      const candidate = `${joined.charAt(0).toUpperCase()}${joined.slice(1)}`;
      if (encoder.countPieces(candidate) > pieces) break;
      text = candidate;
    }
    out.push(text);
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function intList(value: string | undefined, fallback: number[], flag: string): number[] {
  if (value === undefined) return fallback;
  const xs = value.split(',').map((v) => Number(v.trim()));
  if (xs.length === 0 || xs.some((x) => !Number.isInteger(x) || x < 1)) throw new UsageError(`${flag} must be a comma-separated list of positive integers`);
  return xs;
}

function positiveInt(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
  return n;
}

/** The package's models/use-lite: next to dist/ when bundled, else found walking up from the working folder. */
export function defaultModelDir(): string {
  const starts = [typeof __dirname === 'string' ? __dirname : undefined, process.cwd()].filter((s): s is string => s !== undefined);
  for (const start of starts) {
    let dir = resolve(start);
    for (;;) {
      const candidate = join(dir, 'models', 'use-lite');
      if (existsSync(join(candidate, 'manifest.json'))) return candidate;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return join(process.cwd(), 'models', 'use-lite');
}

interface Timing {
  wall: number;
  cpu: number;
}

/** Wall and process CPU milliseconds of one call. */
async function timed(fn: () => Promise<unknown>): Promise<Timing> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

interface Measured {
  pipelineMs: number;
  rawMs: number;
  ratio: number;
  cpuRatio: number;
  jsMs: number;
}

/**
 * Times the texts in chunks of `batch`: per chunk, the full pipeline (`encodeBatched`) and bare
 * `session.run` on that chunk's pre-built inputs, back to back (order alternating), so both
 * see the same machine conditions; other processes on a shared machine otherwise swamp the
 * difference. Per run the chunk times are summed; medians over runs are reported, the ratios
 * as the median of per-run ratios.
 */
async function measure(encoder: UseLiteEncoder, texts: string[], batch: number, repeats: number): Promise<Measured> {
  const chunks: string[][] = [];
  for (let i = 0; i < texts.length; i += batch) chunks.push(texts.slice(i, i + batch));
  // The bare runs get exactly the batches the pipeline builds, prepared before timing.
  const feeds = chunks.map((chunk) => {
    const ws = chunk.flatMap((t) => encoder.windows(t));
    return planBatches(
      ws.map((w) => w.length),
      batch,
    ).map((b) => encoder.buildFeed(b.map((i) => ws[i] as number[])));
  });
  const raw = (k: number): Promise<Timing> =>
    timed(async () => {
      for (const feed of feeds[k] ?? []) await encoder.session.run(feed);
    });
  const pipeline = (k: number): Promise<Timing> => timed(() => encoder.encodeBatched(chunks[k] ?? [], batch));
  // Everything the pipeline does besides session.run, on a fake output of the right size.
  const jsOnly = (k: number): Promise<Timing> =>
    timed(async () => {
      const ws = (chunks[k] ?? []).flatMap((t) => encoder.windows(t));
      for (const b of planBatches(
        ws.map((w) => w.length),
        batch,
      )) {
        encoder.buildFeed(b.map((i) => ws[i] as number[]));
        const fake = new Float32Array(b.length * encoder.dim);
        b.forEach((_, j) => fake.slice(j * encoder.dim, (j + 1) * encoder.dim));
      }
    });
  // Warm-up.
  await raw(0);
  await pipeline(0);
  const runs: { p: Timing; r: Timing; js: number }[] = [];
  for (let rep = 0; rep < repeats; rep++) {
    const sum = { p: { wall: 0, cpu: 0 }, r: { wall: 0, cpu: 0 }, js: 0 };
    for (let k = 0; k < chunks.length; k++) {
      const first = (rep + k) % 2 === 0;
      const a = first ? await pipeline(k) : await raw(k);
      const b = first ? await raw(k) : await pipeline(k);
      const [p, r] = first ? [a, b] : [b, a];
      sum.p.wall += p.wall;
      sum.p.cpu += p.cpu;
      sum.r.wall += r.wall;
      sum.r.cpu += r.cpu;
      sum.js += (await jsOnly(k)).wall;
    }
    runs.push(sum);
  }
  return {
    pipelineMs: median(runs.map((x) => x.p.wall)),
    rawMs: median(runs.map((x) => x.r.wall)),
    ratio: median(runs.map((x) => x.p.wall / x.r.wall)),
    cpuRatio: median(runs.map((x) => x.p.cpu / x.r.cpu)),
    jsMs: median(runs.map((x) => x.js)),
  };
}

export async function runBenchEncode(args: string[], out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'model-dir': { type: 'string' },
      batches: { type: 'string' },
      pieces: { type: 'string' },
      sentences: { type: 'string' },
      repeats: { type: 'string' },
      threads: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  // Accept both `canopy bench encode ...` (dispatcher passes ['encode', ...]) and the bare options.
  const extra = positionals[0] === 'encode' ? positionals.slice(1) : positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const batches = intList(values.batches, [1, 8, 32, 64], '--batches');
  const lengths = intList(values.pieces, [20, 128], '--pieces');
  const count = positiveInt(values.sentences, 64, '--sentences');
  const repeats = positiveInt(values.repeats, 7, '--repeats');
  const threads = positiveInt(values.threads, 1, '--threads');
  const modelDir = values['model-dir'] ? resolve(values['model-dir']) : defaultModelDir();

  const encoder = await UseLiteEncoder.create({ modelDir, intraOpNumThreads: threads });
  const rows: BenchRow[] = [];
  try {
    for (const pieces of lengths) {
      if (pieces > encoder.maxPieces) throw new UsageError(`--pieces ${pieces} is over the model's ${encoder.maxPieces}-piece window`);
      const texts = makeSentences(encoder, pieces, count);
      const meanPieces = texts.reduce((a, t) => a + encoder.countPieces(t), 0) / texts.length;
      for (const batch of batches) {
        const { pipelineMs, rawMs, ratio, cpuRatio, jsMs } = await measure(encoder, texts, batch, repeats);
        rows.push({
          pieces: Math.round(meanPieces * 10) / 10,
          batch,
          sentences: count,
          pipelineSentencesPerSec: (count * 1000) / pipelineMs,
          rawSentencesPerSec: (count * 1000) / rawMs,
          pipelineMs,
          rawMs,
          ratio,
          cpuRatio,
          jsMs,
          predictedRatio: (rawMs + jsMs) / rawMs,
        });
      }
    }
  } finally {
    await encoder.dispose();
  }

  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    threads,
    repeats,
    encoder: encoder.id,
  };
  if (values.json) {
    out(JSON.stringify({ machine, results: rows }));
    return 0;
  }
  out(`Encoder ${machine.encoder}; ${machine.cpus} cores (${machine.cpuModel}), Node ${machine.node}, ${threads} intra-op thread(s), load ${machine.loadAverage1m}; median of ${repeats} runs of ${count} sentences.`);
  out('');
  out('| pieces/sentence | batch | pipeline sentences/s | bare run sentences/s | pipeline / bare (wall) | pipeline / bare (CPU time) | JS-side ms per run | (bare + JS) / bare |');
  out('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    out(
      `| ${r.pieces} | ${r.batch} | ${r.pipelineSentencesPerSec.toFixed(0)} | ${r.rawSentencesPerSec.toFixed(0)} | ${r.ratio.toFixed(3)} | ${r.cpuRatio.toFixed(3)} | ${r.jsMs.toFixed(1)} | ${r.predictedRatio.toFixed(3)} |`,
    );
  }
  return 0;
}
