// `--help` answers with the help of what was named: a command's, or a subcommand's where the
// command has subcommands (`canopy bench realdocs --help`, not the list of benchmarks).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => void stdout.push(l), err: (l) => void stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('canopy … --help', () => {
  it('prints a benchmark’s own options for `bench <what> --help`, and the list for `bench --help`', async () => {
    const sub = capture();
    assert.equal(await main(['bench', 'realdocs', '--help'], sub), 0);
    assert.match(sub.stdout.join('\n'), /^Usage: canopy bench realdocs/);
    assert.match(sub.stdout.join('\n'), /--no-look-ahead/);
    const list = capture();
    assert.equal(await main(['bench', '--help'], list), 0);
    assert.match(list.stdout.join('\n'), /^Usage: canopy bench <what>/);
    const encode = capture();
    assert.equal(await main(['bench', 'encode', '--help'], encode), 0);
    assert.doesNotMatch(encode.stdout.join('\n'), /^Usage: canopy bench <what>/);
  });

  it('prints the command’s help for a command without subcommands, wherever --help stands', async () => {
    const io = capture();
    assert.equal(await main(['ask', 'some question', '--help'], io), 0);
    assert.match(io.stdout.join('\n'), /canopy ask/);
  });
});
