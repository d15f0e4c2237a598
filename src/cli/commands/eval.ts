/**
 * `canopy eval <file>`: evidence-compression and retrieval metrics on any file in the schemas of
 * the data README (HotpotQA, 2WikiMultiHopQA, MuSiQue, SQuAD, SciFact, TAT-QA, FeTaQA,
 * FinanceBench) or Canopy's annotation JSONL, with paired bootstrap intervals; `--sweep` runs
 * the whole comparison table; `--plots` writes the SVG figures.
 */
import { parseCoarse, type CoarseSpec } from '../../eval/datasets/coarse';
import { extraTopicVariants, topicVariants, type TopicVariant } from '../../eval/topicsAblation';
import { writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { BRANCHING_FACTOR, MAX_ROUNDS, TOP_K } from '../../contracts/askSettings';
import type { CriticChoice } from '../../eval/configs';
import { parseEvalCompressor } from '../../eval/configs';
import { defaultControllerOptions, resolveControllerOptions, type ControllerOptions } from '../../core/controller/options';
import { defaultSettings } from '../../core/config/settings';
import { BUILTIN_PROFILE } from '../../core/retrieve/profile';
import { parseRetrieval, runEval, type EvalMode, type EvalOptions, type RetrievalChoice } from '../../eval/harness';
import { renderReport, writePlots } from '../../eval/render';
import { llmFromEnv } from '../llm';
import { type CliIO, UsageError } from '../io';
import { parseNodeScore } from '../compressorFlags';
import { cliLogger, lookAheadSetting, packageRoot } from '../runtime';

/** The compressor `canopy ask` runs by default (the canopy.compressor.* settings' defaults), as an eval compressor. */
export const ASK_COMPRESSOR = `canopy:items=${defaultSettings.compressorItems},whole=${defaultSettings.compressorWholeBelow},min=${defaultSettings.compressorMinItems},glimpse=${defaultSettings.compressorGlimpse}`;

export const evalHelp = `Usage: canopy eval <file> [options]

Measure evidence compression and retrieval on a dataset file (HotpotQA, 2WikiMultiHopQA,
MuSiQue, SQuAD questions, SciFact queries, TAT-QA, FeTaQA, FinanceBench, or Canopy's own
annotation JSONL). The schema is detected; pools, corpora and qrels are found beside the file.

Modes:
  --mode given           the question's own paragraphs / table / PDF are the retrieved items (default)
  --mode pool            index the open pool beside the file (cached) and retrieve with the
                         hybrid retriever and critic rounds

FinanceBench (given mode, without --compressor or --sweep) compares evidence chosen inside each
question's PDF: page top-k (k = 1, 3, 5), CANOPY over those pages, and the MAGE controller, with
the controller's trace statistics (the controller uses the LLM evaluator with --reader llm).
  --controller-options <k=v,…>  controller budgets/options beyond the defaults, e.g.
                         maxOpenedNodes=5,maxIterations=6 (names as in docs/controller.md)

Options:
  -k, --top-k <n>        items per round (default 10)
  --rounds <n>           most rounds in pool mode (default 3)
  --no-critic-model      pool mode: the rule critic's verdict alone (without it, the critic model ends
                         the rounds where the rule would ask again but the evidence very likely
                         holds the answer: canopy.critic.model)
  --look-ahead           pool mode: the rule critic looks at what a follow-up query would retrieve
                         first (canopy.critic.lookAhead, the default); --no-look-ahead: it does not
  --branching <B>        branching factor 2–4 (default 2)
  --compressor <c>       none | flat:<m> | threshold:<t> | canopy[:gate=<g>,items=<share>,whole=<characters>,
                         min=<items>,glimpse=<leaves>,floor=<share 0–1>,margin=<δ>,groups=encoded,
                         nodes=text|prefix|children]
                         | peer; repeat it to compare several side by side (default: what canopy ask
                         runs, ${ASK_COMPRESSOR}; "canopy" alone is the design's plain rule)
  --critic <c>           none | rule | llm (pool mode; default rule)
  --retrieval <r>        hybrid (the encoder's retrieval profile; default) | hybrid:rrf (equal-weight RRF)
                         | dense | bm25 (pool mode); hybrid:bm25=<w> (RRF, BM25 weighted w) or
                         hybrid:linear=<w>[,flat=<f>] ((1 − f) × BM25 + f × flat BM25 + w × cosine,
                         normalised) are measured variants
  --sweep                run the whole comparison (baselines, CANOPY variants, the vectra peer)
  --topics <v>[,<v>…]    pool mode: topic compass off | control | noselect | noabstract | full | leaves
                         (docs/topics.md; control = the scorer without topic features); scorers
                         train on a seeded split of the questions, figures are on the rest
  --topics-ablation      pool mode: all topic variants side by side (held-back questions)
  --topics-holdout <s>   share of questions held back for the topic evaluation (default 0.5)
  --pool-chunks <g>      pool mode: coarse items — title (one per title), title:N (N documents of
                         one title), N (runs of N documents); docs/topics.md
  --flat-m <list>        sweep: flat top-m values (default 3,5,10,15,20,30,40,60)
  --thresholds <list>    sweep: threshold values (default 0.3,0.4)
  --branchings <list>    sweep (given mode): B values (default 2,3,4)
  --gate <g>[,<g>…]      sweep: item-gate margin(s) (default 0.1)
  --skip-peer            sweep: leave out the vectra peer
  --margins <list>       sweep (given mode): CANOPY descend margins measured (default 0.05)
  --skip-variants        sweep: leave out the measured CANOPY variants (encoded groups, margins)
  --encoder <e>          builtin (default) or a Hugging Face ONNX folder
  --adapter <file>       node-encoder adapter checkpoint (canopy train): node scores go through it
  --node-score dense=<w>,lexical=<w>[,model=coverage] | dense
                         node score weights for every configuration (default: as canopy ask — the
                         built-in encoder's profile, dense=1,lexical=0.5,model=coverage; another
                         encoder: the dense cosine alone; "dense" for the cosine alone)
  --reader <r>           extractive (default; no EM/F1) | llm (CANOPY_LLM_BASE_URL, CANOPY_LLM_MODEL,
                         CANOPY_LLM_API_KEY): EM/F1 with HotpotQA normalisation
  --limit <n>            the first n questions only
  --sample <n>           a seeded sample of n questions (--seed), in file order
  --dump-judge <file>    write each question's reader input, gold and critic verdicts as JSONL
                         (the first configuration), for training the reader and critic models
                         (tools/judge)
  --seed <n>             bootstrap seed (default 1)
  --resamples <n>        bootstrap resamples (default 1000)
  --cache <dir>          embedding and index cache (default $CANOPY_EVAL_CACHE or ~/.cache/canopy-eval)
  --root <dir>           annotation files: the workspace their paths are relative to
  --peer-chunk <n>       the peer's vectra chunk size in tokens (default 64)
  --peer-bm25            pool mode: let the peer add vectra's BM25 chunks (slow on large pools)
  --plots <dir>          write SVG figures there (eval-<schema>-<mode>-*.svg)
  --plot-prefix <name>   file name prefix of the figures
  --out <file>           also write the JSON report to a file
  --json                 print the JSON report instead of tables`;

function int(value: string | undefined, flag: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`);
  return n;
}

function list(value: string | undefined, flag: string, parse: (s: string) => number): number[] | undefined {
  if (value === undefined) return undefined;
  const xs = value.split(',').map((s) => parse(s.trim()));
  if (xs.length === 0 || xs.some((x) => !Number.isFinite(x))) throw new UsageError(`${flag} must be a comma-separated list of numbers`);
  return xs;
}

/** `maxOpenedNodes=5,project=false,…` → controller options (numbers and booleans; validated by the controller). */
function controllerOptions(value: string): Partial<ControllerOptions> {
  const out: Record<string, number | boolean | string> = {};
  for (const part of value.split(',').map((x) => x.trim()).filter((x) => x)) {
    const m = /^([A-Za-z]+)=(.+)$/.exec(part);
    if (!m || !(m[1]! in defaultControllerOptions)) throw new UsageError(`--controller-options: "${part}" is not <option>=<value> with an option of docs/controller.md`);
    const v = m[2]!;
    out[m[1]!] = v === 'true' ? true : v === 'false' ? false : /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  }
  try {
    resolveControllerOptions(out as Partial<ControllerOptions>);
  } catch (err) {
    throw new UsageError(`--controller-options: ${(err as Error).message}`);
  }
  return out as Partial<ControllerOptions>;
}

export async function runEvalCommand(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      mode: { type: 'string' },
      'top-k': { type: 'string', short: 'k' },
      rounds: { type: 'string' },
      'look-ahead': { type: 'boolean' },
      'no-look-ahead': { type: 'boolean' },
      branching: { type: 'string' },
      compressor: { type: 'string', multiple: true },
      critic: { type: 'string' },
      retrieval: { type: 'string' },
      sweep: { type: 'boolean' },
      topics: { type: 'string' },
      'topics-ablation': { type: 'boolean' },
      'controller-options': { type: 'string' },
      'topics-holdout': { type: 'string' },
      'pool-chunks': { type: 'string' },
      'flat-m': { type: 'string' },
      thresholds: { type: 'string' },
      branchings: { type: 'string' },
      gate: { type: 'string' },
      margins: { type: 'string' },
      'skip-variants': { type: 'boolean' },
      'skip-peer': { type: 'boolean' },
      encoder: { type: 'string' },
      adapter: { type: 'string' },
      'node-score': { type: 'string' },
      reader: { type: 'string' },
      limit: { type: 'string' },
      sample: { type: 'string' },
      'dump-judge': { type: 'string' },
      'no-critic-model': { type: 'boolean' },
      seed: { type: 'string' },
      resamples: { type: 'string' },
      cache: { type: 'string' },
      root: { type: 'string' },
      'peer-chunk': { type: 'string' },
      'peer-bm25': { type: 'boolean' },
      plots: { type: 'string' },
      'plot-prefix': { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'eval needs a dataset file' : `eval takes one file, got ${positionals.length}`);
  const mode = (values.mode ?? 'given') as EvalMode;
  if (mode !== 'given' && mode !== 'pool') throw new UsageError('--mode must be given or pool');
  const critic = (values.critic ?? (mode === 'pool' ? 'rule' : 'none')) as CriticChoice;
  if (!['none', 'rule', 'llm'].includes(critic)) throw new UsageError('--critic must be none, rule or llm');
  const retrieval = (values.retrieval ?? 'hybrid') as RetrievalChoice;
  if (!parseRetrieval(retrieval)) throw new UsageError('--retrieval must be hybrid, hybrid:rrf, dense, bm25, hybrid:bm25=<weight> or hybrid:linear=<weight>[,flat=<share>]');
  const reader = values.reader ?? 'extractive';
  const topics = values.topics === undefined ? undefined : (values.topics.split(',').map((t) => t.trim()) as TopicVariant[]);
  if (topics !== undefined && topics.some((t) => ![...topicVariants, ...extraTopicVariants].includes(t))) throw new UsageError(`--topics must be one of ${[...topicVariants, ...extraTopicVariants].join(', ')}, or several joined by commas`);
  const topicsHoldout = values['topics-holdout'] !== undefined ? Number(values['topics-holdout']) : undefined;
  if (topicsHoldout !== undefined && !(topicsHoldout > 0 && topicsHoldout < 1)) throw new UsageError('--topics-holdout must be a share between 0 and 1');
  let poolChunks: CoarseSpec | undefined;
  if (values['pool-chunks'] !== undefined) {
    try {
      poolChunks = parseCoarse(values['pool-chunks']);
    } catch (err) {
      throw new UsageError(`--pool-chunks: ${(err as Error).message}`);
    }
  }
  if (reader !== 'extractive' && reader !== 'llm') throw new UsageError('--reader must be extractive or llm');
  const compressor = values.compressor ?? [ASK_COMPRESSOR];
  try {
    compressor.forEach((c) => parseEvalCompressor(c));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const encoder = values.encoder === undefined || values.encoder === 'builtin' ? ({ kind: 'builtin' } as const) : ({ kind: 'onnx-folder', path: path.resolve(io.cwd, values.encoder) } as const);
  const llm = reader === 'llm' || critic === 'llm' ? llmFromEnv(io.env, '--reader llm / --critic llm') : undefined;
  const sweepOptions = {
    ...(list(values['flat-m'], '--flat-m', Number) ? { flatM: list(values['flat-m'], '--flat-m', Number)! } : {}),
    ...(list(values.thresholds, '--thresholds', Number) ? { thresholds: list(values.thresholds, '--thresholds', Number)! } : {}),
    ...(list(values.branchings, '--branchings', Number) ? { branchings: list(values.branchings, '--branchings', Number)! } : {}),
    ...(values.gate !== undefined ? { gate: Number(values.gate.split(',')[0]), moreGates: values.gate.split(',').slice(1).map(Number) } : {}),
    ...(values['skip-peer'] ? { peer: false } : {}),
    ...(list(values.margins, '--margins', Number) ? { margins: list(values.margins, '--margins', Number)! } : {}),
    ...(values['skip-variants'] ? { variants: false } : {}),
  };
  if (sweepOptions.branchings?.some((b) => b < BRANCHING_FACTOR.min || b > BRANCHING_FACTOR.max || !Number.isInteger(b))) {
    throw new UsageError(`--branchings must be integers from ${BRANCHING_FACTOR.min} to ${BRANCHING_FACTOR.max}`);
  }
  if (sweepOptions.gate !== undefined && (!(sweepOptions.gate >= 0) || (sweepOptions.moreGates ?? []).some((g) => !(g >= 0)))) throw new UsageError('--gate must be non-negative numbers');
  const cacheDir = path.resolve(io.cwd, values.cache ?? io.env.CANOPY_EVAL_CACHE ?? path.join(homedir(), '.cache', 'canopy-eval'));
  const options: EvalOptions = {
    file: path.resolve(io.cwd, positionals[0]!),
    mode,
    topK: int(values['top-k'], '--top-k', 10, TOP_K.min, TOP_K.max),
    rounds: int(values.rounds, '--rounds', 3, MAX_ROUNDS.min, MAX_ROUNDS.max),
    branching: int(values.branching, '--branching', 2, BRANCHING_FACTOR.min, BRANCHING_FACTOR.max),
    compressor,
    critic,
    lookAhead: lookAheadSetting(values['look-ahead'], values['no-look-ahead']).criticLookAhead ?? true,
    criticModel: values['no-critic-model'] !== true,
    retrieval,
    encoder,
    builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'),
    ...(values.adapter ? { adapter: path.resolve(io.cwd, values.adapter) } : {}),
    ...(values['node-score'] === 'dense'
      ? {}
      : values['node-score']
        ? { nodeScore: parseNodeScore(values['node-score']) }
        : encoder.kind === 'builtin'
          ? { nodeScore: { ...BUILTIN_PROFILE.nodeScore! } }
          : {}),
    ...(values.limit ? { limit: int(values.limit, '--limit', 0) } : {}),
    ...(values.sample ? { sample: int(values.sample, '--sample', 0, 1) } : {}),
    ...(values['dump-judge'] ? { dumpJudge: path.resolve(io.cwd, values['dump-judge']) } : {}),
    seed: int(values.seed, '--seed', 1, 0),
    resamples: int(values.resamples, '--resamples', 1000, 10, 100_000),
    sweep: values.sweep ?? false,
    sweepOptions,
    cacheDir,
    ...(values.root ? { root: path.resolve(io.cwd, values.root) } : {}),
    peerChunkSize: int(values['peer-chunk'], '--peer-chunk', 64, 8, 8192),
    peerBm25: values['peer-bm25'] ?? false,
    // FinanceBench in the given mode: page top-k vs CANOPY vs the MAGE controller, unless a compressor or the sweep is asked for.
    documentComparison: values.sweep !== true && values.compressor === undefined,
    ...(values['controller-options'] ? { controllerOptions: controllerOptions(values['controller-options']) } : {}),
    ...(topics ? { topics } : {}),
    ...(values['topics-ablation'] ? { topicsAblation: true } : {}),
    ...(topicsHoldout !== undefined ? { topicsHoldout } : {}),
    ...(poolChunks ? { poolChunks } : {}),
    ...(llm ? { llm } : {}),
    logger: cliLogger(io, values.verbose ?? false),
    onProgress: (m) => io.err(`eval: ${m}`),
  };
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    const report = await runEval({ ...options, signal: abort.signal });
    if (values.out) writeFileSync(path.resolve(io.cwd, values.out), `${JSON.stringify(report, null, 1)}\n`);
    if (values.plots) {
      const prefix = values['plot-prefix'] ?? `eval-${report.dataset.schema}-${report.mode}`;
      for (const f of writePlots(report, path.resolve(io.cwd, values.plots), prefix)) io.err(`eval: wrote ${f}`);
    }
    if (values.json) io.out(JSON.stringify(report));
    else for (const line of renderReport(report)) io.out(line);
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** `dense=1,lexical=0.5` → node score weights; a user mistake is E_BAD_INPUT naming the flag. */
