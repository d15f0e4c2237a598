// `canopy ask --json | …`: a trace larger than a pipe's buffer reaches the reader whole. The
// command used to exit as soon as it had answered, which dropped what the pipe had not taken yet
// and cut the JSON at 64 KiB.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const canopyBin = join(__dirname, '..', '..', '..', 'bin', 'canopy.js');
const execFileAsync = promisify(execFile);

/**
 * Runs `canopy <args> | <reader>` through the shell: stdout on a real pipe (pipe(2)), as in a
 * terminal. The reader is Node copying stdin to stdout, not `cat`, which a minimal PATH may lack.
 */
async function runPiped(args: string[]): Promise<string> {
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  const reader = [process.execPath, '-e', 'process.stdin.pipe(process.stdout)'].map(quote).join(' ');
  const { stdout } = await execFileAsync('sh', ['-c', `${[process.execPath, canopyBin, ...args].map(quote).join(' ')} | ${reader}`], { maxBuffer: 1 << 26 });
  return stdout;
}

describe('canopy writes all of its output to a pipe', () => {
  it('ask --json | reader: a trace over 64 KiB arrives whole', async () => {
    const root = mkdtempSync(join(tmpdir(), 'canopy-pipe-'));
    try {
      const sections = Array.from({ length: 8 }, (_, s) => `## Orchard ${s}\n\n${Array.from({ length: 40 }, (_, i) => `Tree ${i} of orchard ${s} is a ${['pear', 'apple', 'plum', 'cherry'][i % 4]} planted in spring ${1990 + i}.`).join(' ')}\n`);
      writeFileSync(join(root, 'orchards.md'), `# Orchards\n\n${sections.join('\n')}`);
      await execFileAsync(process.execPath, [canopyBin, 'index', root, '--json'], { maxBuffer: 1 << 24 });
      const stdout = await runPiped(['ask', '--dir', root, '--json', '--', 'Which plum trees were planted in spring 1993?']);
      assert.ok(stdout.length > 65_536, `the trace is larger than a pipe buffer (${stdout.length} bytes)`);
      const trace = JSON.parse(stdout.trim().split('\n').pop()!) as { question: string; answer: { text: string } };
      assert.equal(trace.question, 'Which plum trees were planted in spring 1993?');
      assert.ok(trace.answer.text.length > 0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
