// The layer boundaries are lint rules that fail the lint: prove it by linting probe sources
// placed (virtually) in each protected folder.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
// @ts-expect-error -- the flat config is plain JavaScript without types
import { CORE_LAYERS, cycleRule, importXSettings, importXPlugins } from '../../eslint.config.mjs';

// The probes test the layer rules; import-x/no-cycle would parse the whole tree behind each probe's
// import (most of this file's time), and has its own probe at the end.
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname, overrideConfig: { rules: { 'import-x/no-cycle': 'off' } } });

async function errorsFor(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.severity === 2).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('layer boundaries', () => {
  for (const folder of ['src/core/encode', 'src/core', 'src/protocol', 'webview']) {
    it(`fails the lint when ${folder} imports vscode`, async () => {
      const errors = await errorsFor(`${folder}/probe.ts`, "import * as vscode from 'vscode';\nexport const x = vscode;\n");
      assert.ok(errors.some((e) => /restricted-imports.*vscode/.test(e)), errors.join('\n'));
    });
    it(`fails the lint when ${folder} imports only vscode types`, async () => {
      const errors = await errorsFor(`${folder}/probe.ts`, "import type { Uri } from 'vscode';\nexport type X = Uri;\n");
      assert.ok(errors.some((e) => /restricted-imports.*vscode/.test(e)), errors.join('\n'));
    });
  }

  it('fails the lint when the webview imports a Node built-in', async () => {
    for (const mod of ['fs', 'node:fs', 'child_process', 'node:path']) {
      const errors = await errorsFor('webview/probe.ts', `import * as m from '${mod}';\nexport const x = m;\n`);
      assert.ok(errors.some((e) => /restricted-imports/.test(e)), `${mod}: ${errors.join('\n')}`);
    }
  });

  it('lets the extension import vscode and the core import Node built-ins', async () => {
    assert.deepEqual(await errorsFor('src/extension/probe.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n"), []);
    assert.deepEqual(await errorsFor('src/core/probe.ts', "import * as fs from 'node:fs';\nexport const x = fs;\n"), []);
  });

  it('fails the lint when a core folder imports a folder above it', async () => {
    // Every pair of the declared order, in the forbidden direction (lower imports higher).
    const folders = (CORE_LAYERS as string[]).filter((f) => f !== '(root)');
    const pairs: Array<[string, string]> = [['(root)', 'app'], ['(root)', 'text'], ['index', 'topics'], ['compress', 'read'], ['encode', 'ingest'], ['engine', 'app']];
    for (let i = 0; i + 1 < folders.length; i++) pairs.push([folders[i]!, folders[i + 1]!]);
    for (const [low, high] of pairs) {
      const file = low === '(root)' ? 'src/core/probe.ts' : `src/core/${low}/probe.ts`;
      // An existing module of the higher folder (an import that does not resolve is not checked against glob targets).
      const module = readdirSync(new URL(`../../src/core/${high}/`, import.meta.url)).find((n) => n.endsWith('.ts'))!.replace(/\.ts$/, '');
      const spec = low === '(root)' ? `./${high}/${module}` : `../${high}/${module}`;
      const errors = await errorsFor(file, `import { x } from '${spec}';\nexport const y = x;\n`);
      assert.ok(errors.some((e) => /no-restricted-paths/.test(e)), `${low} → ${high}: ${errors.join('\n')}`);
    }
  });

  it('fails the lint on a file in a src/core folder missing from the layer list, and every real folder is listed', async () => {
    const errors = await errorsFor('src/core/newstage/probe.ts', 'export const x = 1;\n');
    assert.ok(errors.some((e) => /no-restricted-syntax: This src\/core folder is not in CORE_LAYERS/.test(e)), errors.join('\n'));
    assert.deepEqual(await errorsFor('src/core/encode/probe.ts', 'export const x = 1;\n'), [], 'a listed folder is linted as before');
    assert.ok((await errorsFor('src/core/newstage/probe.ts', 'const x = 1;\nexport default x;\n')).some((e) => /Use named exports/.test(e)), 'the other syntax rules still hold there');
    const real = readdirSync(new URL('../../src/core/', import.meta.url), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    assert.deepEqual(real.filter((name) => !(CORE_LAYERS as string[]).includes(name)), []);
  });

  it("docs/architecture.md's layer chain is CORE_LAYERS, in order", () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const chain = /```\n(\(root\) →[^`]*)```/.exec(doc)![1]!.split(/→|\s+/).map((s) => s.trim()).filter((s) => s.length > 0);
    assert.deepEqual(chain, CORE_LAYERS);
  });

  it('lets a core folder import the folders below it and the contracts', async () => {
    assert.deepEqual(await errorsFor('src/core/topics/probe.ts', "import { CorpusIndex } from '../index/corpusIndex';\nimport type { Item } from '../../contracts/region';\nexport type X = CorpusIndex | Item;\n"), []);
    assert.deepEqual(await errorsFor('src/core/app/probe.ts', "import { ask } from '../engine/ask';\nexport const x = ask;\n"), []);
  });

  it('fails the lint when the core imports the eval tooling, a host or the protocol, and when the webview or the protocol import the core', async () => {
    const cases: Array<[string, string]> = [
      ['src/core/app/probe.ts', '../../eval/harness'],
      ['src/core/app/probe.ts', '../../cli/main'],
      ['src/core/app/probe.ts', '../../protocol/messages'],
      ['src/contracts/probe.ts', '../core/errors'],
      ['src/protocol/probe.ts', '../core/errors'],
      ['webview/probe.ts', '../src/core/errors'],
      ['webview/probe.ts', '../src/eval/harness'],
      ['src/extension/probe.ts', '../eval/harness'],
      ['src/eval/probe.ts', '../cli/main'],
    ];
    for (const [file, spec] of cases) {
      const errors = await errorsFor(file, `import { x } from '${spec}';\nexport const y = x;\n`);
      assert.ok(errors.some((e) => /no-restricted-paths/.test(e)), `${file} → ${spec}: ${errors.join('\n')}`);
    }
    assert.deepEqual(await errorsFor('webview/probe.ts', "import type { AskTrace } from '../src/contracts/trace';\nimport type { PlaceholderView } from '../src/protocol/messages';\nexport type X = AskTrace | PlaceholderView;\n"), []);
  });

  it('fails the lint on an import cycle, with the rule the project uses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-cycle-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import { b } from './b';\nexport const a = () => b();\n");
      writeFileSync(join(dir, 'b.ts'), "import { a } from './a';\nexport const b = () => a;\n");
      writeFileSync(join(dir, 'c.ts'), "export const c = 1;\n");
      const probe = new ESLint({
        cwd: dir,
        overrideConfigFile: true,
        overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: (await import('typescript-eslint')).parser }, plugins: importXPlugins, settings: importXSettings, rules: cycleRule }],
      });
      const results = await probe.lintFiles(['a.ts', 'b.ts', 'c.ts']);
      const byFile = new Map(results.map((r) => [r.filePath.slice(dir.length + 1), r.messages.map((m) => m.ruleId)]));
      assert.ok(byFile.get('a.ts')?.includes('import-x/no-cycle'), JSON.stringify([...byFile]));
      assert.ok(byFile.get('b.ts')?.includes('import-x/no-cycle'), JSON.stringify([...byFile]));
      assert.deepEqual(byFile.get('c.ts'), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
