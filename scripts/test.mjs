// Runs the test tiers that need no VS Code host with Node's own test runner.
//   node scripts/test.mjs               -> unit + webview tiers (what `npm test` runs)
//   node scripts/test.mjs unit          -> test/unit/**/*.test.ts only
//   node scripts/test.mjs webview       -> test/webview/**/*.test.ts only (headless Chromium)
//   node scripts/test.mjs shared        -> only the light files that share processes (below)
//   node scripts/test.mjs <file.test.ts>…  -> those files only, each in its own process
// The build runs once, first: the webview tier loads the bundles and the CLI tests use the
// built-in encoder model it converts. Then one `node --test` runs every file, each in its own
// process, several at once: CANOPY_TEST_CONCURRENCY, else one more than
// os.availableParallelism() (files spend part of their time waiting on time limits, child
// processes and the browser; on 2 cores 3 at a time took 356 s where 2 took 435 s, back to back,
// same commit). Test files must therefore not share state: each makes its own temp
// folders (mkdtemp), listens on port 0, and restores any environment variable it sets.
// Files start slowest first, by the times of the previous run (test-results/test-times.json,
// written by scripts/testTimes.mjs), so a long file does not start last and hold up the end;
// files without a time start first, webview files before unit ones.
// Files share processes: the files listed in scripts/sharedTests.mjs (independent by
// construction, checked there) run in CANOPY_TEST_SHARED batches (default 6; 0 = each file in its
// own process as before), and its webview files in CANOPY_TEST_SHARED_BROWSER batches (default 2)
// that also share one Chromium (test/webview/harness.ts shareBrowser), each balanced by the
// recorded times. A batch is a generated test-results/shared/batch-N.test.cjs (or
// batch-browser-N) that requires each file inside a describe named by the file's path, so reports
// and failures still name the file, and scripts/testTimes.mjs records each file's time inside the
// batch (without the process start-up the batch shares). Files named on the command line always
// run one process each.
// Parse workers (src/core/ingest/parsePool.ts) run the dist/parseWorker.js the build has just
// made (CANOPY_TEST_PARSE_WORKER): a worker that loads the parse stack from source through tsx
// costs about 0.6 s more CPU to start, and the suite starts dozens. A test file run on its own
// (node --test) runs the source worker; parseMemoryLimit.test.ts runs it always.
// TypeScript loads through tsx's CommonJS hook, narrowed to the repository's own files
// (scripts/tsHook.cjs), not `--import tsx`: on Node 20 the latter starts an ESM loader thread in
// every test process, which cost about 0.6 s of CPU per file here. Under the CommonJS hook
// import() of a relative .ts path fails, so the lint forbids it (eslint.config.mjs); import
// statements and require() work.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sharedBrowserFiles, sharedProcessFiles, sharedProcessProblems } from './sharedTests.mjs';

const args = process.argv.slice(2);
const tiers = args.filter((a) => !a.endsWith('.test.ts'));
const named = args.filter((a) => a.endsWith('.test.ts'));
const wanted = tiers.length > 0 || named.length > 0 ? tiers : ['unit', 'webview'];

function findTests(dir) {
  const out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** A whole number ≥ 0 from the environment variable `name`, else `fallback`. */
function batchCount(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`${name} must be a whole number ≥ 0 (0: no shared processes), not "${raw}"`);
    process.exit(2);
  }
  return n;
}

function concurrency() {
  const raw = process.env.CANOPY_TEST_CONCURRENCY;
  if (raw === undefined || raw === '') return availableParallelism() + 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`CANOPY_TEST_CONCURRENCY must be a whole number ≥ 1, not "${raw}"`);
    process.exit(2);
  }
  return n;
}

const resultsDir = resolve('test-results');
const timesFile = join(resultsDir, 'test-times.json');

/** Per-file wall times in ms, keyed by the path relative to the repository root. */
function readTimes() {
  try {
    const raw = JSON.parse(readFileSync(timesFile, 'utf8'));
    return Object.fromEntries(Object.entries(raw).map(([f, ms]) => [relative(process.cwd(), resolve(f)), ms]));
  } catch {
    return {};
  }
}

const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const files = [...wanted.flatMap((tier) => (tier === 'shared' ? sharedProcessFiles : findTests(join('test', tier)))), ...named];
if (files.length === 0) {
  console.error(`no test files found for: ${args.join(' ') || wanted.join(', ')}`);
  process.exit(1);
}
const before = readTimes();
const rel = (f) => relative(process.cwd(), resolve(f));
const known = (f) => before[rel(f)];

// The listed files of this run go into batches (a tier run only: named files run alone): the
// light files into CANOPY_TEST_SHARED batches, the webview files into CANOPY_TEST_SHARED_BROWSER
// batches that share one browser each. CANOPY_TEST_SHARED=0 turns both off.
const sharedDir = join(resultsDir, 'shared');
rmSync(sharedDir, { recursive: true, force: true });
const lightCount = named.length > 0 ? 0 : batchCount('CANOPY_TEST_SHARED', 6);
const browserCount = lightCount === 0 ? 0 : batchCount('CANOPY_TEST_SHARED_BROWSER', 2);
const problems = [...sharedProcessFiles, ...sharedBrowserFiles].flatMap((f) => {
  if (!existsSync(f)) return [`${f}: listed in scripts/sharedTests.mjs but not found (renamed? update the list)`];
  return sharedProcessProblems(readFileSync(f, 'utf8')).map((why) => `${f}: ${why}; it cannot share a process (take it off scripts/sharedTests.mjs)`);
});
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(2);
}
const batchFiles = [];
const batchTime = {};
const inBatch = new Set();
const harness = resolve('test/webview/harness.ts');
/** Writes `count` batch files for those of `listed` this run has, longest first onto the lightest batch. */
function makeBatches(listed, count, name, header) {
  const wanted = new Set(listed);
  const sharable = count > 0 ? files.filter((f) => wanted.has(rel(f))) : [];
  if (sharable.length < 2) return;
  // A file without a recorded time counts 2 s.
  const batches = Array.from({ length: Math.min(count, sharable.length) }, () => ({ ms: 0, files: [] }));
  for (const f of [...sharable].sort((a, b) => (known(b) ?? 2000) - (known(a) ?? 2000))) {
    const lightest = batches.reduce((a, b) => (b.ms < a.ms ? b : a));
    lightest.files.push(f);
    lightest.ms += known(f) ?? 2000;
  }
  mkdirSync(sharedDir, { recursive: true });
  batches.forEach((b, i) => {
    const file = join(sharedDir, `${name}-${i + 1}.test.cjs`);
    const body = b.files
      .sort()
      .map((f) => `describe(${JSON.stringify(rel(f))}, () => {\n  require(${JSON.stringify(resolve(f))});\n});`);
    writeFileSync(file, `// Generated by scripts/test.mjs: these test files share one process (scripts/sharedTests.mjs).\n${header}${body.join('\n')}\n`);
    batchFiles.push(file);
    batchTime[rel(file)] = b.ms;
  });
  for (const f of sharable) inBatch.add(f);
}
makeBatches(sharedProcessFiles, lightCount, 'batch', "const { describe } = require('node:test');\n");
makeBatches(
  sharedBrowserFiles,
  browserCount,
  'batch-browser',
  `const { after, describe } = require('node:test');\nconst harness = require(${JSON.stringify(harness)});\n// One Chromium for the files below, closed after the last one.\nharness.shareBrowser();\nafter(() => harness.closeSharedBrowser());\n`,
);
const runFiles = [...files.filter((f) => !inBatch.has(f)), ...batchFiles];
const order = runFiles
  .map((f, i) => ({ f, i, t: known(f) ?? batchTime[rel(f)], webview: f.startsWith(join('test', 'webview')) }))
  .sort((a, b) => {
    if ((a.t === undefined) !== (b.t === undefined)) return a.t === undefined ? -1 : 1;
    if (a.t !== undefined && b.t !== undefined && a.t !== b.t) return b.t - a.t;
    if (a.webview !== b.webview) return a.webview ? -1 : 1;
    return a.i - b.i;
  })
  .map((x) => x.f);

const n = concurrency();
const sharing = inBatch.size > 0 ? ` (${inBatch.size} of them in ${batchFiles.length} shared processes)` : '';
console.log(`${files.length} test files, ${order.length} processes${sharing}, ${n} at a time`);
mkdirSync(resultsDir, { recursive: true });
const writtenAt = () => (existsSync(timesFile) ? statSync(timesFile).mtimeMs : 0);
const startedAt = writtenAt();
const res = spawnSync(
  process.execPath,
  [
    '--require',
    resolve('scripts/tsHook.cjs'),
    '--test',
    `--test-concurrency=${n}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${pathToFileURL(resolve('scripts/testTimes.mjs')).href}`,
    `--test-reporter-destination=${timesFile}`,
    ...order,
  ],
  // CANOPY_TEST_PARSE_WORKER: parse workers run the bundle the build above made from this source
  // (src/core/ingest/parsePool.ts defaultWorkerFile), not the source through tsx in each worker.
  // CANOPY_TEST_MODEL_DIR: the built-in model the build above converted or checked, which the
  // test helper builtinModelDir() then takes as it is instead of re-hashing it in every process.
  { stdio: 'inherit', env: { ...process.env, CANOPY_TEST: '1', CANOPY_TEST_PARSE_WORKER: resolve('dist/parseWorker.js'), CANOPY_TEST_MODEL_DIR: resolve('models/use-lite') } },
);

// Keep the times of files this run did not touch (a tier or a single file run).
const now = writtenAt() !== startedAt ? readTimes() : {};
if (Object.keys(now).length > 0) {
  const merged = { ...before, ...now };
  writeFileSync(timesFile, `${JSON.stringify(merged, null, 1)}\n`);
  const slowest = Object.entries(now)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([f, ms]) => `${f} ${(ms / 1000).toFixed(1)} s`);
  console.log(`slowest files (wall time, start-up included unless in a shared process): ${slowest.join(', ')}`);
}
process.exit(res.status ?? 1);
