// Traces within bounds (issue 33, finding 7): saved gzip-compressed (plain traces written before
// still read), a retention of count and size applied after each answer, and `canopy traces
// prune` / `info` on demand.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, beforeEach, describe, it } from 'node:test';
import type { AskTrace } from '../../../src/contracts/trace';
import { TraceStore } from '../../../src/core/app/traceStore';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';

const fixture = join(__dirname, '..', '..', 'fixtures', 'traces', 'demo-v1.json');
const demo = JSON.parse(readFileSync(fixture, 'utf8')) as AskTrace;
const trace = (n: number): AskTrace => ({ ...structuredClone(demo), id: `t${n}`, question: `question ${n}`, createdAt: `2026-01-${String(n).padStart(2, '0')}T10:00:00.000Z` });

describe('saved traces within bounds', () => {
  const dirs: string[] = [];
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-retention-'));
    dirs.push(dir);
  });
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('writes gzip (a tenth of the JSON or less), reads it back whole, and still reads a plain trace written before', async () => {
    const store = new TraceStore(join(dir, 'traces'));
    const file = await store.save(trace(1));
    assert.match(file, /\.json\.gz$/);
    const bytes = readFileSync(file);
    assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b], 'gzip magic');
    assert.deepEqual(JSON.parse(gunzipSync(bytes).toString('utf8')), JSON.parse(JSON.stringify(trace(1))));
    assert.ok(bytes.length * 5 < statSync(fixture).size, `${bytes.length} bytes compressed, ${statSync(fixture).size} plain`);
    copyFileSync(fixture, join(dir, 'traces', '2025-12-01T10-00-00-000Z-old.json'));
    const listed = await store.list();
    assert.deepEqual(listed.map((s) => s.name.replace(/^.*-(t1|old)\..*$/, '$1')).sort(), ['old', 't1']);
    const byName = (end: string) => listed.find((s) => s.name.endsWith(end))!.name;
    assert.equal((await store.read(byName('-old.json'))).id, demo.id);
    assert.equal((await store.read(byName('-t1.json.gz'))).id, 't1');
  });

  it('applies the retention after each save: the newest within the count and the size, never the one just saved', async () => {
    const store = new TraceStore(join(dir, 'traces'));
    for (let n = 1; n <= 5; n++) await store.save(trace(n), { maxCount: 3, maxBytes: 0 });
    assert.deepEqual((await store.list()).map((s) => s.id), ['t5', 't4', 't3']);
    assert.equal(readdirSync(join(dir, 'traces')).filter((n) => n.endsWith('.gz')).length, 3);
    const one = statSync(join(dir, 'traces', (await store.list())[0]!.name)).size;
    await store.save(trace(6), { maxCount: 0, maxBytes: Math.floor(one * 2.5) });
    assert.deepEqual((await store.list()).map((s) => s.id), ['t6', 't5'], 'two traces fit in 2.5 traces of bytes');
    await store.save(trace(7), { maxCount: 0, maxBytes: 1 });
    assert.deepEqual((await store.list()).map((s) => s.id), ['t7'], 'the trace just saved stays even past the size');
  });

  it('canopy traces info and prune', async () => {
    const root = join(dir, 'ws');
    mkdirSync(root);
    const store = new TraceStore(join(root, '.canopy', 'index', 'traces'));
    for (let n = 1; n <= 4; n++) await store.save(trace(n));
    const out: string[] = [];
    const io: CliIO = { out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false, env: {}, cwd: root };
    assert.equal(await main(['traces', 'info', '--json'], io), 0, out.join('\n'));
    assert.equal((JSON.parse(out.pop()!) as { traces: number }).traces, 4);
    assert.equal(await main(['traces', 'prune', '--max-count', '1'], io), 0, out.join('\n'));
    assert.match(out.pop()!, /pruned .* to 1 traces, 100\.0 MB: 3 deleted \(.* freed\), 1 kept/);
    assert.deepEqual((await new TraceStore(store.dir).list()).map((s) => s.id), ['t4']);
    assert.equal(await main(['traces', 'prune', '--max-count', '-1'], io), 2);
    assert.equal(await main(['traces', 'tidy'], io), 2);
  });
});
