// The extension's question path without VS Code (src/extension/questions.ts, as activate() wires
// it to the InspectorController): real services over the demo corpus, the host's settings reader
// standing in for the VS Code configuration. A setting changed between two questions applies to
// the second one — the configuration-change path reads the settings afresh per question (issue
// 18: the extension built its workspace once and kept its settings until a reload). Also the
// events a question emits, which take the inspector out of "Answering…" after a cancel or an error.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveSettings, type CanopySettings } from '../../../src/core/config/settings';
import { InspectorController } from '../../../src/extension/inspectorController';
import { Questions, type QuestionEvent, type QuestionHost } from '../../../src/extension/questions';
import { openServices, type TestServices } from '../../helpers/services';

const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';

describe('questions in the extension (no VS Code)', () => {
  let dir: string;
  let ws: TestServices;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-questions-'));
    ws = openServices({ root: demo, indexDir: join(dir, 'index') });
    await ws.index.index(ws.settings);
  });
  after(async () => {
    await ws?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A host whose settings the test changes between questions, as a user edits settings.json. */
  function host(initial: Partial<CanopySettings>) {
    const logs: string[] = [];
    const state = { settings: resolveSettings(initial), reads: 0, ensureIndex: async () => undefined as void };
    const h: QuestionHost = {
      settings: () => {
        state.reads++;
        return state.settings;
      },
      chooseLlm: async () => ({ note: 'canopy.llm.provider is none' }),
      adapterCheckpoint: (s) => ({ value: s.adapterCheckpoint }),
      ensureIndex: () => state.ensureIndex(),
      logger: { log: (level, message) => logs.push(`${level}: ${message}`) },
    };
    return { h, state, logs };
  }

  function record(questions: Questions): QuestionEvent[] {
    const events: QuestionEvent[] = [];
    questions.onEvent((e) => events.push(e));
    return events;
  }

  it('a changed setting applies to the next question without rebuilding anything', async () => {
    const { h, state, logs } = host({ topK: 2, maxRounds: 1, readerTokenCap: 500, controllerMinPages: 12 });
    const questions = new Questions(ws.ask, ws.traces, h);
    const first = await questions.ask(question);
    assert.deepEqual([first?.settings.topK, first?.settings.maxRounds, first?.settings.readerTokenCap, first?.settings.controller?.minPages], [2, 1, 500, 12]);
    // The user changes canopy.topK, canopy.maxRounds, canopy.readerTokenCap and canopy.controller.minPages.
    state.settings = resolveSettings({ topK: 6, maxRounds: 2, readerTokenCap: 3000, controllerMinPages: 4 });
    const second = await questions.ask(question);
    assert.deepEqual([second?.settings.topK, second?.settings.maxRounds, second?.settings.readerTokenCap, second?.settings.controller?.minPages], [6, 2, 3000, 4]);
    assert.equal(state.reads, 2, 'the settings are read once per question');
    assert.ok(logs.includes('info: LLM not used: canopy.llm.provider is none'));
  });

  it('emits started and answered, and saves the answer in the history', async () => {
    const { h } = host({ topK: 3, maxRounds: 1 });
    const questions = new Questions(ws.ask, ws.traces, h);
    const events = record(questions);
    const trace = await questions.ask(question);
    assert.deepEqual(
      events.map((e) => e.type),
      ['started', 'answered'],
    );
    const answered = events[1] as Extract<QuestionEvent, { type: 'answered' }>;
    assert.equal(answered.trace, trace);
    assert.equal(answered.id, events[0]!.id);
    assert.ok((await ws.traces.list()).some((s) => s.id === trace!.id && answered.file.endsWith(s.name)));
  });

  it('a cancelled question emits cancelled, saves nothing, and the inspector leaves "Answering…"', async () => {
    const { h, state } = host({ topK: 3, maxRounds: 1 });
    const questions = new Questions(ws.ask, ws.traces, h);
    const inspector = new InspectorController({ view: () => ({ title: 't', message: 'placeholder' }), logger: { log: () => undefined } });
    questions.onEvent((e) => inspector.onQuestion(e));
    const events = record(questions);
    let release!: () => void;
    state.ensureIndex = () => new Promise<void>((resolve) => (release = resolve));
    const abort = new AbortController();
    const before = (await ws.traces.list()).length;
    const pending = questions.ask(question, abort.signal);
    await new Promise((r) => setImmediate(r));
    assert.equal(inspector.state.kind, 'busy');
    abort.abort();
    release();
    assert.equal(await pending, undefined);
    assert.deepEqual(
      events.map((e) => e.type),
      ['started', 'cancelled'],
    );
    assert.equal(inspector.state.kind, 'placeholder');
    assert.equal((await ws.traces.list()).length, before, 'a cancelled question saves no trace');
  });

  it('a newer question cancels the older one; only the newer is answered', async () => {
    const { h, state } = host({ topK: 3, maxRounds: 1 });
    const questions = new Questions(ws.ask, ws.traces, h);
    const events = record(questions);
    let release!: () => void;
    state.ensureIndex = () => new Promise<void>((resolve) => (release = resolve));
    const older = questions.ask('When was the P6 battery replaced?');
    await new Promise((r) => setImmediate(r));
    const releaseOlder = release;
    state.ensureIndex = async () => undefined;
    const newer = questions.ask(question);
    releaseOlder();
    const [a, b] = await Promise.all([older, newer]);
    assert.equal(a, undefined);
    assert.equal(b?.question, question);
    const seen = events.map((e) => `${e.type} ${e.id}`);
    assert.deepEqual(seen.slice(0, 2), ['started 1', 'started 2']);
    assert.deepEqual(seen.slice(2).sort(), ['answered 2', 'cancelled 1']);
  });

  it('a failing question emits failed with the error, rethrows it, and the inspector says why', async () => {
    const empty = openServices({ root: demo, indexDir: join(dir, 'no-index') });
    try {
      const { h } = host({});
      const questions = new Questions(empty.ask, empty.traces, h);
      const inspector = new InspectorController({ view: () => ({ title: 't', message: 'placeholder' }), logger: { log: () => undefined } });
      questions.onEvent((e) => inspector.onQuestion(e));
      const events = record(questions);
      await assert.rejects(questions.ask(question), /no Canopy index/);
      assert.deepEqual(
        events.map((e) => e.type),
        ['started', 'failed'],
      );
      const failed = events[1] as Extract<QuestionEvent, { type: 'failed' }>;
      assert.equal(failed.error.code, 'E_NOT_FOUND');
      assert.equal(inspector.state.kind, 'failed');
      assert.match((inspector.state as { message: string }).message, /no Canopy index/);
    } finally {
      await empty.close();
    }
  });

  it('an adapter checkpoint that cannot be used is logged as a warning and reported with the answer', async () => {
    const { h, logs } = host({ topK: 3, maxRounds: 1, adapterCheckpoint: 'no-such-adapter.json' });
    const questions = new Questions(ws.ask, ws.traces, h);
    const events = record(questions);
    const trace = await questions.ask(question);
    assert.equal(trace?.settings.adapterId, undefined);
    const answered = events.find((e) => e.type === 'answered') as Extract<QuestionEvent, { type: 'answered' }>;
    assert.equal(answered.warnings.length, 1);
    assert.equal(answered.warnings[0]!.source, 'adapter');
    assert.ok(logs.some((l) => /^warn: adapter: Cannot read adapter checkpoint \S*no-such-adapter\.json/.test(l)), logs.join('\n'));
  });
});
