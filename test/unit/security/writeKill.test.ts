// kill -9 during annotation writes and adapter-checkpoint writes: a child process writes in a
// loop through the real AnnotationStore / trainer + saveCheckpoint and is killed with SIGKILL at a
// random moment after its first acknowledged write; after every kill the files reopen intact —
// no corrupt annotation line, every acknowledged annotation and checkpoint present and readable,
// checkpoint ids matching their weights — and the next writer is not blocked by the dead one's lock.
// npm test runs 2 kills of each; CANOPY_WRITE_KILL_RUNS=100 (npm run test:kill:writes) for the campaign.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AnnotationStore, makeAnnotation } from '../../../src/core/annotate/store';
import { listCheckpoints, loadCheckpoint, makeCheckpoint, weightsOf } from '../../../src/core/train/checkpoint';
import { tsNode } from '../../helpers/tsNode';

const RUNS = Number(process.env.CANOPY_WRITE_KILL_RUNS ?? 2);
const child = fileURLToPath(new URL('../../helpers/writeChild.ts', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'canopy-write-kill-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

interface KilledRun {
  acked: string[];
  signal: NodeJS.Signals | null;
}

/** Starts the child, waits for its first acknowledged write, lets it run a random 0–300 ms more, then SIGKILLs it. */
function runAndKill(args: string[]): Promise<KilledRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...tsNode, child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: string[] = [];
    let buffered = '';
    let stderr = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the child never acknowledged a write: ${stderr}`));
    }, 60_000);
    proc.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^(?:added|saved) (.+)$/.exec(line);
        if (m) acked.push(m[1]!);
      }
      if (acked.length > 0 && timer === undefined) timer = setTimeout(() => proc.kill('SIGKILL'), Math.floor(Math.random() * 300));
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    proc.on('exit', (code, signal) => {
      clearTimeout(giveUp);
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`the child exited by itself (${code}): ${stderr}`));
      // Lines written before the kill but not yet read are acknowledged too.
      else setImmediate(() => resolve({ acked, signal }));
    });
  });
}

describe('kill -9 during writes', () => {
  it('regression (found by the campaign): a lock left empty by a writer killed before writing its pid is broken after a second, not after staleLockMs', async () => {
    const file = join(tmp, 'empty-lock', 'annotations.jsonl');
    const store = new AnnotationStore(file, { lockTimeoutMs: 3_000, staleLockMs: 60_000 });
    await store.add([makeAnnotation({ question: 'Before?', anchor: { file: 'a.md', charStart: 0, charEnd: 3 }, text: 'abc', source: 'editor' })]);
    writeFileSync(`${file}.lock`, '');
    const old = new Date(Date.now() - 2_000);
    utimesSync(`${file}.lock`, old, old);
    const t0 = Date.now();
    const added = await store.add([makeAnnotation({ question: 'After?', anchor: { file: 'a.md', charStart: 4, charEnd: 7 }, text: 'def', source: 'editor' })]);
    assert.equal(added.length, 1);
    assert.ok(Date.now() - t0 < 2_500, `waited ${Date.now() - t0} ms`);
    assert.equal((await store.read()).annotations.length, 2);
  });

  it(`annotations.jsonl reopens intact after ${RUNS} kills mid-write`, async () => {
    const file = join(tmp, 'ws', '.canopy', 'annotations.jsonl');
    const store = new AnnotationStore(file, { lockTimeoutMs: 5_000 });
    const acked = new Set<string>();
    let lockLeft = 0;
    let tempsLeft = 0;
    let next = 0;
    for (let run = 0; run < RUNS; run++) {
      const r = await runAndKill(['annotations', file, String(next)]);
      assert.equal(r.signal, 'SIGKILL');
      r.acked.forEach((id) => acked.add(id));
      next += 10_000; // each run's annotations have their own ids
      if (existsSync(`${file}.lock`)) lockLeft++;
      // A kill mid-write may leave its temporary file; the next writer removes it.
      tempsLeft = readdirSync(join(tmp, 'ws', '.canopy')).filter((n) => n.endsWith('.tmp')).length;
      assert.ok(tempsLeft <= 1, `run ${run}: ${tempsLeft} temporary files`);
      const { annotations, corrupt } = await store.read();
      assert.deepEqual(corrupt, [], `run ${run}: no corrupt line`);
      const ids = annotations.map((a) => a.id);
      assert.equal(new Set(ids).size, ids.length, `run ${run}: no duplicate`);
      for (const id of acked) assert.ok(ids.includes(id), `run ${run}: acknowledged annotation ${id} is there`);
    }
    // The dead writer's lock does not block the next one (its pid is gone).
    const t0 = Date.now();
    const added = await store.add([makeAnnotation({ question: 'After the kills?', anchor: { file: 'a.md', charStart: 0, charEnd: 3 }, text: 'abc', source: 'editor' })]);
    assert.equal(added.length, 1);
    assert.ok(Date.now() - t0 < 4_000, 'the next write did not wait for a stale lock to age');
    const total = (await store.read()).annotations.length;
    console.log(`annotation kill -9: ${RUNS} runs killed, ${acked.size} acknowledged annotations all present, ${total} lines, 0 corrupt; kills that landed inside a change (lock held): ${lockLeft}; temporary files left at the end: ${tempsLeft}`);
  });

  it(`adapter checkpoints reopen intact after ${RUNS} kills mid-write`, async () => {
    const dir = join(tmp, 'adapters');
    const acked = new Set<string>();
    let tempsLeft = 0;
    for (let run = 0; run < RUNS; run++) {
      const r = await runAndKill(['checkpoints', dir, String(run + 1)]);
      assert.equal(r.signal, 'SIGKILL');
      r.acked.forEach((f) => acked.add(f));
      tempsLeft = readdirSync(dir).filter((n) => n.endsWith('.tmp')).length;
      assert.ok(tempsLeft <= 1, `run ${run}: ${tempsLeft} temporary files`);
      const files = readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
      for (const name of files) {
        const c = await loadCheckpoint(join(dir, name)); // parses and validates, or throws
        const w = weightsOf(c); // A and B have the declared sizes
        assert.ok([...w.A, ...w.B].every(Number.isFinite));
        const again = makeCheckpoint(w, { baseEncoderId: c.baseEncoderId, trainedOn: c.trainedOn, metrics: c.metrics });
        assert.equal(again.id, c.id, `run ${run}: ${name} holds exactly the weights its id was made from`);
        assert.equal(name, `${c.id}.json`);
      }
      for (const f of acked) assert.ok(existsSync(f), `run ${run}: acknowledged checkpoint ${f} is there`);
      assert.equal((await listCheckpoints(dir)).length, files.length, 'every checkpoint file lists');
    }
    console.log(`checkpoint kill -9: ${RUNS} runs killed, ${acked.size} acknowledged checkpoints all present and loadable, ${readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.')).length} files; temporary files left at the end: ${tempsLeft}`);
  });
});
