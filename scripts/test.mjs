// Runs the test tiers that need no VS Code host with Node's own test runner.
//   node scripts/test.mjs            -> unit + webview tiers (what `npm test` runs)
//   node scripts/test.mjs unit       -> test/unit/**/*.test.ts only
//   node scripts/test.mjs webview    -> test/webview/**/*.test.ts only (headless Chromium)
// TypeScript runs through tsx's loader. The build runs first: the webview tier loads the bundles
// and the CLI tests use the built-in encoder model it converts.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const tiers = process.argv.slice(2);
const wanted = tiers.length > 0 ? tiers : ['unit', 'webview'];

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

const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const files = wanted.flatMap((tier) => findTests(join('test', tier)));
if (files.length === 0) {
  console.error(`no test files found for tiers: ${wanted.join(', ')}`);
  process.exit(1);
}
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files],
  { stdio: 'inherit', env: { ...process.env, CANOPY_TEST: '1' } },
);
process.exit(res.status ?? 1);
