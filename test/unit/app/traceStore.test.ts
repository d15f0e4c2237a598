// The trace store's summary index (src/core/app/traceStore.ts): after each answer the Questions
// view lists the history; it must not parse every saved trace again to do so (issue 18). Saves
// and deletes keep the index; traces it does not know (written by another process, or an index
// lost or corrupt) are read once; files that are gone leave the list.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import type { AskTrace } from '../../../src/contracts/trace';
import { SUMMARY_INDEX, TraceStore } from '../../../src/core/app/traceStore';

const demo = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'traces', 'demo-v1.json'), 'utf8')) as AskTrace;

/** A well-formed saved trace (the demo fixture) with what the history shows changed. */
function trace(n: number, extra: Partial<AskTrace> = {}): AskTrace {
  const t = structuredClone(demo);
  return {
    ...t,
    id: `t${n}`,
    question: `question ${n}`,
    createdAt: `2026-01-0${n}T10:00:00.000Z`,
    answer: { ...t.answer, mode: n % 2 ? 'extractive' : 'llm' },
    totals: { ...t.totals, evidenceTokens: 100 * n },
    ...extra,
  };
}

describe('TraceStore', () => {
  const dirs: string[] = [];
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-traces-'));
    dirs.push(dir);
  });
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('lists saved traces newest first without parsing them again, also from a new store on the same folder', async () => {
    const store = new TraceStore(join(dir, 'traces'));
    for (const n of [1, 2, 3]) await store.save(trace(n));
    await store.save(trace(4, { replay: { of: 't2', changed: {}, notes: [] } }));
    const listed = await store.list();
    assert.deepEqual(
      listed.map((s) => [s.id, s.question, s.mode, s.evidenceTokens, s.replayOf]),
      [
        ['t4', 'question 4', 'llm', 400, 't2'],
        ['t3', 'question 3', 'extractive', 300, undefined],
        ['t2', 'question 2', 'llm', 200, undefined],
        ['t1', 'question 1', 'extractive', 100, undefined],
      ],
    );
    assert.equal(store.counters.parsedForList, 0, 'saves fed the index: no trace was read to list');
    // A new window (a new store) reads the index file, not the traces.
    const fresh = new TraceStore(join(dir, 'traces'));
    assert.deepEqual(await fresh.list(), listed);
    await fresh.list();
    assert.equal(fresh.counters.parsedForList, 0);
  });

  it('reads only traces the index does not know, drops files that are gone, and forgets deleted ones', async () => {
    const store = new TraceStore(join(dir, 'traces'));
    await store.save(trace(1));
    await store.save(trace(2));
    // Another process writes a trace; one file disappears behind the store's back.
    writeFileSync(join(dir, 'traces', 'x-t5.json'), JSON.stringify(trace(5)));
    const names = (await store.list()).map((s) => s.name);
    unlinkSync(join(dir, 'traces', names.find((n) => n.includes('t1'))!));
    const listed = await store.list();
    assert.deepEqual(
      listed.map((s) => s.id),
      ['t5', 't2'],
    );
    assert.equal(store.counters.parsedForList, 1, 'only the unknown trace was read');
    await store.delete(listed[0]!.name);
    assert.deepEqual(
      (await new TraceStore(join(dir, 'traces')).list()).map((s) => s.id),
      ['t2'],
    );
    const index = JSON.parse(readFileSync(join(dir, 'traces', SUMMARY_INDEX), 'utf8')) as { traces: Record<string, unknown> };
    assert.deepEqual(Object.keys(index.traces).length, 1);
  });

  it('rebuilds a corrupt index from the traces, with a warning; unreadable traces are skipped and logged', async () => {
    const store = new TraceStore(join(dir, 'traces'));
    await store.save(trace(1));
    await store.save(trace(2));
    writeFileSync(join(dir, 'traces', SUMMARY_INDEX), '{"version": 1, "traces": [');
    writeFileSync(join(dir, 'traces', 'broken.json'), 'not json');
    const logs: string[] = [];
    const fresh = new TraceStore(join(dir, 'traces'), { log: (level, message) => logs.push(`${level}: ${message}`) });
    assert.deepEqual(
      (await fresh.list()).map((s) => s.id),
      ['t2', 't1'],
    );
    assert.equal(fresh.counters.parsedForList, 3);
    assert.ok(logs.some((l) => l.startsWith('warn:') && l.includes(SUMMARY_INDEX) && l.includes('read again')), logs.join('\n'));
    assert.ok(logs.some((l) => l.startsWith('warn: trace broken.json skipped')), logs.join('\n'));
    // The rebuilt index serves the next store; the broken file is tried again (it may be fixed), the others are not.
    const next = new TraceStore(join(dir, 'traces'));
    await next.list();
    assert.equal(next.counters.parsedForList, 1);
  });

  it('reads and deletes by bare file name only; a missing folder lists nothing', async () => {
    const store = new TraceStore(join(dir, 'traces'));
    assert.deepEqual(await store.list(), []);
    const file = await store.save(trace(3));
    const name = file.split(/[\\/]/).pop()!;
    assert.equal((await store.read(name)).id, 't3');
    assert.equal((await store.find('t3'))?.id, 't3');
    assert.equal(await store.find('nope'), undefined);
    for (const bad of ['../secrets.json', '/etc/passwd', 'a/b.json', SUMMARY_INDEX, '.hidden.json', 'x.txt']) {
      await assert.rejects(store.read(bad), /not a trace file name/, bad);
      await assert.rejects(store.delete(bad), /not a trace file name/, bad);
    }
  });
});
