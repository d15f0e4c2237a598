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
import { makeCheckpoint, saveCheckpoint } from '../../../src/core/train/checkpoint';
import { initLowRank } from '../../../src/core/train/lowRank';

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

  it('train --list: checkpoints newest first with their held-back figures (the rollback list)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'canopy-goldcli-list-'));
    try {
      const w = initLowRank(4, 1, 1);
      const report = { before: { decisionAccuracy: 0.3, goldRecall: 0.9, evidenceTokens: 100 }, after: { decisionAccuracy: 0.5, goldRecall: 0.92, evidenceTokens: 90 } };
      const info = { baseEncoderId: 'e', trainedOn: { questions: 3, annotations: 5, pairs: 7, validationPairs: 1 }, metrics: { report } };
      const older = makeCheckpoint(w, { ...info, createdAt: '2026-01-01T00:00:00.000Z' });
      w.A[0] = 0.5;
      const newer = makeCheckpoint(w, { ...info, createdAt: '2026-02-01T00:00:00.000Z' });
      await saveCheckpoint(dir, older);
      await saveCheckpoint(dir, newer);
      const io = capture();
      assert.equal(await main(['train', '--list', '--out', dir], io), 0, io.stderr.join('\n'));
      assert.match(io.stdout[0]!, new RegExp(`^${newer.id} `));
      assert.match(io.stdout[1]!, /decision acc 30\.0% → 50\.0%, gold recall 90\.0% → 92\.0%, tokens 100 → 90/);
      assert.match(io.stdout[3]!, new RegExp(`^${older.id} `));
      const json = capture();
      assert.equal(await main(['train', '--list', '--out', dir, '--json'], json), 0);
      assert.deepEqual(
        JSON.parse(json.stdout[0]!).checkpoints.map((c: { id: string }) => c.id),
        [newer.id, older.id],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects missing or bad arguments with usage', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['gold', 'import', 'x.jsonl'], /--out <folder> is required/],
      [['gold', 'export', 'x.jsonl', '--out', 'o'], /unknown gold command/],
      [['train'], /--annotations <file> is required/],
      [['train', '--annotations', 'a.jsonl', '--holdout', '1.5'], /--holdout has an invalid value/],
      [['train', '--annotations', 'a.jsonl', '--select', 'loss', '--blend'], /--blend needs --select cross-validated or recall-guard/],
      [['train', '--annotations', 'a.jsonl', '--select', 'best'], /--select must be cross-validated, recall-guard or loss/],
      [['train', '--annotations', 'a.jsonl', '--validation', '1'], /--validation has an invalid value/],
      // The default selection is cross-validated: a validation share would be ignored, so it is refused.
      [['train', '--annotations', 'a.jsonl', '--validation', '0.25'], /--validation is for --select recall-guard or loss/],
      [['train', '--annotations', 'a.jsonl', '--folds', '1'], /--folds has an invalid value/],
      [['train', '--annotations', 'a.jsonl', '--select', 'recall-guard', '--folds', '3'], /--folds is for --select cross-validated/],
      [['train', '--annotations', 'a.jsonl', '--prune-pairs', '--no-prune-pairs'], /--prune-pairs and --no-prune-pairs contradict/],
    ];
    for (const [argv, message] of cases) {
      const io = capture();
      assert.equal(await main(argv, io), 2, argv.join(' '));
      assert.match(io.stderr.join('\n'), message);
    }
  });
});
