// Settings travel with each request (issue 18): one AskService, asked twice with different
// settings, answers each question with the settings it was given — topK, maxRounds,
// readerTokenCap, the controller's, topics, LLM routing and page images — and the index service
// indexes with the settings of the run. Before, the workspace froze its settings when it was
// built, and the extension built it once: a changed setting did nothing until a reload.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveSettings, type CanopySettings } from '../../../src/core/config/settings';
import type { ChatModel, ChatResult } from '../../../src/core/llm/llm';
import { PROFILE_FILE, writeProfile } from '../../../src/core/retrieve/profile';
import { topicSummaryOf } from '../../../src/core/topics/indexTopics';
import { READER_MODEL_FILE } from '../../../src/core/train/readerFit';
import { openServices, type TestServices } from '../../helpers/services';

const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';

/** An in-memory model whose one reply serves as the router's JSON, the critic's verdict and the answer. */
const memoryLlm: ChatModel = {
  id: 'memory:settings',
  remote: false,
  async chat(): Promise<ChatResult> {
    return { text: '{"aggregate": false, "modalities": ["text"], "reason": "one fact", "sufficient": true, "missing": [], "followUpQuery": ""}', model: 'memory', attempts: 1, ms: 1 };
  },
};

describe('settings per request', () => {
  let dir: string;
  let ws: TestServices;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-settings-'));
    // Topics are fitted by this run, so the compass can be switched on and off per question below.
    ws = openServices({ root: demo, indexDir: join(dir, 'index'), settings: { topicsEnabled: true } });
    const summary = await ws.index.index(ws.settings);
    assert.equal(topicSummaryOf(summary)?.action, 'fit');
  });
  after(async () => {
    await ws?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the same AskService answers each question with the settings it is given', async () => {
    const first: CanopySettings = resolveSettings({ topK: 2, maxRounds: 1, readerTokenCap: 300, controllerEnabled: false, topicsEnabled: false });
    const second: CanopySettings = resolveSettings({
      topK: 5,
      maxRounds: 2,
      readerTokenCap: 4000,
      controllerEnabled: true,
      controllerMinPages: 3,
      controllerInitialPages: 2,
      controllerMaxIterations: 4,
      controllerMaxOpenedNodes: 6,
      controllerMaxSearches: 1,
      controllerMaxActivationsPerIteration: 2,
      topicsEnabled: true,
    });
    const a = (await ws.ask.ask(question, first)).trace;
    const b = (await ws.ask.ask(question, second)).trace;
    assert.deepEqual([a.settings.topK, a.settings.maxRounds, a.settings.readerTokenCap], [2, 1, 300]);
    assert.deepEqual([b.settings.topK, b.settings.maxRounds, b.settings.readerTokenCap], [5, 2, 4000]);
    assert.equal(a.settings.controller, undefined, 'controller off');
    assert.deepEqual(b.settings.controller, {
      minPages: 3,
      evaluator: 'rule',
      budgets: { initialPages: 2, maxActivationsPerIteration: 2, maxIterations: 4, maxOpenedNodes: 6, maxSearches: 1 },
    });
    assert.equal(a.settings.retrieval.topics, false);
    assert.equal(b.settings.retrieval.topics, true);
    assert.ok(b.rounds[0]!.topics, 'the compass ranked the second question');
    assert.ok(a.rounds[0]!.retrieved.length <= 2);
    // And back: nothing of the second request stays behind.
    const c = (await ws.ask.ask(question, first)).trace;
    assert.deepEqual([c.settings.topK, c.settings.maxRounds, c.settings.readerTokenCap, c.settings.retrieval.topics], [2, 1, 300, false]);
  });

  it('LLM routing and page images follow the setting of each question', async () => {
    const off = resolveSettings({ maxRounds: 1, llmRouting: false, readerPageImages: false });
    const on = resolveSettings({ maxRounds: 1, llmRouting: true, readerPageImages: true });
    const a = (await ws.ask.ask(question, off, { llm: memoryLlm })).trace;
    const b = (await ws.ask.ask(question, on, { llm: memoryLlm })).trace;
    assert.equal(a.rounds[0]!.routing.source, 'rule');
    assert.equal(b.rounds[0]!.routing.source, 'llm');
    assert.equal(a.settings.pageImages, undefined);
    assert.equal(b.settings.pageImages, true);
  });

  it("CANOPY's rank gate, glimpse and node score follow the settings of each question; a request's own win", async () => {
    const gated = resolveSettings({ maxRounds: 1, compressorItems: 0.3, compressorWholeBelow: 600, compressorMinItems: 2, compressorGlimpse: 1, nodeScore: 'profile' });
    const plain = resolveSettings({ maxRounds: 1, compressorItems: 0, compressorGlimpse: 0, nodeScore: 'dense' });
    const a = (await ws.ask.ask(question, gated)).trace;
    assert.deepEqual(a.settings.compressor, { name: 'canopy', items: 0.3, wholeBelow: 600, minItems: 2, glimpse: 1 });
    const retrieved = a.rounds[0]!.retrieved;
    assert.ok(retrieved.length > 2 && retrieved.every((r) => r.gate), 'the rank gate judged every item');
    assert.ok(retrieved.filter((r) => r.gate!.kept).length >= 2, 'at least minItems kept for their rank');
    const b = (await ws.ask.ask(question, plain)).trace;
    assert.deepEqual(b.settings.compressor, { name: 'canopy' });
    assert.ok(b.rounds[0]!.retrieved.every((r) => r.gate === undefined), 'no gate without the setting');
    assert.equal(b.settings.nodeScore, undefined, 'dense: the cosine alone');
    // A request's compressor wins over the settings'.
    assert.deepEqual((await ws.ask.ask(question, gated, { compressor: { name: 'flat', m: 2 } })).trace.settings.compressor, { name: 'flat', m: 2 });
    // The node score: `profile` takes the weights of the encoder's profile in the index folder, `dense` the cosine alone, a request's weights win.
    const file = join(dir, 'index', PROFILE_FILE);
    const weights = { dense: 1, lexical: 0.7, model: 'coverage' as const };
    await writeProfile(file, { format: 'canopy.retrieval-profile', version: 1, encoder: a.settings.encoderId, fusion: { kind: 'linear', dense: 0.2, depth: 100 }, fittedOn: 'a test', nodeScore: weights });
    try {
      assert.deepEqual((await ws.ask.ask(question, gated)).trace.settings.nodeScore, weights);
      assert.equal((await ws.ask.ask(question, plain)).trace.settings.nodeScore, undefined);
      assert.deepEqual((await ws.ask.ask(question, plain, { nodeScore: { dense: 1, lexical: 2 } })).trace.settings.nodeScore, { dense: 1, lexical: 2 });
    } finally {
      rmSync(file);
    }
  });

  it("the critic model, the document profiles and the workspace's reader model follow the settings and the index folder", async () => {
    const plain = resolveSettings({});
    const learned = (await ws.ask.ask(question, plain)).trace;
    assert.match(learned.settings.criticModel ?? '', /^critic-/);
    assert.match(learned.settings.readerModel ?? '', /^reader-/);
    assert.equal(learned.language?.question, 'eng');
    const rule = (await ws.ask.ask(question, resolveSettings({ criticModel: false }))).trace;
    assert.equal(rule.settings.criticModel, undefined, 'the rule critic alone');
    // A reader model `canopy train` fitted into the index folder is the one that quotes.
    const file = join(ws.indexDir, READER_MODEL_FILE);
    const fitted = { ...JSON.parse(readFileSync(join(__dirname, '../../fixtures/judge/reader.json'), 'utf8')), id: 'reader-fixture+workspace' };
    writeFileSync(file, JSON.stringify(fitted));
    try {
      const workspace = (await ws.ask.ask(question, plain)).trace;
      assert.equal(workspace.settings.readerModel, 'reader-fixture+workspace');
      assert.ok(workspace.answer.citations.some((c) => c.judgment?.model === 'reader-fixture+workspace'));
      writeFileSync(file, '{"schema":"canopy.judge"}');
      const broken = await ws.ask.ask(question, plain);
      assert.match(broken.trace.settings.readerModel ?? '', /^reader-20/, 'a broken file: the built-in model');
      assert.ok(broken.warnings.some((w) => w.source === 'reader' && /not a usable judgment model/.test(w.message)));
    } finally {
      rmSync(file);
    }
  });

  it('an index run uses the settings it is given (the branching factor here)', async () => {
    const other = openServices({ root: demo, indexDir: join(dir, 'index-b') });
    try {
      const b3 = await other.index.index(resolveSettings({ branchingFactor: 3 }));
      assert.ok(b3.parsed > 0);
      const again = await other.index.index(resolveSettings({ branchingFactor: 3 }));
      assert.equal(again.parsed, 0, 'same settings: nothing re-parsed');
      const b2 = await other.index.index(resolveSettings({ branchingFactor: 2 }));
      assert.equal(b2.parsed, b3.parsed, 'a new branching factor re-parses every file');
    } finally {
      await other.close();
    }
  });
});
