// The node-encoder adapter in use (design §10): a checkpoint given to AskService.ask (per
// request or through the `adapterCheckpoint` setting) changes the pipeline's node scores and is
// recorded in the trace; a missing, corrupt or foreign checkpoint is returned as a warning naming
// the file, and the untrained encoder is used. Also the inspector's `gold/mark` request on a real trace.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { openServices, type TestServices } from '../../helpers/services';
import { loadAdapter, makeCheckpoint, saveCheckpoint } from '../../../src/core/train/checkpoint';
import { seededRandom } from '../../../src/core/random';
import { initLowRank } from '../../../src/core/train/lowRank';
import type { AskTrace, TraceNode } from '../../../src/contracts/trace';
import { ProtocolError } from '../../../src/protocol/rpc';
import { inspectorRequestHandlers, type GoldMark, type InspectorRequestHost } from '../../../src/extension/views/inspectorRequests';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';

/** Scores of every scored node of round 1, by node id. */
function roundOneScores(t: AskTrace): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (n: TraceNode) => {
    if (n.score !== undefined) out.set(n.id, n.score);
    n.children.forEach(walk);
  };
  for (const it of t.rounds[0]!.retrieved) if (it.tree) walk(it.tree);
  return out;
}

describe('adapter checkpoints in AskService.ask', () => {
  let dir: string;
  let indexDir: string;
  let ws: TestServices;
  let base: AskTrace;
  let checkpointFile: string;
  let checkpointId: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-adapter-'));
    indexDir = join(dir, 'index');
    ws = openServices({ root: demo, indexDir });
    await ws.index.index(ws.settings);
    base = (await ws.ask.ask(question, ws.settings, { critic: 'none' })).trace;
    // A deliberately strong adapter (A far from zero), so node scores must move.
    const w = initLowRank(512, 4, 7);
    const rand = seededRandom(11);
    for (let i = 0; i < w.A.length; i++) w.A[i] = (rand() * 2 - 1) * 2;
    const c = makeCheckpoint(w, { baseEncoderId: base.settings.encoderId, trainedOn: { questions: 0, annotations: 0, pairs: 0, validationPairs: 0 }, metrics: {} });
    checkpointId = c.id;
    checkpointFile = await saveCheckpoint(join(dir, 'adapters'), c);
  });

  after(async () => {
    await ws?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a checkpoint changes node scores and is recorded in the trace', async () => {
    const { trace: t, warnings } = await ws.ask.ask(question, ws.settings, { critic: 'none', adapter: checkpointFile });
    assert.equal(t.settings.adapterId, checkpointId);
    assert.deepEqual(warnings, []);
    const before = roundOneScores(base);
    const afterScores = roundOneScores(t);
    let common = 0;
    let changed = 0;
    for (const [id, s] of afterScores) {
      const b = before.get(id);
      if (b === undefined) continue;
      common++;
      if (Math.abs(b - s) > 1e-4) changed++;
    }
    assert.ok(common > 5, `round 1 shares scored nodes (${common})`);
    assert.ok(changed > common / 2, `most shared node scores changed (${changed} of ${common})`);
    // The same checkpoint through the setting, given with the request to the same service.
    const viaSetting = { ...ws.settings, adapterCheckpoint: checkpointFile };
    const t2 = (await ws.ask.ask(question, viaSetting, { critic: 'none' })).trace;
    assert.equal(t2.settings.adapterId, checkpointId);
    assert.deepEqual([...roundOneScores(t2)], [...afterScores]);
    // '' per request switches the setting's adapter off.
    const t3 = (await ws.ask.ask(question, viaSetting, { critic: 'none', adapter: '' })).trace;
    assert.equal(t3.settings.adapterId, undefined);
    // And the next request without the setting asks untrained again: nothing was kept from the last one.
    const t4 = (await ws.ask.ask(question, ws.settings, { critic: 'none' })).trace;
    assert.equal(t4.settings.adapterId, undefined);
  });

  it('a missing, corrupt or foreign checkpoint comes back as a warning naming the file, and ask falls back to the untrained encoder', async () => {
    const corrupt = join(dir, 'corrupt.json');
    writeFileSync(corrupt, '{"format":"canopy-adapter", not json');
    const truncated = join(dir, 'truncated.json');
    const good = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(checkpointFile, 'utf8'))) as Record<string, unknown>;
    writeFileSync(truncated, JSON.stringify({ ...good, A: Buffer.from(new Float32Array(10).buffer).toString('base64') }));
    const foreign = join(dir, 'foreign.json');
    writeFileSync(foreign, JSON.stringify({ ...good, baseEncoderId: 'some-other-encoder' }));
    const cases: Array<[string, RegExp]> = [
      [join(dir, 'missing.json'), /Cannot read adapter checkpoint .*missing\.json/],
      [corrupt, /Cannot read adapter checkpoint .*corrupt\.json/],
      [truncated, /truncated\.json: checkpoint A has 10 values, expected 2048/],
      [foreign, /foreign\.json: Adapter adapter-\w+ was trained on encoder some-other-encoder/],
    ];
    const baseScores = [...roundOneScores(base)];
    for (const [file, why] of cases) {
      await assert.rejects(loadAdapter(file, base.settings.encoderId), why);
      const { trace: t, warnings } = await ws.ask.ask(question, ws.settings, { critic: 'none', adapter: file });
      assert.equal(t.settings.adapterId, undefined, file);
      assert.equal(warnings.length, 1, file);
      assert.equal(warnings[0]!.source, 'adapter');
      assert.match(warnings[0]!.message, why);
      assert.match(warnings[0]!.message, /asking with the untrained encoder/);
      assert.deepEqual([...roundOneScores(t)], baseScores, `${file}: the untrained scores`);
    }
  });

  it('canopy ask --adapter: used and named; a missing one is a warning naming it, and the answer still comes', async () => {
    const io = capture();
    assert.equal(await main(['ask', '--dir', demo, '--index', indexDir, '--critic', 'none', '--adapter', checkpointFile, question], io), 0, io.stderr.join('\n'));
    assert.ok(io.stdout.includes(`Node adapter: ${checkpointId}`), io.stdout.join('\n'));
    const missing = capture();
    assert.equal(await main(['ask', '--dir', demo, '--index', indexDir, '--critic', 'none', '--json', '--adapter', 'no-such-adapter.json', question], missing), 0);
    assert.match(missing.stderr.join('\n'), /warn: adapter: Cannot read adapter checkpoint \S*no-such-adapter\.json.*asking with the untrained encoder/);
    assert.equal((JSON.parse(missing.stdout.join('')) as AskTrace).settings.adapterId, undefined);
  });

  it('gold/mark: marks a node of a trace for its question; refuses unknown nodes, files outside the index and boxes off a page', async () => {
    const marks: GoldMark[] = [];
    const host = {
      currentView: () => ({ title: 't', message: '' }),
      isIndexedFile: (rel: string) => rel !== 'survey-report.md' || indexed,
      openSource: async () => undefined,
      readFile: async () => new Uint8Array(),
      listTraces: async () => [],
      readTrace: async () => base,
      findTrace: async (id: string) => (id === base.id ? base : undefined),
      replay: async () => base,
      markGold: async (m: GoldMark) => {
        marks.push(m);
        return { annotationId: 'a1', added: true };
      },
    } satisfies InspectorRequestHost;
    let indexed = true;
    const handlers = inspectorRequestHandlers(host);
    const item = base.rounds[0]!.retrieved.find((r) => r.tree && r.file === 'survey-report.md' && r.tree.children.length > 0)!;
    assert.ok(item, 'the survey report is retrieved');
    const node = item.tree!.children[0]!;
    const r = await handlers['gold/mark']!({ traceId: base.id, nodeId: node.id });
    assert.deepEqual(r, { annotationId: 'a1', added: true, question });
    assert.equal(marks.length, 1);
    assert.deepEqual(marks[0]!.anchor, node.anchor);
    assert.equal(marks[0]!.source, 'inspector');
    const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof ProtocolError ? e.code : String(e)));
    assert.equal(await code(handlers['gold/mark']!({ traceId: 'nope', nodeId: node.id })), 'E_NOT_FOUND');
    assert.equal(await code(handlers['gold/mark']!({ traceId: base.id, nodeId: 'no-such-node' })), 'E_NOT_FOUND');
    assert.equal(await code(handlers['gold/mark']!({ traceId: base.id, nodeId: node.id, bbox: [0, 0, 10, 10] })), 'E_BAD_PARAMS');
    indexed = false;
    assert.equal(await code(handlers['gold/mark']!({ traceId: base.id, nodeId: node.id })), 'E_FORBIDDEN');
    assert.equal(marks.length, 1, 'refused marks store nothing');
    const noGold = inspectorRequestHandlers({ ...host, markGold: undefined });
    assert.equal(await code(noGold['gold/mark']!({ traceId: base.id, nodeId: node.id })), 'E_UNSUPPORTED');
  });
});
