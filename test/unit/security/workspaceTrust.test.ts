// Workspace Trust, at unit level with the real code path (the real-host check is
// test/e2e/untrusted.mjs): the manifest declares limited support and restricts every setting that
// loads a user-supplied model or picks where document text goes; the trust gates refuse remote
// LLMs, VS Code language models, user encoder folders and adapter checkpoints when untrusted; a
// real CanopyWorkspace answering through a "remote" OpenAI-compatible server sends it nothing when
// the gate refuses, and sends it document text when trusted (so this test can fail); and the
// extension's code routes its choices through these gates with vscode.workspace.isTrusted.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { settingKeys } from '../../../src/core/config/settings';
import { llmMayReceiveDocuments, userAdapterCheckpoint, userEncoderFolder } from '../../../src/core/config/trust';
import { OpenAiCompatibleChatModel } from '../../../src/core/llm/openaiProvider';
import { startOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { openServices, type TestServices } from '../../helpers/services';

const repo = new URL('../../../', import.meta.url);
const read = (rel: string) => readFileSync(new URL(rel, repo), 'utf8');

describe('Workspace Trust', () => {
  it('package.json declares limited support and restricts every setting that loads a model or routes document text', () => {
    const manifest = JSON.parse(read('package.json')) as { capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } } };
    const u = manifest.capabilities.untrustedWorkspaces;
    assert.equal(u.supported, 'limited');
    for (const key of [settingKeys.encoderModelFolder, settingKeys.adapterCheckpoint, settingKeys.llmProvider, settingKeys.llmBaseUrl]) {
      assert.ok(u.restrictedConfigurations.includes(key), `${key} is a restricted configuration`);
    }
  });

  it('the gates: nothing user-supplied and no document text away when untrusted; everything when trusted', () => {
    assert.deepEqual(userEncoderFolder('/models/mine', true), { value: '/models/mine' });
    assert.equal(userEncoderFolder('/models/mine', false).value, '');
    assert.match(userEncoderFolder('/models/mine', false).note ?? '', /not trusted/);
    assert.deepEqual(userEncoderFolder('', false), { value: '' });
    assert.equal(userAdapterCheckpoint('.canopy/adapters/a.json', true).value, '.canopy/adapters/a.json');
    assert.equal(userAdapterCheckpoint('.canopy/adapters/a.json', false).value, '');
    assert.equal(llmMayReceiveDocuments('openai-compatible', true, false).value, false);
    assert.equal(llmMayReceiveDocuments('openai-compatible', false, false).value, true, 'a loopback server keeps the text on this machine');
    assert.equal(llmMayReceiveDocuments('vscode-lm', true, false).value, false);
    assert.equal(llmMayReceiveDocuments('openai-compatible', true, true).value, true);
  });

  it('the provider judges remoteness from the base URL the way the gate relies on', () => {
    const model = (baseUrl: string) => new OpenAiCompatibleChatModel({ baseUrl, model: 'm' });
    for (const url of ['https://api.openai.com/v1', 'http://192.0.2.2:8080/v1', 'http://10.0.0.5/v1', 'http://example.com/v1']) assert.equal(model(url).remote, true, url);
    for (const url of ['http://127.0.0.1:11434/v1', 'http://localhost:1234/v1', 'http://[::1]:8000/v1']) assert.equal(model(url).remote, false, url);
  });

  describe('a real workspace answering through a remote LLM', () => {
    let server: OpenAiTestServer;
    let tmp: string;
    let ws: TestServices;
    before(async () => {
      server = await startOpenAiServer();
      tmp = mkdtempSync(join(tmpdir(), 'canopy-trust-'));
      mkdirSync(join(tmp, 'ws'));
      for (const f of ['survey-report.md', 'field-notes.txt']) cpSync(new URL(`test/fixtures/demo/${f}`, repo), join(tmp, 'ws', f));
      ws = openServices({ root: join(tmp, 'ws'), indexDir: join(tmp, 'index'), settings: { maxRounds: 1 } });
      await ws.index.index(ws.settings);
    });
    after(async () => {
      await ws.close();
      await server.close();
      rmSync(tmp, { recursive: true, force: true });
    });

    /** What the extension's chooseLlm does, with the trust flag as a parameter. */
    const chooseFor = (trusted: boolean) => {
      // The test server is on loopback; `remote: true` stands for a cloud endpoint.
      const model = new OpenAiCompatibleChatModel({ baseUrl: server.baseUrl, model: 'cloud-model', remote: true, maxRetries: 0, requestTimeoutMs: 5_000 });
      return llmMayReceiveDocuments('openai-compatible', model.remote, trusted).value ? model : undefined;
    };

    it('untrusted: the remote LLM receives nothing, and the answer comes from the extractive reader', async () => {
      server.reset();
      const llm = chooseFor(false);
      assert.equal(llm, undefined);
      const trace = (await ws.ask.ask('Which plot lost ash trees to dieback?', ws.settings, llm ? { llm } : {})).trace;
      assert.equal(server.requests.length, 0);
      assert.equal(trace.settings.reader, 'extractive');
      assert.equal(trace.settings.llm, undefined, 'the trace records no LLM');
      assert.ok(trace.answer.text.length > 0);
    });

    it('trusted: the same question sends document text to it (so the untrusted check above can fail)', async () => {
      server.reset();
      const llm = chooseFor(true);
      assert.ok(llm);
      const trace = (await ws.ask.ask('Which plot lost ash trees to dieback?', ws.settings, { llm })).trace;
      assert.ok(server.requests.length > 0, 'the LLM was asked');
      assert.deepEqual(trace.settings.llm, { id: llm.id, remote: true });
      assert.match(JSON.stringify(server.requests.map((r) => r.body)), /ash|dieback/i);
    });
  });

  it("the extension's code paths go through the gates with vscode.workspace.isTrusted", () => {
    // The encoder and the adapter checkpoint are chosen per request in activate() (extension.ts), the
    // encoder through config.ts's gate; every question passes the gated checkpoint (questions.ts).
    const activate = read('src/extension/extension.ts');
    assert.match(activate, /encoderFromSettings\(settings\(\), vscode\.workspace\.isTrusted\)/);
    assert.match(activate, /userAdapterCheckpoint\(s\.adapterCheckpoint, vscode\.workspace\.isTrusted\)/);
    assert.match(read('src/extension/config.ts'), /userEncoderFolder\(settings\.encoderModelFolder, trusted\)/);
    assert.match(read('src/extension/questions.ts'), /adapter: adapter\.value/);
    const llm = read('src/extension/llmConfig.ts');
    assert.match(llm, /llmMayReceiveDocuments\('vscode-lm', true, vscode\.workspace\.isTrusted\)/);
    assert.match(llm, /llmMayReceiveDocuments\('openai-compatible', model\.remote, vscode\.workspace\.isTrusted\)/);
    // No other construction of a chat model in the extension bypasses the gate.
    assert.equal((llm.match(/new OpenAiCompatibleChatModel\(/g) ?? []).length, 1);
  });
});
