// The `canopy` CLI run in-process: exit codes, usage errors and the index summary.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main';
import type { CliIO } from '../../src/cli/io';

const demo = fileURLToPath(new URL('../fixtures/demo', import.meta.url));

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('canopy CLI', () => {
  it('prints usage and exits 2 without a command', async () => {
    const io = capture();
    assert.equal(await main([], io), 2);
    assert.match(io.stdout.join('\n'), /Usage: canopy <command>/);
  });

  it('rejects an unknown command', async () => {
    const io = capture();
    assert.equal(await main(['frobnicate'], io), 2);
    assert.match(io.stderr.join('\n'), /unknown command "frobnicate"/);
  });

  it('rejects bad flags with the command help', async () => {
    const io = capture();
    assert.equal(await main(['index', demo, '--max-file-mb', 'lots'], io), 2);
    assert.match(io.stderr.join('\n'), /--max-file-mb must be a positive number/);
    assert.match(io.stderr.join('\n'), /Usage: canopy index/);
  });

  it('indexes the demo corpus and reports every format', async () => {
    const io = capture();
    assert.equal(await main(['index', demo, '--json'], io), 0);
    const summary = JSON.parse(io.stdout.join('\n'));
    assert.deepEqual(Object.keys(summary.byFormat).sort(), ['csv', 'html', 'jsonl', 'markdown', 'notebook', 'subtitles', 'text', 'tsv']);
    assert.ok(summary.files.some((f: { path: string }) => f.path === 'survey-report.md'));
  });

  it('names a missing folder in the error', async () => {
    const io = capture();
    assert.equal(await main(['index', '/no/such/folder'], io), 1);
    assert.match(io.stderr.join('\n'), /\/no\/such\/folder is not a folder/);
  });
});
