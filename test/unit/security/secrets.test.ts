// API keys live only in SecretStorage / the environment: a whole question answered through an
// LLM endpoint (loopback), including a failing endpoint that echoes the key back, leaves no trace
// of the key in the trace, the logs or the error messages.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OpenAiCompatibleChatModel } from '../../../src/core/llm/openaiProvider';
import { startOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { openServices, type TestServices } from '../../helpers/services';

const KEY = 'sk-canopy-test-7f3e9a1b2c4d5e6f';
const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));

let server: OpenAiTestServer;
let indexDir: string;
let logs: string[];
let workspace: TestServices;

before(async () => {
  server = await startOpenAiServer();
  indexDir = mkdtempSync(join(tmpdir(), 'canopy-secrets-'));
  logs = [];
  workspace = openServices({
    root: demo,
    indexDir,
    settings: { maxRounds: 2, topK: 3 },
    logger: { log: (level, message) => logs.push(`${level}: ${message}`) },
  });
  await workspace.index.index(workspace.settings);
});

after(async () => {
  await workspace.close();
  await server.close();
  rmSync(indexDir, { recursive: true, force: true });
});

const model = (maxRetries = 0) =>
  new OpenAiCompatibleChatModel({
    baseUrl: server.baseUrl,
    model: 'test-model',
    apiKey: KEY,
    maxRetries,
    logger: { log: (level, message) => logs.push(`${level}: ${message}`) },
  });

describe('API keys never leak', () => {
  it('is sent only as the Authorization header, and appears nowhere in the saved trace', async () => {
    server.script(
      { kind: 'reply', content: '{"aggregate": false, "modalities": ["text"], "reason": "one fact"}' },
      { kind: 'reply', content: '{"sufficient": true, "missing": [], "followUpQuery": ""}' },
      { kind: 'reply', content: ['Plot P5 lost its ash trees [1].'] },
    );
    const trace = (await workspace.ask.ask('Which plot lost ash trees?', workspace.settings, { llm: model(), routing: 'llm' })).trace;
    const file = await workspace.traces.save(trace);
    assert.equal(server.requests[0]?.headers.authorization, `Bearer ${KEY}`);
    assert.equal(trace.rounds[0]?.routing.source, 'llm', 'the LLM routed the question');
    assert.match(trace.rounds[0]!.routing.reason, /lookup/);
    assert.equal(trace.answer.mode, 'llm');
    assert.ok(trace.settings.llm?.id);
    assert.ok(!readFileSync(file, 'utf8').includes(KEY), 'the trace file holds the key');
    assert.ok(!JSON.stringify(server.requests.map((r) => r.body)).includes(KEY), 'the key went into a prompt');
    assert.ok(!logs.join('\n').includes(KEY), 'a log line holds the key');
  });

  it('routes by the rule unless LLM routing is asked for (canopy.llm.routing is off by default)', async () => {
    server.reset();
    server.script(
      { kind: 'reply', content: '{"sufficient": true, "missing": [], "followUpQuery": ""}' },
      { kind: 'reply', content: ['Plot P5 lost its ash trees [1].'] },
    );
    const trace = (await workspace.ask.ask('Which plot lost ash trees?', workspace.settings, { llm: model() })).trace;
    assert.equal(trace.rounds[0]?.routing.source, 'rule');
    assert.equal(server.requests.length, 2, 'critic and reader only');
    assert.ok(!JSON.stringify(server.requests.map((r) => r.body)).includes('You route questions'));
  });

  it('is redacted from errors even when the server echoes it, and the fallbacks answer', async () => {
    server.reset();
    const echo = { kind: 'status' as const, status: 401, message: `Incorrect API key provided: ${KEY}` };
    server.script(echo, echo, echo, echo, echo);
    const trace = (await workspace.ask.ask('Which plot lost ash trees?', workspace.settings, { llm: model(), routing: 'llm' })).trace;
    const text = JSON.stringify(trace);
    assert.match(trace.rounds[0]!.routing.reason, /LLM routing failed .*so the rule routed/, 'the router fell back to the rule');
    assert.ok(!text.includes(KEY), 'the trace holds the echoed key');
    assert.ok(!logs.join('\n').includes(KEY), 'a log line holds the echoed key');
    assert.equal(trace.rounds[0]?.critic?.source, 'llm-fallback-rule', 'the critic fell back to the rule');
    assert.equal(trace.answer.mode, 'extractive', 'the reader fell back to extractive');
    assert.match(text, /401/);
    await assert.rejects(model().chat([{ role: 'user', content: 'hi' }]), (err: Error) => {
      assert.ok(!err.message.includes(KEY), err.message);
      assert.ok(!String(err.stack).includes(KEY));
      return true;
    });
  });
});
