/**
 * The real-document benchmark (issue 16): what a new user gets from Canopy on documents nobody
 * here wrote — FinanceBench filings (PDF), SQuAD Wikipedia articles (Markdown) and the project's
 * own docs in one folder, with the built-in encoder and no LLM. Two more sources (issue 32) run
 * the same steps on corpora of their own, so the main sample's figures stay comparable with
 * earlier runs: NQ's development passages, one Markdown file each (realDocsNq.ts; every question
 * warm, a seeded subset cold, and a flat BM25 baseline, realDocsBm25.ts), and a documentation
 * folder copied as it is (realDocsFolder.ts).
 *
 *  1. corpus: written by realDocsCorpus.ts into `<work>/corpus` (never into the repository);
 *  2. index: one `canopy index <corpus> --index <work>/index --json` process, timed whole; the
 *     time of each file is read from when the indexer wrote its parsed document (documents are
 *     written one after another, right after each file's parse and node vectors), its parse
 *     time from the document's own stats;
 *  3. ask, cold: per question one `canopy ask … --json` process (model load included), timed whole;
 *  4. ask, warm: the core services in this process, wired as the extension's activate() wires them
 *     (Embeddings, ParseWorkers, IndexService over vectra, AskService, TraceStore), asked a warm-up
 *     question and then every question (AskService.ask + TraceStore.save, as the extension does
 *     before painting);
 *  5. demo: `npm run demo`'s own folder and question (read from package.json), indexed and asked
 *     through the CLI, for its rounds, stop reason and whether the answer covers both parts;
 *  6. scoring (realDocsScore.ts) against the index's parsed documents, each answer as it comes (no trace is held).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { AdapterCheckpoints } from '../../core/app/adapters';
import { AskService } from '../../core/app/askService';
import { Embeddings } from '../../core/app/embeddings';
import { IndexStores } from '../../core/app/indexStores';
import { IndexService } from '../../core/app/indexService';
import { ParseWorkers } from '../../core/app/parseWorkers';
import { TraceStore } from '../../core/app/traceStore';
import type { NodeScoreWeights } from '../../core/compress/hybridScore';
import { canopyCompressor, resolveSettings, type CanopySettings } from '../../core/config/settings';
import { machine, type Machine } from './measure';
import type { IndexSummary } from '../../core/index/indexer';
import { paths, readCurrent, readManifest, type IndexManifest } from '../../core/index/layout';
import type { ParsedDocument } from '../../core/ingest/parsedDocument';
import type { RegionNode } from '../../contracts/region';
import type { AskTrace, CompressorSetting } from '../../contracts/trace';
import { bpeTokenCounter } from '../../core/compress/tokens';
import { answerWithinBudget, bm25Curve, bm25Ranker, firstAnswerRank, shareAtTokens, type Bm25Point } from './realDocsBm25';
import { buildRealDocsCorpus, type RealDocsGold, type RealDocsQuestion, type RealDocsSampling, type RealDocsSelection, type RealDocsSource } from './realDocsCorpus';
import { readFolderSource, writeFolderCorpus } from './realDocsFolder';
import { folderDumpRecord } from './realDocsDump';
import { JudgeDumpWriter } from '../judgeDump';
import { ExtractiveReader } from '../../core/read/extractiveReader';
import type { Reader, ReaderInput } from '../../core/read/reader';
import { readNqSource, writeNqCorpus } from './realDocsNq';
import { preferredMetrics, summarise, type RealDocsSummary } from './realDocsReport';
import { scoreAnswer, type AnswerMetrics } from './realDocsScore';

export const REALDOCS_SCHEMA = 'canopy.bench.realdocs';
/** Asked once before the warm runs: loads the model and opens the index, as a first question in the extension would. */
export const WARMUP_QUESTION = 'What is this folder about?';

/**
 * The parts of the demo question and the words an answer must hold for each (from
 * test/fixtures/demo/survey-report.md: plot P5; replant with oak, lime and hornbeam). Keyed by
 * the question, so a changed demo question is reported as unchecked rather than misjudged.
 */
const DEMO_PARTS: Record<string, string[][]> = {
  'Which plot lost ash trees to dieback, and what should be replanted there?': [['P5'], ['oak', 'lime', 'hornbeam']],
};

export interface RealDocsRunOptions {
  /** Work folder: `corpus/`, `index/`, `demo-index/` live here. */
  work: string;
  financebench?: string;
  squad?: string;
  /** Documentation folder copied into the corpus (its Markdown files), or undefined for none. */
  docs?: string;
  sampling: RealDocsSampling;
  /**
   * NQ-open questions (the passages found beside them): all asked warm (or a seeded `questions`),
   * a seeded `cliQuestions` of those through `canopy ask` too. Undefined: no NQ sample.
   */
  nq?: { queries: string; questions?: number; cliQuestions: number };
  /** A documentation folder's questions file (`{question, answers, file}`; the folder found beside it). Undefined: none. */
  docsFolder?: string;
  /**
   * Write the documentation folder's warm asks' reader inputs, gold and critic verdicts as judge
   * dumps (`--dump-judge`, src/eval/judgeDump.ts) under this dataset name: a documentation question
   * set becomes training data for the reader model (tools/judge/collect.ts).
   */
  dumpJudge?: { file: string; dataset: string };
  /** The `canopy` command: program and leading arguments, e.g. [node, <repo>/bin/canopy.js]. */
  cli: string[];
  builtinModelDir: string;
  /** Canopy's package root: package.json (the demo script) and the demo's folder. */
  packageRoot: string;
  /** Keep an index already in `<work>/index` (after reader or critic changes: no re-index). */
  reuseIndex?: boolean;
  cliAsk?: boolean;
  /** The rule critic's look-ahead (`canopy ask --[no-]look-ahead`, setting canopy.critic.lookAhead; default on). */
  lookAhead?: boolean;
  warm?: boolean;
  demo?: boolean;
  /**
   * Settings over the defaults for every ask (CANOPY's rank gate, glimpse, node score:
   * canopy.compressor.*), with `cliArgs` — the same choices as `canopy ask` flags — for the
   * processes, and explicit node-score weights for the warm asks' requests.
   */
  ask?: { settings: Partial<CanopySettings>; cliArgs: string[]; nodeScore?: NodeScoreWeights };
  /** The command line recorded in the report. */
  command: string;
  log: (line: string) => void;
}

/** The settings every warm ask runs with: the defaults, the look-ahead choice and the benchmark's CANOPY flags. */
function askSettings(o: Pick<RealDocsRunOptions, 'lookAhead' | 'ask'>): CanopySettings {
  return resolveSettings({ ...(o.lookAhead !== undefined ? { criticLookAhead: o.lookAhead } : {}), ...(o.ask?.settings ?? {}) });
}

/** What the report records of the settings every ask ran with. */
function settingsRecord(o: Pick<RealDocsRunOptions, 'lookAhead' | 'ask'>): RealDocsReport['settings'] {
  const s = askSettings(o);
  const { topK, maxRounds, criticLookAhead, readerTokenCap, controllerEnabled, controllerMinPages, retrievalFusion } = s;
  return { topK, maxRounds, criticLookAhead, readerTokenCap, controllerEnabled, controllerMinPages, retrievalFusion, compressor: canopyCompressor(s), nodeScore: o.ask?.nodeScore ?? s.nodeScore };
}

export interface RealDocsFileRow {
  file: string;
  kind: 'pdf' | 'squad-article' | 'doc' | 'nq-passage' | 'folder-file' | 'other';
  bytes: number;
  pages?: number;
  items: number;
  nodes: number;
  /** Parse in the worker (ParsedDocument.stats.parseMs), seconds. */
  parseSeconds?: number;
  /** Whole file — read, parse, node vectors, write — from the parsed documents' write times; undefined when the index was reused. */
  seconds?: number;
  warnings: number;
}

export interface RealDocsIndexReport {
  reused: boolean;
  /** The `canopy index` process, wall seconds (model load included). */
  seconds?: number;
  /** …and its CPU seconds (user + system, all threads; Linux). */
  cpuSeconds?: number;
  summary?: Pick<IndexSummary, 'files' | 'parsed' | 'items' | 'nodes' | 'errors' | 'skipped' | 'seconds'>;
  files: RealDocsFileRow[];
}

export interface RealDocsRow {
  id: string;
  source: RealDocsSource;
  question: string;
  answers: string[];
  gold: RealDocsGold;
  /** NQ, documentation folder: whether the gold passage / file holds an answer string. */
  goldHoldsAnswer?: boolean;
  /**
   * NQ: the flat BM25 list for the question — its first passage's file, the rank of the first
   * passage holding an answer string (within the list's depth), and whether the top passages
   * that fit whole in this question's own evidence tokens hold one.
   */
  bm25?: { top1: string; firstAnswerRank?: number; withinAskTokens?: boolean };
  /** `ms`: wall time; `cpuMs`: CPU time (user + system, all threads) where the platform tells. */
  cli?: { ms: number; cpuMs?: number; exitCode: number; error?: string; metrics?: AnswerMetrics };
  warm?: { ms: number; cpuMs?: number; error?: string; warnings?: string[]; metrics?: AnswerMetrics };
}

export interface RealDocsDemo {
  question: string;
  includes: string[];
  indexSeconds: number;
  ms: number;
  cpuMs?: number;
  error?: string;
  rounds?: number;
  stop?: string;
  items?: number;
  evidenceTokens?: number;
  answer?: string;
  /** Per part of the question: whether the answer holds its words (undefined: question not known to the benchmark). */
  partsAnswered?: boolean[];
}

export interface RealDocsReport {
  schema: typeof REALDOCS_SCHEMA;
  version: 1;
  createdAt: string;
  command: string;
  machine: Machine & { loadAverage: { start: number[]; afterIndex?: number[]; end: number[] } };
  sampling: RealDocsSampling;
  /** The settings every ask ran with (the defaults unless the benchmark's CANOPY flags changed them). */
  settings?: Pick<CanopySettings, 'topK' | 'maxRounds' | 'readerTokenCap' | 'controllerEnabled' | 'controllerMinPages' | 'retrievalFusion'> & {
    criticLookAhead?: boolean;
    /** The compressor the settings describe, and the node score (`profile`, `dense` or explicit weights). */
    compressor?: CompressorSetting;
    nodeScore?: CanopySettings['nodeScore'] | NodeScoreWeights;
  };
  inputs: RealDocsSelection['inputs'];
  corpus: { root: string; index: string; files: number; pdfs: number; squadArticles: number; docs: number };
  notes: string[];
  index: RealDocsIndexReport;
  warmup?: { question: string; ms: number };
  questions: RealDocsRow[];
  summary: { all: RealDocsSummary; squad: RealDocsSummary; financebench: RealDocsSummary };
  /** The NQ sample (issue 32), on its own corpus and index. */
  nq?: RealDocsNqReport;
  /** The documentation folder (issue 32), on its own corpus and index. */
  docsFolder?: RealDocsFolderReport;
  demo?: RealDocsDemo;
}

/** A source asked on a corpus of its own (NQ, the documentation folder). */
export interface RealDocsSampleReport {
  inputs: { questions: string; passages?: string; folder?: string };
  corpus: { root: string; index: string; files: number };
  index: RealDocsIndexReport;
  warmup?: { question: string; ms: number };
  questions: RealDocsRow[];
  /** NQ: quality figures from the warm asks (every question), latency from both; the folder: from the CLI asks, as the main sample. */
  summary: RealDocsSummary;
  notes: string[];
}

export interface RealDocsNqReport extends RealDocsSampleReport {
  source: 'nq';
  /** `questions`: asked warm, `of` the file's; `cliQuestions`: of those, through `canopy ask`; `asked`: the --nq-questions given (absent: all). */
  sampling: { seed: number; questions: number; of?: number; cliQuestions: number; asked?: number };
  bm25: {
    scoring: string;
    /** Passages per question's list; the curve runs k = 1 … depth. */
    depth: number;
    curve: Bm25Point[];
    /**
     * The ask's share of questions with an answer string in the kept evidence at its mean evidence
     * tokens; BM25's curve read there (absent past the curve's end); and the share whose top BM25
     * passages that fit whole in the question's own evidence tokens hold one.
     */
    atAskTokens: { questions: number; askTokens: number; askShare: number; bm25Share?: number; bm25OwnTokensShare: number };
  };
}

export interface RealDocsFolderReport extends RealDocsSampleReport {
  source: 'docs';
}

const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

interface Spawned {
  ms: number;
  /** CPU time (user + system) of the process and its threads, when the platform tells (Linux). */
  cpuMs?: number;
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * CPU seconds (user + system) of this process's finished, waited-for children: `cutime` and
 * `cstime` of /proc/self/stat in clock ticks (USER_HZ, 100 on Linux). Undefined elsewhere.
 * Wall times on a shared machine grow with its load; CPU times much less, so runs made at
 * different loads stay comparable.
 */
function childrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[13]) + Number(fields[14]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the CLI and returns its output. Stdout goes to a file, not a pipe: bin/canopy.js ends with
 * process.exit(), which cuts a large `--json` trace short on a pipe (seen at ~500 kB), while
 * writes to a file are synchronous.
 */
function spawnCli(o: Pick<RealDocsRunOptions, 'cli' | 'packageRoot' | 'work'>, args: string[]): Spawned {
  mkdirSync(o.work, { recursive: true });
  const outFile = join(o.work, 'cli-stdout.txt');
  const fd = openSync(outFile, 'w');
  const cpu0 = childrenCpuSeconds();
  const t0 = performance.now();
  let r: ReturnType<typeof spawnSync>;
  try {
    r = spawnSync(o.cli[0]!, [...o.cli.slice(1), ...args], { cwd: o.packageRoot, encoding: 'utf8', maxBuffer: 2 ** 30, stdio: ['ignore', fd, 'pipe'] });
  } finally {
    closeSync(fd);
  }
  const ms = performance.now() - t0;
  const cpu1 = childrenCpuSeconds();
  if (r.error) throw r.error;
  const stdout = readFileSync(outFile, 'utf8');
  rmSync(outFile, { force: true });
  return { ms, ...(cpu0 !== undefined && cpu1 !== undefined ? { cpuMs: (cpu1 - cpu0) * 1000 } : {}), code: r.status ?? 1, stdout, stderr: String(r.stderr) };
}

/** The last stdout line as JSON (commands print one JSON object with --json). */
function lastJson<T>(s: Spawned, what: string): T {
  const line = s.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new Error(`${what}: no JSON on stdout (exit ${s.code}): ${s.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
}

const tail = (s: Spawned) => `exit ${s.code}: ${s.stderr.trim().split('\n').slice(-3).join(' | ')}`;

/** The live generation's manifest and parsed documents. */
async function readIndex(indexDir: string): Promise<{ manifest: IndexManifest; docs: Map<string, ParsedDocument> }> {
  const generation = await readCurrent(indexDir);
  if (generation === undefined) throw new Error(`no index in ${indexDir}`);
  const manifest = await readManifest(indexDir, generation);
  const docs = new Map<string, ParsedDocument>();
  for (const [file, entry] of Object.entries(manifest.files)) docs.set(file, JSON.parse(readFileSync(paths(indexDir).doc(entry.doc), 'utf8')) as ParsedDocument);
  return { manifest, docs };
}

function fileRows(indexDir: string, manifest: IndexManifest, docs: Map<string, ParsedDocument>, kindOf: (file: string) => RealDocsFileRow['kind'], startedAt?: number): RealDocsFileRow[] {
  const rows = Object.entries(manifest.files).map(([file, entry]) => {
    const doc = docs.get(file)!;
    const row: RealDocsFileRow & { writtenAt: number } = {
      file,
      kind: kindOf(file),
      bytes: entry.size,
      items: entry.items.length,
      nodes: entry.nodes,
      parseSeconds: doc.stats.parseMs / 1000,
      warnings: entry.warnings.length,
      writtenAt: statSync(paths(indexDir).doc(entry.doc)).mtimeMs,
    };
    if (doc.pages) row.pages = doc.pages.length;
    return row;
  });
  if (startedAt !== undefined) {
    // Each file's time runs from the previous document's write (the first: from the process start). The indexer
    // pipelines files and writes small ones together, so a file written in the same millisecond as the one before gets 0.
    const byWrite = [...rows].sort((a, b) => a.writtenAt - b.writtenAt);
    byWrite.forEach((r, i) => (r.seconds = (r.writtenAt - (i === 0 ? startedAt : byWrite[i - 1]!.writtenAt)) / 1000));
  }
  return rows.map(({ writtenAt: _w, ...r }) => r);
}

function nodeLookup(docs: Map<string, ParsedDocument>): (id: string) => RegionNode | undefined {
  const byId = new Map<string, RegionNode>();
  const walk = (n: RegionNode) => {
    byId.set(n.id, n);
    n.children.forEach(walk);
  };
  for (const doc of docs.values()) for (const item of doc.items) walk(item.root);
  return (id) => byId.get(id);
}

/** The demo's includes and question, from package.json's `demo` script. */
export function demoFromPackage(packageRoot: string): { includes: string[]; question: string } {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.demo ?? '';
  const includes = [...script.matchAll(/--include\s+"([^"]+)"/g)].map((m) => m[1]!);
  const question = /\bask\b[^"]*"([^"]+)"/.exec(script)?.[1];
  if (!question || includes.length === 0) throw new Error(`cannot read the demo's folder and question from the "demo" script of ${join(packageRoot, 'package.json')}`);
  return { includes, question };
}

async function runDemo(o: RealDocsRunOptions): Promise<RealDocsDemo> {
  const { includes, question } = demoFromPackage(o.packageRoot);
  const index = join(o.work, 'demo-index');
  rmSync(index, { recursive: true, force: true });
  o.log('realdocs: demo: indexing its folder');
  const ix = spawnCli(o, ['index', o.packageRoot, '--index', index, ...includes.flatMap((g) => ['--include', g]), '--json']);
  const demo: RealDocsDemo = { question, includes, indexSeconds: ix.ms / 1000, ms: 0 };
  if (ix.code !== 0) return { ...demo, error: `index ${tail(ix)}` };
  o.log('realdocs: demo: asking its question');
  const r = spawnCli(o, ['ask', '--dir', o.packageRoot, '--index', index, '--json', '--', question]);
  demo.ms = r.ms;
  if (r.cpuMs !== undefined) demo.cpuMs = r.cpuMs;
  if (r.code !== 0) return { ...demo, error: `ask ${tail(r)}` };
  const t = lastJson<AskTrace>(r, 'demo ask');
  const parts = DEMO_PARTS[question];
  const words = new Set(t.answer.text.toLowerCase().match(/[\p{L}\d]+/gu) ?? []);
  return {
    ...demo,
    rounds: t.rounds.length,
    stop: t.stop.reason,
    items: t.totals.items,
    evidenceTokens: t.totals.evidenceTokens,
    answer: t.answer.text,
    ...(parts ? { partsAnswered: parts.map((p) => p.every((w) => words.has(w.toLowerCase()))) } : {}),
  };
}

/** One corpus of the benchmark: where it is written and indexed, its rows, and which rows a `canopy ask` process asks. */
interface CorpusPlan {
  /** A name for the log. */
  name: string;
  corpus: string;
  indexDir: string;
  kindOf: (file: string) => RealDocsFileRow['kind'];
  rows: RealDocsRow[];
  questions: ReadonlyMap<string, RealDocsQuestion>;
  /** Rows asked through the CLI process (undefined: all). */
  cliIds?: ReadonlySet<string>;
  /** Each warm ask's reader input written as a judge dump. */
  dump?: { writer: JudgeDumpWriter; dataset: string };
}

interface CorpusRun {
  index: RealDocsIndexReport;
  afterIndex: number[];
  warmup?: { question: string; ms: number };
  notes: string[];
}

/** Log every question of a small sample; of a large one every 50th (and every failure). */
const shouldLog = (i: number, n: number, failed: boolean) => failed || n <= 100 || (i + 1) % 50 === 0 || i + 1 === n;

/**
 * Indexes one corpus (or reuses its index), asks its rows cold (a `canopy ask` process each, for
 * the planned rows) and warm (one in-process workspace, every row), and scores each answer
 * against the index's parsed documents as soon as it is given (no trace is held).
 */
async function runCorpus(o: RealDocsRunOptions, p: CorpusPlan): Promise<CorpusRun> {
  const { corpus, indexDir, rows } = p;
  const index: RealDocsIndexReport = { reused: false, files: [] };
  const notes: string[] = [];
  const reuse = o.reuseIndex === true && existsSync(paths(indexDir).current);
  let indexStartedAt: number | undefined;
  if (reuse) {
    index.reused = true;
    o.log(`realdocs: ${p.name}: reusing the index in ${indexDir}`);
    // The corpus was just rewritten (new mtimes, same bytes): an incremental pass re-hashes and reuses every file.
    const r = spawnCli(o, ['index', corpus, '--index', indexDir, '--json']);
    if (r.code !== 0) throw new Error(`canopy index (reuse) of ${corpus} failed: ${tail(r)}`);
    const s = lastJson<IndexSummary>(r, 'canopy index');
    if (s.parsed > 0) o.log(`realdocs: ${p.name}: note: ${s.parsed} file(s) changed and were re-indexed`);
    notes.push('index reused from an earlier run: no index times');
  } else {
    rmSync(indexDir, { recursive: true, force: true });
    o.log(`realdocs: ${p.name}: indexing (canopy index) …`);
    indexStartedAt = Date.now();
    const r = spawnCli(o, ['index', corpus, '--index', indexDir, '--json']);
    if (r.code !== 0) throw new Error(`canopy index of ${corpus} failed: ${tail(r)}`);
    const s = lastJson<IndexSummary>(r, 'canopy index');
    index.seconds = r.ms / 1000;
    if (r.cpuMs !== undefined) index.cpuSeconds = r.cpuMs / 1000;
    index.summary = { files: s.files, parsed: s.parsed, items: s.items, nodes: s.nodes, errors: s.errors, skipped: s.skipped, seconds: s.seconds };
    o.log(`realdocs: ${p.name}: indexed ${s.files} files, ${s.nodes} nodes in ${index.seconds.toFixed(1)} s`);
  }
  const afterIndex = load();
  const { manifest, docs } = await readIndex(indexDir);
  index.files = fileRows(indexDir, manifest, docs, p.kindOf, indexStartedAt);
  const node = nodeLookup(docs);
  const score = (row: RealDocsRow, trace: AskTrace) => scoreAnswer(trace, p.questions.get(row.id)!, node);

  // Cold: the whole `canopy ask` process per question.
  if (o.cliAsk !== false) {
    const asked = rows.filter((r) => p.cliIds === undefined || p.cliIds.has(r.id));
    for (const [i, row] of asked.entries()) {
      const r = spawnCli(o, ['ask', '--dir', corpus, '--index', indexDir, '--json', o.lookAhead === false ? '--no-look-ahead' : '--look-ahead', ...(o.ask?.cliArgs ?? []), '--', row.question]);
      row.cli = { ms: r.ms, ...(r.cpuMs !== undefined ? { cpuMs: r.cpuMs } : {}), exitCode: r.code };
      if (r.code === 0) row.cli.metrics = score(row, lastJson<AskTrace>(r, 'canopy ask'));
      else row.cli.error = tail(r);
      if (shouldLog(i, asked.length, row.cli.error !== undefined)) o.log(`realdocs: ${p.name}: cli ${i + 1}/${asked.length} ${(r.ms / 1000).toFixed(1)} s${row.cli.error ? ` ERROR ${row.cli.error}` : ''}`);
    }
  }

  // Warm: one workspace in this process, as the extension holds it.
  let warmup: CorpusRun['warmup'];
  if (o.warm !== false) {
    // The extension's composition root (src/extension/extension.ts activate()), minus the editor.
    const settings = askSettings(o);
    const stores = new IndexStores(indexDir);
    const embeddings = new Embeddings({ store: () => stores.get(settings.store), encoder: () => ({ kind: 'builtin' }), builtinModelDir: o.builtinModelDir, baseDir: corpus });
    const parseWorkers = new ParseWorkers();
    const indexService = new IndexService({ root: corpus, indexDir, embeddings, parseWorkers, storeFor: stores.storeFor });
    const traceStore = new TraceStore(join(indexDir, 'traces'));
    const asker = new AskService({ index: indexService, embeddings, adapters: new AdapterCheckpoints(corpus) });
    const askAndSave = async (question: string, row?: RealDocsRow) => {
      // Dumping: the built-in extractive reader, its input kept for the dump.
      let readerInput: ReaderInput | undefined;
      let reader: Reader | undefined;
      if (p.dump && row) {
        const extractive = new ExtractiveReader();
        reader = { mode: extractive.mode, modelId: extractive.modelId, answer: (q, input) => ((readerInput = input), extractive.answer(q, input)) };
      }
      const { trace, warnings } = await asker.ask(question, settings, { ...(o.ask?.nodeScore ? { nodeScore: o.ask.nodeScore } : {}), ...(reader ? { reader } : {}) });
      await traceStore.save(trace);
      if (p.dump && row && readerInput) p.dump.writer.write(folderDumpRecord(p.dump.dataset, row, trace, readerInput));
      return { trace, warnings };
    };
    try {
      const t0 = performance.now();
      await askAndSave(WARMUP_QUESTION);
      warmup = { question: WARMUP_QUESTION, ms: performance.now() - t0 };
      for (const [i, row] of rows.entries()) {
        const t1 = performance.now();
        const c1 = process.cpuUsage();
        const cpuMs = () => {
          const c = process.cpuUsage(c1);
          return (c.user + c.system) / 1000;
        };
        try {
          const { trace, warnings } = await askAndSave(row.question, row);
          row.warm = { ms: performance.now() - t1, cpuMs: cpuMs(), ...(warnings.length > 0 ? { warnings: warnings.map((w) => `${w.source}: ${w.message}`) } : {}) };
          row.warm.metrics = score(row, trace);
        } catch (err) {
          row.warm = { ms: performance.now() - t1, cpuMs: cpuMs(), error: (err as Error).message };
        }
        if (shouldLog(i, rows.length, row.warm.error !== undefined)) o.log(`realdocs: ${p.name}: warm ${i + 1}/${rows.length} ${(row.warm.ms / 1000).toFixed(1)} s${row.warm.error ? ` ERROR ${row.warm.error}` : ''}`);
      }
    } finally {
      await parseWorkers.close();
      await embeddings.dispose();
      await stores.close();
    }
  }
  return { index, afterIndex, ...(warmup ? { warmup } : {}), notes };
}

const rowOf = (q: RealDocsQuestion): RealDocsRow => ({
  id: q.id,
  source: q.source,
  question: q.question,
  answers: q.answers,
  gold: q.gold,
  ...(q.goldHoldsAnswer !== undefined ? { goldHoldsAnswer: q.goldHoldsAnswer } : {}),
});

/** BM25 lists deep enough for the curve's table and, usually, the ask's evidence tokens. */
const BM25_DEPTH = 30;

/** The NQ sample: its own corpus and index, every question warm, a seeded subset cold, and the BM25 baseline. */
async function runNq(o: RealDocsRunOptions, nq: NonNullable<RealDocsRunOptions['nq']>): Promise<RealDocsNqReport> {
  const sel = readNqSource(nq.queries, { ...(nq.questions !== undefined ? { questions: nq.questions } : {}), cliQuestions: nq.cliQuestions, seed: o.sampling.seed });
  const corpus = join(o.work, 'nq', 'corpus');
  const indexDir = join(o.work, 'nq', 'index');
  writeNqCorpus(corpus, sel);
  o.log(`realdocs: nq: corpus ${corpus}: ${sel.passages.length} passages, ${sel.questions.length} questions (${sel.cliIds.length} through canopy ask)`);
  const rows = sel.questions.map(rowOf);
  const run = await runCorpus(o, {
    name: 'nq',
    corpus,
    indexDir,
    kindOf: () => 'nq-passage',
    rows,
    questions: new Map(sel.questions.map((q) => [q.id, q])),
    cliIds: new Set(sel.cliIds),
  });
  // The flat BM25 baseline over the same passages, and each question's own-budget check.
  const depth = Math.min(BM25_DEPTH, sel.passages.length);
  const ranker = bm25Ranker(
    sel.passages.map((p) => ({ id: p.file, title: p.title, text: p.markdown.slice(p.charStart, p.charEnd), written: p.markdown })),
    depth,
    bpeTokenCounter(),
  );
  const ranked = rows.map((row) => {
    const r = ranker.rank(row.question, row.answers);
    const m = preferredMetrics(row, 'warm');
    const first = firstAnswerRank(r);
    row.bm25 = { top1: r.ids[0] ?? '', ...(first !== undefined ? { firstAnswerRank: first } : {}), ...(m ? { withinAskTokens: answerWithinBudget(r, m.evidenceTokens) } : {}) };
    return r;
  });
  const summary = summarise(rows, 'warm');
  // The curve over the questions the ask's figures are over (all, unless warm asks were skipped).
  const scored = ranked.filter((_, i) => preferredMetrics(rows[i]!, 'warm') !== undefined);
  const curve = bm25Curve(scored.length > 0 ? scored : ranked, depth);
  return {
    source: 'nq',
    inputs: { questions: sel.queries, passages: sel.passagesFile },
    sampling: { seed: o.sampling.seed, questions: sel.questions.length, of: sel.available, cliQuestions: sel.cliIds.length, ...(nq.questions !== undefined ? { asked: nq.questions } : {}) },
    corpus: { root: corpus, index: indexDir, files: sel.passages.length },
    index: run.index,
    ...(run.warmup ? { warmup: run.warmup } : {}),
    questions: rows,
    summary,
    bm25: { scoring: "Canopy's BM25, per-field scoring over title and text", depth, curve, atAskTokens: equalTokens(rows, curve) },
    notes: [...sel.notes, ...run.notes],
  };
}

/** The ask's answer-in-evidence share at its mean evidence tokens beside BM25's curve there, and BM25 in each question's own tokens. */
export function equalTokens(rows: readonly RealDocsRow[], curve: readonly Bm25Point[]): RealDocsNqReport['bm25']['atAskTokens'] {
  const scored = rows.map((r) => ({ r, m: preferredMetrics(r, 'warm') })).filter((x): x is { r: RealDocsRow; m: AnswerMetrics } => x.m !== undefined);
  const n = scored.length;
  const askTokens = n === 0 ? Number.NaN : scored.reduce((a, x) => a + x.m.evidenceTokens, 0) / n;
  const askShare = n === 0 ? Number.NaN : scored.filter((x) => x.m.answerInEvidence).length / n;
  const bm25Share = shareAtTokens(curve, askTokens);
  const own = scored.filter((x) => x.r.bm25?.withinAskTokens).length;
  return { questions: n, askTokens, askShare, ...(bm25Share !== undefined ? { bm25Share } : {}), bm25OwnTokensShare: n === 0 ? Number.NaN : own / n };
}

/** The documentation folder: copied as it is into its own corpus, every question cold and warm. */
async function runFolder(o: RealDocsRunOptions, questionsFile: string): Promise<RealDocsFolderReport> {
  const sel = readFolderSource(questionsFile);
  const corpus = join(o.work, 'docs-folder', 'corpus');
  const indexDir = join(o.work, 'docs-folder', 'index');
  writeFolderCorpus(corpus, sel);
  o.log(`realdocs: docs folder: corpus ${corpus}: ${sel.files.length} files from ${sel.folder}, ${sel.questions.length} questions`);
  const rows = sel.questions.map(rowOf);
  const dump = o.dumpJudge ? { writer: new JudgeDumpWriter(o.dumpJudge.file), dataset: o.dumpJudge.dataset } : undefined;
  const run = await runCorpus(o, { name: 'docs folder', corpus, indexDir, kindOf: () => 'folder-file', rows, questions: new Map(sel.questions.map((q) => [q.id, q])), ...(dump ? { dump } : {}) });
  return {
    source: 'docs',
    inputs: { questions: sel.questionsFile, folder: sel.folder },
    corpus: { root: corpus, index: indexDir, files: sel.files.length },
    index: run.index,
    ...(run.warmup ? { warmup: run.warmup } : {}),
    questions: rows,
    summary: summarise(rows),
    notes: [...sel.notes, ...run.notes],
  };
}

export async function runRealDocsBench(o: RealDocsRunOptions): Promise<RealDocsReport> {
  const started = { createdAt: new Date().toISOString(), load: load() };
  const corpus = join(o.work, 'corpus');
  const indexDir = join(o.work, 'index');
  const mainWanted = (o.financebench !== undefined && o.sampling.financebenchQuestions > 0) || (o.squad !== undefined && o.sampling.squadQuestions > 0);
  if (!mainWanted && !o.nq && !o.docsFolder) throw new Error('no questions: give FinanceBench and/or SQuAD question files, NQ questions or a documentation folder (or a data folder holding them)');

  // The main sample (SQuAD articles, FinanceBench filings, Canopy's docs) in one corpus, as before.
  let main: { selection: RealDocsSelection; run: CorpusRun; rows: RealDocsRow[] } | undefined;
  if (mainWanted) {
    const selection = buildRealDocsCorpus(corpus, {
      ...(o.financebench ? { financebench: o.financebench } : {}),
      ...(o.squad ? { squad: o.squad } : {}),
      ...(o.docs ? { docs: o.docs } : {}),
      sampling: o.sampling,
    });
    const count = (k: string) => selection.files.filter((f) => f.kind === k).length;
    o.log(`realdocs: corpus ${corpus}: ${selection.files.length} files (${count('pdf')} PDFs, ${count('squad-article')} SQuAD articles, ${count('doc')} docs), ${selection.questions.length} questions`);
    const kinds = new Map(selection.files.map((f) => [f.path, f.kind]));
    const rows = selection.questions.map(rowOf);
    const run = await runCorpus(o, { name: 'main', corpus, indexDir, kindOf: (f) => kinds.get(f) ?? 'other', rows, questions: new Map(selection.questions.map((q) => [q.id, q])) });
    main = { selection, run, rows };
  }

  // NQ and the documentation folder: corpora of their own, so the main sample's figures stay comparable with earlier runs.
  const nq = o.nq ? await runNq(o, o.nq) : undefined;
  const docsFolder = o.docsFolder ? await runFolder(o, o.docsFolder) : undefined;

  // The demo's own question.
  const demo = o.demo === false ? undefined : await runDemo(o);

  const rows = main?.rows ?? [];
  const count = (k: string) => main?.selection.files.filter((f) => f.kind === k).length ?? 0;
  return {
    schema: REALDOCS_SCHEMA,
    version: 1,
    createdAt: started.createdAt,
    command: o.command,
    machine: { ...machine(), loadAverage: { start: started.load, ...(main ? { afterIndex: main.run.afterIndex } : {}), end: load() } },
    sampling: o.sampling,
    settings: settingsRecord(o),
    inputs: main?.selection.inputs ?? {},
    corpus: { root: corpus, index: indexDir, files: main?.selection.files.length ?? 0, pdfs: count('pdf'), squadArticles: count('squad-article'), docs: count('doc') },
    notes: [...(main?.selection.notes ?? []), ...(main?.run.notes ?? [])],
    index: main?.run.index ?? { reused: false, files: [] },
    ...(main?.run.warmup ? { warmup: main.run.warmup } : {}),
    questions: rows,
    summary: {
      all: summarise(rows),
      squad: summarise(rows.filter((r) => r.source === 'squad')),
      financebench: summarise(rows.filter((r) => r.source === 'financebench')),
    },
    ...(nq ? { nq } : {}),
    ...(docsFolder ? { docsFolder } : {}),
    ...(demo ? { demo } : {}),
  };
}
