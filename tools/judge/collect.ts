/**
 * Step 1 of training the judgment models (`npm run train:judge -- collect`): every questions file
 * of the development data, found by its schema under --data (nothing is named), asked through the
 * pipeline an ask runs (its compressor as below) — the open pool with the rule critic's rounds
 * (not the critic model's, which is trained on them) where the dataset has a pool, the question's
 * own context where it has none (TAT-QA, FeTaQA), the MAGE controller inside each filing's PDF
 * (FinanceBench) — and each question's reader input, gold and critic
 * verdicts written as JSONL (`canopy eval --dump-judge`, src/eval/judgeDump.ts) into --out.
 *
 * With --docs (or `docs` in --only), also the documentation set of this repository
 * (tools/judge/docs-train: questions over the READMEs and API pages of installed npm packages that
 * sources.json lists, none of them a project of the measured documentation folder): its folder
 * built from `node_modules` under --out's parent, indexed and asked as a user's folder is in the
 * real-document benchmark (`canopy bench realdocs --docs-folder … --dump-judge`, needs `npm run
 * build`), dumped as dataset `docs`. The shipped models are not trained on it (docs/evaluation.md,
 * "Learned judgment": trained with it, its own held-back half did not gain and FinanceBench lost a
 * first citation); it measures how the reader reads documentation, and is there to train on.
 *
 *   node --import tsx tools/judge/collect.ts --data ../shared/data --out <dir> [--cache <dir>]
 *        [--only squad,nq,docs] [--docs] [--sample 600] [--seed 1]
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { detectSchema } from '../../src/eval/datasets/detect';
import { readJsonLines } from '../../src/eval/datasets/jsonl';
import { runEval, type EvalOptions } from '../../src/eval/harness';
import { runRealDocsBench } from '../../src/eval/bench/realDocs';
import { defaultSampling } from '../../src/eval/bench/realDocsCorpus';
import type { SchemaName } from '../../src/eval/datasets/types';

const repo = resolve(__dirname, '../..');

/**
 * The configuration the shipped models are trained on: the ask's default when they were first
 * trained. (Since then an ask keeps items of up to 800 characters whole, not 600 — docs/evaluation.md,
 * "Whole items up to 800 characters"; the dumps keep 600 so that a retrain reproduces the shipped
 * models.)
 */
const COMPRESSOR = 'canopy:items=0.3,whole=600,min=4,glimpse=1';
const NODE_SCORE = { dense: 1, lexical: 0.5, model: 'coverage' as const };

/** Schemas the reader trains on: questions with answers or gold evidence (SciFact's claims are no questions; annotations are the user's). */
const TRAINED: ReadonlySet<SchemaName> = new Set(['hotpotqa', '2wikimultihopqa', 'musique', 'squad', 'nq', 'tatqa', 'fetaqa', 'financebench']);

export interface FoundSet {
  schema: SchemaName;
  file: string;
}

/** Questions files under `dir`, one folder down, by the schema of their first record. */
export function findQuestionFiles(dir: string): FoundSet[] {
  const out: FoundSet[] = [];
  for (const sub of readdirSync(dir).sort()) {
    const folder = join(dir, sub);
    if (!statSync(folder).isDirectory()) continue;
    for (const name of readdirSync(folder).sort()) {
      if (!name.endsWith('.jsonl')) continue;
      const file = join(folder, name);
      let first: unknown;
      try {
        first = readJsonLines(file)[0]?.value;
      } catch {
        continue;
      }
      const d = detectSchema(first);
      if ('schema' in d && TRAINED.has(d.schema)) out.push({ schema: d.schema, file });
    }
  }
  // TAT-QA ships a dev file and part of a gold test set in one schema: both count (they are development data here).
  return out;
}

/** The documentation training set: its questions and the package READMEs they are about. */
const DOCS_TRAIN = join(repo, 'tools', 'judge', 'docs-train');

/**
 * Builds the documentation set's folder under `work` (each listed file copied from node_modules
 * to the same relative path), asks its questions warm as the real-document benchmark does, and
 * dumps each reader input to `dump`. A listed file that is not installed is an error naming it.
 */
export async function collectDocs(work: string, dump: string): Promise<void> {
  const sources = JSON.parse(readFileSync(join(DOCS_TRAIN, 'sources.json'), 'utf8')) as { files: string[] };
  rmSync(work, { recursive: true, force: true });
  const folder = join(work, 'folder');
  for (const f of sources.files) {
    const from = join(repo, 'node_modules', f);
    if (!existsSync(from)) throw new Error(`tools/judge/docs-train/sources.json: ${f} is not installed in node_modules (run npm ci)`);
    mkdirSync(dirname(join(folder, f)), { recursive: true });
    copyFileSync(from, join(folder, f));
  }
  copyFileSync(join(DOCS_TRAIN, 'questions.jsonl'), join(work, 'questions.jsonl'));
  const started = Date.now();
  await runRealDocsBench({
    work: join(work, 'run'),
    docsFolder: join(work, 'questions.jsonl'),
    dumpJudge: { file: dump, dataset: 'docs' },
    sampling: { ...defaultSampling, squadQuestions: 0, financebenchQuestions: 0 },
    cli: [process.execPath, join(repo, 'bin', 'canopy.js')],
    builtinModelDir: join(repo, 'models', 'use-lite'),
    packageRoot: repo,
    cliAsk: false,
    warm: true,
    // The rule critic's rounds, as the development sets are collected: the dump does not depend on the shipped critic model.
    ask: { settings: { criticModel: false }, cliArgs: [] },
    demo: false,
    command: 'tools/judge/collect.ts (documentation set)',
    log: (m) => process.stderr.write(`docs: ${m}\n`),
  });
  process.stderr.write(`docs: wrote ${dump} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      out: { type: 'string' },
      cache: { type: 'string' },
      only: { type: 'string' },
      sample: { type: 'string' },
      seed: { type: 'string' },
      docs: { type: 'boolean' },
    },
  });
  if (!values.data || !values.out) throw new Error('usage: collect.ts --data <dir> --out <dir> [--cache <dir>] [--only schemas] [--docs] [--sample n] [--seed n]');
  const data = resolve(values.data);
  const out = resolve(values.out);
  const cacheDir = resolve(values.cache ?? process.env.CANOPY_EVAL_CACHE ?? join(homedir(), '.cache', 'canopy-eval'));
  const only = values.only ? new Set(values.only.split(',')) : undefined;
  const sample = values.sample ? Number(values.sample) : 600;
  const seed = values.seed ? Number(values.seed) : 1;
  const sets = findQuestionFiles(data).filter((s) => !only || only.has(s.schema));
  for (const set of sets) {
    const name = `${set.schema}-${set.file.slice(data.length + 1).replace(/[/\\]/g, '_').replace(/\.jsonl$/, '')}`;
    const dump = join(out, `${name}.jsonl`);
    const financebench = set.schema === 'financebench';
    const pool = !financebench && !['tatqa', 'fetaqa'].includes(set.schema);
    const options: EvalOptions = {
      file: set.file,
      mode: pool ? 'pool' : 'given',
      topK: 10,
      rounds: 3,
      branching: 2,
      compressor: [COMPRESSOR],
      critic: pool ? 'rule' : 'none',
      // The rule critic's rounds alone: with the critic model on, the rounds it ends early would be
      // missing from the dumps its successor is trained on, and the dumps would depend on the
      // model shipped when they were collected (a retrain would not reproduce it).
      criticModel: false,
      lookAhead: true,
      retrieval: 'hybrid',
      encoder: { kind: 'builtin' },
      builtinModelDir: join(repo, 'models', 'use-lite'),
      nodeScore: NODE_SCORE,
      sample,
      dumpJudge: dump,
      seed,
      resamples: 10,
      sweep: false,
      cacheDir,
      peerChunkSize: 64,
      documentComparison: financebench,
      onProgress: (m) => process.stderr.write(`${name}: ${m}\n`),
    };
    const started = Date.now();
    await runEval(options);
    process.stderr.write(`${name}: wrote ${dump} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  }
  const docs = values.docs || only?.has('docs');
  if (docs) await collectDocs(join(dirname(out), 'docs-train'), join(out, 'docs-train.jsonl'));
  if (sets.length === 0 && !docs) process.stderr.write(`no questions files found under ${data}\n`);
  else if (!existsSync(out)) process.stderr.write(`nothing written to ${out}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
