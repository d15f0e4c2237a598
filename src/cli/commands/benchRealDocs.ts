/**
 * `canopy bench realdocs`: the real-document benchmark of issue 16 (src/eval/bench/realDocs.ts)
 * — FinanceBench filings, SQuAD articles as Markdown and Canopy's docs in one folder; index
 * time, cold (`canopy ask` process) and warm (in-process) latency, rounds, kept tokens, gold
 * answer, gold citation and gold evidence; a Markdown table, a JSON report, and a comparison
 * with an earlier report. Issue 32 adds NQ's passages (with a flat BM25 baseline) and a
 * documentation folder, each on a corpus of its own, on by default when the data has them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { REALDOCS_SCHEMA, runRealDocsBench, type RealDocsReport } from '../../eval/bench/realDocs';
import { defaultSampling, findRealDocsInputs, type RealDocsInputs } from '../../eval/bench/realDocsCorpus';
import { compareRealDocs, renderRealDocsMarkdown, renderRealDocsQuestions, replaceRealDocsSection } from '../../eval/bench/realDocsReport';
import { compressorFlagArgs, compressorFlagOptions, compressorFlags, compressorFlagsHelp } from '../compressorFlags';
import { type CliIO, UsageError } from '../io';
import { criticModelSetting, lookAheadSetting, packageRoot, profilesSetting } from '../runtime';
import { evalCacheDir, positive } from './benchShared';

/** NQ questions asked through a `canopy ask` process too, by default (a seeded sample of those asked warm). */
const DEFAULT_NQ_CLI = 50;

export const benchRealDocsHelp = `Usage: canopy bench realdocs --data <dir> [options]

Real-document benchmark (issue 16): FinanceBench PDFs, SQuAD articles written as Markdown and
Canopy's own docs in one folder (built under --work, never in the repository); measures index
time, the whole "canopy ask" process per question, a warm in-process ask, rounds, kept tokens,
gold answer in the answer, gold paragraph / page cited and kept. Prints a Markdown table.
Two more sources, each in a corpus and index of its own (issue 32), on when the data has them:
NQ-open's passages, one Markdown file each, with every question asked warm, a seeded sample
through "canopy ask", and a flat BM25 baseline at equal tokens; and a documentation folder
copied as it is, with its questions asked cold and warm.

Options:
  --data <dir>             find the FinanceBench, SQuAD, NQ and documentation-folder question files
                           under <dir> by their fields
  --financebench <file>    FinanceBench questions (pdf_file relative to it); overrides --data
  --squad <file>           SQuAD questions (articles.jsonl beside it); overrides --data
  --nq <file>              NQ-open questions ({_id, text, answers, gold_passage_id}; the passages file
                           beside them is found by its fields); overrides --data
  --no-nq                  no NQ sample
  --nq-questions <n>       NQ questions asked warm (default: all; fewer: a seeded sample; 0 = no NQ sample)
  --nq-cli <n>             of those, asked through a "canopy ask" process too (seeded; default ${DEFAULT_NQ_CLI}; 0 = none)
  --docs-folder <file>     a documentation folder's questions ({question, answers, file}; the folder
                           beside them holding every file); overrides --data
  --no-docs-folder         no documentation folder
  --dump-judge <file>      write the documentation folder's warm asks (reader input, gold leaves of
                           its file, rounds) as judge-model training data (tools/judge)
  --docs <dir>             documentation copied into the corpus (default: Canopy's docs/)
  --no-docs                no documentation in the corpus
  --articles <n>           SQuAD articles in the corpus (default ${defaultSampling.squadArticles})
  --squad-questions <n>    SQuAD questions (default ${defaultSampling.squadQuestions}; 0 = none)
  --fb-questions <n>       FinanceBench questions (default ${defaultSampling.financebenchQuestions}; 0 = none)
  --questions <n>          total questions, split 3 : 2 between SQuAD and FinanceBench
  --seed <n>               sampling seed (default ${defaultSampling.seed})
  --work <dir>             work folder: corpus/, index/, nq/, docs-folder/, demo-index/ (default <cache>/bench/realdocs)
  --cache <dir>            cache root (default ~/.cache/canopy-eval)
  --reuse-index            keep the index of an earlier run in --work (no index times)
  --no-warm                skip the warm in-process asks
  --cli-of <checkout>      index and ask through another built checkout's bin/canopy.js (an earlier
                           commit, say) instead of this one's; needs --no-warm (warm asks run this build)
  --no-cli-ask             skip the per-question "canopy ask" processes
  --no-demo                skip "npm run demo"'s question
  --look-ahead             the rule critic's look-ahead in every ask (the default);
  --no-look-ahead          every ask without it (canopy ask --no-look-ahead)
  --no-critic-model        every ask with the rule critic's verdict alone (canopy ask --no-critic-model)
  --no-profiles            every ask reading documents as fitting no profile (canopy ask --no-profiles)
  CANOPY in every ask (as canopy ask's flags and the canopy.compressor.* settings):
${compressorFlagsHelp}
  --out <file>             write the JSON report (per-question rows) here
  --markdown <file>        write the table into this Markdown file's real-document section (e.g. BENCHMARKS.md)
  --compare <before.json>  print each figure before → after against an earlier report
  --per-question           also print one row per question (answer, citation [1], critic verdicts, flags)
  --from <report.json>     do not run: print (and --markdown / --compare) an existing report
  --json                   print the JSON report instead of the table`;

function count(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number`);
  return n;
}

function readReport(file: string): RealDocsReport {
  let r: RealDocsReport;
  try {
    r = JSON.parse(readFileSync(file, 'utf8')) as RealDocsReport;
  } catch (err) {
    throw new UsageError(`${file}: not a readable JSON report (${(err as Error).message})`);
  }
  if (r?.schema !== REALDOCS_SCHEMA || r.version !== 1) throw new UsageError(`${file}: not a real-document benchmark report (schema ${REALDOCS_SCHEMA}, version 1)`);
  return r;
}

export async function runBenchRealDocs(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      financebench: { type: 'string' },
      squad: { type: 'string' },
      nq: { type: 'string' },
      'no-nq': { type: 'boolean' },
      'nq-questions': { type: 'string' },
      'nq-cli': { type: 'string' },
      'docs-folder': { type: 'string' },
      'no-docs-folder': { type: 'boolean' },
      'dump-judge': { type: 'string' },
      docs: { type: 'string' },
      'no-docs': { type: 'boolean' },
      articles: { type: 'string' },
      'squad-questions': { type: 'string' },
      'fb-questions': { type: 'string' },
      questions: { type: 'string' },
      seed: { type: 'string' },
      work: { type: 'string' },
      cache: { type: 'string' },
      'reuse-index': { type: 'boolean' },
      'no-warm': { type: 'boolean' },
      'cli-of': { type: 'string' },
      'no-cli-ask': { type: 'boolean' },
      'no-demo': { type: 'boolean' },
      'look-ahead': { type: 'boolean' },
      'no-look-ahead': { type: 'boolean' },
      'no-critic-model': { type: 'boolean' },
      'no-profiles': { type: 'boolean' },
      out: { type: 'string' },
      markdown: { type: 'string' },
      compare: { type: 'string' },
      from: { type: 'string' },
      json: { type: 'boolean' },
      'per-question': { type: 'boolean' },
      ...compressorFlagOptions,
    },
  });
  const abs = (p: string) => path.resolve(io.cwd, p);
  const before = values.compare ? readReport(abs(values.compare)) : undefined;
  let report: RealDocsReport;
  if (values.from) report = readReport(abs(values.from));
  else {
    if (values.data && !existsSync(abs(values.data))) throw new UsageError(`--data: no folder ${abs(values.data)}`);
    const found: RealDocsInputs = values.data ? findRealDocsInputs(abs(values.data)) : { notes: [] };
    const given = (flag: string | undefined) => {
      if (flag === undefined) return undefined;
      if (!existsSync(abs(flag))) throw new UsageError(`no file ${abs(flag)}`);
      return abs(flag);
    };
    const financebench = given(values.financebench) ?? found.financebench;
    const squad = given(values.squad) ?? found.squad;
    const nqFile = values['no-nq'] ? undefined : (given(values.nq) ?? found.nq);
    const docsFolder = values['no-docs-folder'] ? undefined : (given(values['docs-folder']) ?? found.docsFolder);
    if (values['dump-judge'] && (!docsFolder || values['no-warm'])) throw new UsageError('--dump-judge writes the documentation folder\'s warm asks: it needs a documentation folder and the warm asks (no --no-warm)');
    if (!financebench && !squad && !nqFile && !docsFolder) throw new UsageError('give the data folder with --data <dir> (or --financebench, --squad, --nq or --docs-folder <file>)');
    for (const n of found.notes) io.err(`realdocs: ${n}`);
    const total = values.questions === undefined ? undefined : positive(values.questions, '--questions', 25);
    const squadQ = count(values['squad-questions'], '--squad-questions', total === undefined ? defaultSampling.squadQuestions : Math.round((total * 3) / 5));
    const fbQ = count(values['fb-questions'], '--fb-questions', total === undefined ? defaultSampling.financebenchQuestions : total - Math.round((total * 3) / 5));
    const canopy = compressorFlags(values);
    const root = packageRoot();
    const cliRoot = values['cli-of'] ? abs(values['cli-of']) : root;
    if (values['cli-of'] && values['no-warm'] !== true) throw new UsageError('--cli-of needs --no-warm: the warm asks run this build, not the other checkout');
    const bin = path.join(cliRoot, 'bin', 'canopy.js');
    if (!existsSync(path.join(cliRoot, 'dist', 'cli.js'))) throw new UsageError(`the benchmark runs the built CLI (${bin}); run "npm run build"${cliRoot === root ? '' : ` in ${cliRoot}`} first`);
    const nqQuestions = values['nq-questions'] === undefined ? undefined : count(values['nq-questions'], '--nq-questions', 0);
    const docs = values['no-docs'] ? undefined : values.docs ? abs(values.docs) : path.join(root, 'docs');
    const work = abs(values.work ?? path.join(evalCacheDir(io, values.cache), 'bench', 'realdocs'));
    report = await runRealDocsBench({
      work,
      ...(financebench ? { financebench } : {}),
      ...(squad ? { squad } : {}),
      ...(docs ? { docs } : {}),
      ...(nqFile && nqQuestions !== 0 ? { nq: { queries: nqFile, ...(nqQuestions !== undefined ? { questions: nqQuestions } : {}), cliQuestions: count(values['nq-cli'], '--nq-cli', DEFAULT_NQ_CLI) } } : {}),
      ...(docsFolder ? { docsFolder } : {}),
      ...(values['dump-judge'] ? { dumpJudge: { file: abs(values['dump-judge']), dataset: 'docs' } } : {}),
      sampling: {
        seed: count(values.seed, '--seed', defaultSampling.seed),
        squadArticles: count(values.articles, '--articles', defaultSampling.squadArticles),
        squadQuestions: squadQ,
        financebenchQuestions: fbQ,
      },
      cli: [process.execPath, bin],
      builtinModelDir: path.join(root, 'models', 'use-lite'),
      packageRoot: root,
      reuseIndex: values['reuse-index'] === true,
      warm: values['no-warm'] !== true,
      cliAsk: values['no-cli-ask'] !== true,
      demo: values['no-demo'] !== true,
      ask: {
        settings: { ...canopy.settings, ...criticModelSetting(values['no-critic-model']), ...profilesSetting(values['no-profiles']) },
        cliArgs: [...compressorFlagArgs(canopy), ...(values['no-critic-model'] ? ['--no-critic-model'] : []), ...(values['no-profiles'] ? ['--no-profiles'] : [])],
        ...(canopy.nodeScore ? { nodeScore: canopy.nodeScore } : {}),
      },
      lookAhead: lookAheadSetting(values['look-ahead'], values['no-look-ahead']).criticLookAhead ?? true,
      command: ['canopy bench realdocs', ...args].join(' '),
      log: (l) => io.err(l),
    });
    report.notes.unshift(...found.notes);
  }
  if (values.out) writeFileSync(abs(values.out), `${JSON.stringify(report, null, 1)}\n`);
  const markdown = renderRealDocsMarkdown(report);
  if (values.markdown) {
    const file = abs(values.markdown);
    writeFileSync(file, replaceRealDocsSection(existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n', markdown));
    io.err(`realdocs: wrote the table into ${file}`);
  }
  if (values.json) io.out(JSON.stringify(report));
  else io.out(markdown);
  if (values['per-question']) {
    const say = values.json ? io.err : io.out;
    say('');
    say(renderRealDocsQuestions(report));
  }
  if (before) {
    // With --json the comparison goes to stderr: stdout stays one JSON line.
    const say = values.json ? io.err : io.out;
    say('');
    say(compareRealDocs(before, report));
  }
  return 0;
}
