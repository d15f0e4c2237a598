/**
 * `npm run train:judge -- --data ../shared/data --work <dir>`: trains the judgment models shipped in
 * src/core/judge/models/ from the development data, reproducibly (seeded):
 *  1. collect (collect.ts): every development set asked through the pipeline an ask runs by
 *     default, each question's reader input, gold and critic verdicts dumped into <work>/dumps
 *     (skipped with --reuse when the dumps are there);
 *  2. the reader model (trainReader.ts --write), with its held-back and leave-one-dataset-out table;
 *  3. the critic model (trainCritic.ts --write), on the new reader's view of the evidence.
 * The reports go to <work>/reader.json and <work>/critic.json; docs/evaluation.md ("Learned
 * judgment") holds the figures of the run the shipped models came from.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const repo = resolve(__dirname, '../..');

function run(script: string, args: string[]): void {
  process.stderr.write(`\n== ${script} ${args.join(' ')}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'tools/judge', script), ...args], { stdio: 'inherit', cwd: repo });
  if (r.status !== 0) throw new Error(`${script} failed (exit ${r.status})`);
}

function main(): void {
  const { values } = parseArgs({ options: { data: { type: 'string' }, work: { type: 'string' }, cache: { type: 'string' }, seed: { type: 'string' }, sample: { type: 'string' }, reuse: { type: 'boolean' } } });
  if (!values.data || !values.work) throw new Error('usage: npm run train:judge -- --data <dir> --work <dir> [--cache <dir>] [--seed 1] [--sample 700] [--reuse]');
  const work = resolve(values.work);
  const dumps = join(work, 'dumps');
  const seed = values.seed ?? '1';
  const have = existsSync(dumps) && readdirSync(dumps).some((n) => n.endsWith('.jsonl'));
  if (!values.reuse || !have) run('collect.ts', ['--data', resolve(values.data), '--out', dumps, '--seed', seed, '--sample', values.sample ?? '700', ...(values.cache ? ['--cache', resolve(values.cache)] : [])]);
  run('trainReader.ts', ['--dumps', dumps, '--seed', seed, '--write', '--report', join(work, 'reader.json')]);
  // The shipped critic's stated precision of a stop (docs/evaluation.md, "Learned judgment").
  run('trainCritic.ts', ['--dumps', dumps, '--seed', seed, '--precision', '0.95', '--write', '--report', join(work, 'critic.json')]);
}

main();
