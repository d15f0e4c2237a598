// `canopy bench encode` runs end to end on a tiny configuration (shape of the output only:
// timing goals belong in BENCHMARKS.md, not in tests).
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { type BenchRow, runBenchEncode } from '../../../src/cli/commands/benchEncode';
import { UsageError } from '../../../src/cli/io';
import { builtinModelDir } from './support/builtinModel';

describe('bench encode', () => {
  let modelDir: string;
  before(() => {
    modelDir = builtinModelDir();
  });

  it('prints one JSON object with a row per length and batch size', async () => {
    const lines: string[] = [];
    const code = await runBenchEncode(['encode', '--model-dir', modelDir, '--pieces', '20,40', '--batches', '1,4', '--sentences', '4', '--repeats', '1', '--json'], (l) => lines.push(l));
    assert.equal(code, 0);
    assert.equal(lines.length, 1);
    const report = JSON.parse(lines[0] as string) as { machine: { cpus: number; node: string }; results: BenchRow[] };
    assert.equal(report.machine.node, process.version);
    assert.deepEqual(
      report.results.map((r) => [r.batch, r.sentences]),
      [
        [1, 4],
        [4, 4],
        [1, 4],
        [4, 4],
      ],
    );
    for (const r of report.results) {
      assert.ok(r.pieces <= (report.results.indexOf(r) < 2 ? 20 : 40) && r.pieces > 10, `pieces ${r.pieces}`);
      assert.ok(r.pipelineSentencesPerSec > 0 && r.rawSentencesPerSec > 0 && r.ratio > 0 && r.cpuRatio > 0 && r.jsMs >= 0);
    }
  });

  it('prints a Markdown table by default', async () => {
    const lines: string[] = [];
    await runBenchEncode(['--model-dir', modelDir, '--pieces', '20', '--batches', '2', '--sentences', '2', '--repeats', '1'], (l) => lines.push(l));
    assert.match(lines.join('\n'), /\| pieces\/sentence \| batch \|[\s\S]*\n\| \d+(\.\d)? \| 2 \|/);
  });

  it('rejects bad options as usage errors', async () => {
    await assert.rejects(runBenchEncode(['--batches', '0'], () => undefined), UsageError);
    await assert.rejects(runBenchEncode(['--model-dir', modelDir, '--pieces', '500'], () => undefined), UsageError);
    await assert.rejects(runBenchEncode(['decode'], () => undefined), UsageError);
  });
});
