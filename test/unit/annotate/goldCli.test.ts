// `canopy gold import` and `canopy train` argument handling, run in-process: the import writes
// the files and the workspace's annotations file, a re-import adds nothing, and bad flags are
// usage errors with the command's help.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { annotationsPath, AnnotationStore } from '../../../src/core/annotate/store';

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('canopy gold / train CLI', () => {
  it('imports gold into <out>/.canopy/annotations.jsonl, once', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'canopy-goldcli-'));
    try {
      const io = capture();
      assert.equal(await main(['gold', 'import', 'test/fixtures/annotate/musique_slice.jsonl', '--out', out, '--json'], io), 0, io.stderr.join('\n'));
      const summary = JSON.parse(io.stdout[0]!);
      assert.deepEqual([summary.dataset, summary.questions, summary.annotations, summary.added, summary.files], ['musique', 1, 2, 2, 3]);
      const again = capture();
      assert.equal(await main(['gold', 'import', 'test/fixtures/annotate/musique_slice.jsonl', '--out', out, '--json'], again), 0);
      assert.equal(JSON.parse(again.stdout[0]!).added, 0);
      assert.equal((await new AnnotationStore(annotationsPath(out)).read()).annotations.length, 2);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('rejects missing or bad arguments with usage', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['gold', 'import', 'x.jsonl'], /--out <folder> is required/],
      [['gold', 'export', 'x.jsonl', '--out', 'o'], /unknown gold command/],
      [['train'], /--annotations <file> is required/],
      [['train', '--annotations', 'a.jsonl', '--holdout', '1.5'], /--holdout has an invalid value/],
    ];
    for (const [argv, message] of cases) {
      const io = capture();
      assert.equal(await main(argv, io), 2, argv.join(' '));
      assert.match(io.stderr.join('\n'), message);
    }
  });
});
