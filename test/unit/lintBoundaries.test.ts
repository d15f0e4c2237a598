// The layer boundaries are lint rules that fail the lint: prove it by linting probe sources
// placed (virtually) in each protected folder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

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
});
