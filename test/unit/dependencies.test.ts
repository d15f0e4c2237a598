// What ships at run time (issue 33, finding 9): a package that only the research tooling imports
// (src/eval: evaluation, benchmarks, the vectra peer — bundled into dist/cliTools.js at build
// time, never in the VSIX) is a devDependency, so `npm ci --omit=dev` and the dependency list stay
// what the extension and the `canopy` commands need.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mts|cts|js|mjs)$/.test(name) ? [p] : [];
  });
}

/** The packages a file imports or requires (bare specifiers, by package name). */
function packagesOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"./][^'"]*)['"]/gm)) {
    const spec = m[1]!;
    const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
    if (!name.startsWith('node:') && !builtinModules.includes(name)) out.add(name);
  }
  return out;
}

describe('runtime dependencies', () => {
  const shipped = ['src/core', 'src/contracts', 'src/protocol', 'src/extension', 'src/cli', 'webview'];
  const used = new Map<string, Set<string>>();
  for (const dir of [...shipped, 'src/eval']) for (const f of files(join(root, dir))) for (const p of packagesOf(f)) used.set(p, (used.get(p) ?? new Set()).add(relative(root, f)));
  const researchOnly = (name: string) => [...(used.get(name) ?? [])].every((f) => f.startsWith('src/eval/'));

  it('a package only the research tooling (src/eval) imports is a devDependency', () => {
    const misplaced = Object.keys(pkg.dependencies).filter((name) => used.has(name) && researchOnly(name));
    assert.deepEqual(misplaced, []);
    for (const name of ['vectra', 'js-tiktoken']) {
      assert.ok(researchOnly(name), `${name} is imported by the research tooling only`);
      assert.ok(name in pkg.devDependencies && !(name in pkg.dependencies), `${name} is a devDependency`);
    }
  });
});
