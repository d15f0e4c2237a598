// Saved trace files are read through the trace schema: traces written before the schema existed
// still load, and a file that is not a well-formed trace is refused with its name and the first
// problem (never half-read, never a crash) — in readTrace, the history list and replay.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CanopyError } from '../../../src/core/errors';
import type { AskTrace } from '../../../src/contracts/trace';
import { openServices, type TestServices } from '../../helpers/services';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'traces');
const demoName = '2026-12-01T17-08-52-543Z-mx4ybfsv-9av8m4.json';
const pdfName = '2026-12-01T17-09-41-626Z-mx4ychoa-37sgu4.json';
const demoFile = JSON.parse(readFileSync(join(fixtures, 'demo-v1.json'), 'utf8')) as AskTrace;

let root: string;
let ws: TestServices;
const warnings: string[] = [];

function writeTrace(name: string, content: unknown): void {
  writeFileSync(join(ws.traces.dir, name), typeof content === 'string' ? content : JSON.stringify(content));
}

/** The demo trace with one change made by `mutate` (which may break its type: that is the point). */
function broken(mutate: (t: AskTrace) => void): unknown {
  const t = structuredClone(demoFile);
  mutate(t);
  return t;
}

/** Sets a field to a value of the wrong type. */
const set = (target: object, key: string, value: unknown) => Object.assign(target, { [key]: value });

const badInput = (message: RegExp) => (err: unknown) => err instanceof CanopyError && err.code === 'E_BAD_INPUT' && message.test(err.message);

before(() => {
  root = mkdtempSync(join(tmpdir(), 'canopy-trace-files-'));
  ws = openServices({ root, indexDir: join(root, 'index'), logger: { log: (level, message) => warnings.push(`${level}: ${message}`) } });
  mkdirSync(ws.traces.dir, { recursive: true });
  copyFileSync(join(fixtures, 'demo-v1.json'), join(ws.traces.dir, demoName));
  copyFileSync(join(fixtures, 'annual-report-controller-v1.json'), join(ws.traces.dir, pdfName));
});

after(async () => {
  await ws.close();
  rmSync(root, { recursive: true, force: true });
});

describe('trace files through the schema', () => {
  it('reads a trace written before the schema unchanged: every field it has is one the schema names', async () => {
    assert.deepEqual(await ws.traces.read(demoName), demoFile);
  });

  it("reads a trace with the MAGE controller's full trace, keeping what the inspector renders", async () => {
    const file = JSON.parse(readFileSync(join(fixtures, 'annual-report-controller-v1.json'), 'utf8')) as AskTrace;
    const read = await ws.traces.read(pdfName);
    const written = file.rounds[0]!.retrieved[0]!.controller!;
    const controller = read.rounds[0]!.retrieved[0]!.controller!;
    assert.ok(controller.steps.length > 0);
    assert.deepEqual(controller.steps, written.steps.map(({ step, iteration, action, decidedBy, utility, why, valid, error, changes, budgetLeft }) => ({ step, iteration, action, decidedBy, utility, why, valid, error, changes, budgetLeft })).map((s) => JSON.parse(JSON.stringify(s))));
    assert.deepEqual(controller.subgraph, written.subgraph);
    assert.deepEqual(controller.stop, written.stop);
    // The controller's own fields beyond the subset (evaluator calls, grounding…) are not read back.
    assert.equal((controller as unknown as Record<string, unknown>).evaluatorCalls, undefined);
    assert.deepEqual({ ...read, rounds: [] }, { ...file, rounds: [] });
  });

  it('refuses a malformed trace naming the file and the first problem', async () => {
    const cases: Array<[unknown, RegExp]> = [
      ['{ "schema": "canopy.trace", ', /^bad-json\.json is not a Canopy trace: not valid JSON/],
      [[1, 2], /^bad-1\.json is not a readable Canopy trace of version 1: trace must be an object/],
      [broken((t) => set(t, 'schema', 'other')), /^bad-2\.json .*trace\.schema must be "canopy\.trace"/],
      [broken((t) => set(t, 'version', 2)), /^bad-3\.json .*trace\.version 2 is not supported \(expected 1\)/],
      [broken((t) => set(t.rounds[0]!.retrieved[0]!.tree!.children[0]!, 'id', 5)), /^bad-4\.json .*trace\.rounds\[0\]\.retrieved\[0\]\.tree\.children\[0\]\.id must be a string$/],
      [broken((t) => set(t.rounds[1]!.retrieved[0]!.scores, 'fused', 'high')), /^bad-5\.json .*trace\.rounds\[1\]\.retrieved\[0\]\.scores\.fused must be a finite number$/],
      [broken((t) => set(t.stop, 'reason', 'bored')), /^bad-6\.json .*trace\.stop\.reason must be one of critic-sufficient, .*no-follow-up$/],
      [broken((t) => delete (t as Partial<AskTrace>).answer), /^bad-7\.json .*trace\.answer must be an object$/],
      [broken((t) => set(t.answer.citations[0]!.anchor, 'bbox', [1, 2])), /^bad-8\.json .*trace\.answer\.citations\[0\]\.anchor\.bbox must be four finite numbers$/],
    ];
    const names = ['bad-json.json', ...cases.slice(1).map((_, i) => `bad-${i + 1}.json`)];
    for (const [i, [content, message]] of cases.entries()) {
      writeTrace(names[i]!, content);
      await assert.rejects(ws.traces.read(names[i]!), badInput(message), String(message));
    }
    // The history lists the good ones and logs each bad one with its problem.
    const listed = await ws.traces.list();
    assert.deepEqual(listed.map((s) => s.name).sort(), [demoName, pdfName].sort());
    assert.equal(listed.find((s) => s.name === demoName)?.question, demoFile.question);
    for (const name of names) assert.ok(warnings.some((w) => w.startsWith(`warn: trace ${name} skipped: ${name} is not`)), name);
    for (const name of names) rmSync(join(ws.traces.dir, name));
  });

  it('refuses a tree nested too deep without exhausting the stack', async () => {
    // 100,000 levels (written by hand: JSON.stringify itself would exhaust the stack). The depth
    // is refused before any node's fields are read, so the nodes need no more than their children.
    const levels = 100_000;
    const deep = `${'{"children":['.repeat(levels)}${']}'.repeat(levels)}`;
    writeTrace('deep.json', JSON.stringify(broken((t) => set(t.rounds[0]!.retrieved[0]!, 'tree', 'DEEP'))).replace('"DEEP"', deep));
    await assert.rejects(ws.traces.read('deep.json'), badInput(/trace\.rounds\[0\]\.retrieved\[0\]\.tree(\.children\[0\]){201} is nested deeper than 200$/));
    rmSync(join(ws.traces.dir, 'deep.json'));
  });

  it('checks what a replay is given: the trace and the settings', async () => {
    const bad = broken((t) => set(t.rounds[0]!, 'candidates', 'all')) as AskTrace;
    await assert.rejects(ws.ask.replay(bad, {}, ws.settings), badInput(/^replay: trace\.rounds\[0\]\.candidates must be a list$/));
    await assert.rejects(ws.ask.replay(demoFile, { topK: 0 }, ws.settings), badInput(/^replay: settings\.topK must be from 1 to 100$/));
    await assert.rejects(ws.ask.replay(demoFile, { branchingFactor: 5 }, ws.settings), badInput(/^replay: settings\.branchingFactor must be from 2 to 4$/));
    await assert.rejects(ws.ask.replay(demoFile, { compressor: { name: 'threshold', threshold: 3 } }, ws.settings), badInput(/^replay: settings\.compressor\.threshold must be from -1 to 1$/));
    await assert.rejects(ws.ask.replay(demoFile, { extra: true } as never, ws.settings), badInput(/^replay: settings\.extra is not a known field$/));
  });
});
