// The agent contributions in package.json agree with the code that registers them, the pure
// parts of the extension's agent wiring behave, and the marketplace assets the manifest names exist.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as z from 'zod/mini';
import { AskToolInput, checkToolInput, SearchEvidenceToolInput } from '../../../src/contracts/agent';
import { exportConfigFromSettings } from '../../../src/core/export/exportSettings';
import { mcpServerArgs } from '../../../src/extension/mcpServerArgs';

const root = new URL('../../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const source = (file: string) => readFileSync(new URL(file, root), 'utf8');

describe('agent contributions', () => {
  it('declares each language-model tool the code registers, with an activation event and a question input', () => {
    const tools = manifest.contributes.languageModelTools as Array<{ name: string; modelDescription: string; inputSchema: { required: string[]; properties: Record<string, unknown> } }>;
    const registered = [...source('src/extension/agentTools.ts').matchAll(/export const \w+Tool = '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(tools.map((t) => t.name).sort(), registered.sort());
    for (const t of tools) {
      assert.match(t.name, /^(?!copilot_|vscode_)[\w-]+$/);
      assert.ok(manifest.activationEvents.includes(`onLanguageModelTool:${t.name}`), t.name);
      assert.deepEqual(t.inputSchema.required, ['question']);
      assert.ok(t.modelDescription.length > 100);
    }
  });

  it('declares each tool\'s input schema as its contract (src/contracts/agent.ts) says it', () => {
    const tools = manifest.contributes.languageModelTools as Array<{ name: string; inputSchema: Record<string, unknown> }>;
    const contracts: Record<string, z.core.$ZodType> = { canopy_searchEvidence: SearchEvidenceToolInput, canopy_ask: AskToolInput };
    for (const t of tools) {
      const contract = contracts[t.name];
      assert.ok(contract, `${t.name} has no contract`);
      const { $schema: _schema, ...fromContract } = z.toJSONSchema(contract, { io: 'input' }) as Record<string, unknown>;
      // The contract ignores keys it does not name (models add some); the manifest need not say so.
      delete fromContract.additionalProperties;
      assert.deepEqual(t.inputSchema, fromContract, t.name);
    }
  });

  it('reads tool inputs by the contract: the question trimmed, problems in words, unknown keys ignored', () => {
    assert.deepEqual(checkToolInput(SearchEvidenceToolInput, { question: '  When?  ', maxRegions: 3, extra: true }), { ok: true, value: { question: 'When?', maxRegions: 3 } });
    assert.deepEqual(checkToolInput(AskToolInput, { question: '   ' }), { ok: false, problem: 'the question is empty' });
    assert.deepEqual(checkToolInput(AskToolInput, undefined), { ok: false, problem: 'the question must be a string' });
    assert.deepEqual(checkToolInput(AskToolInput, { question: 'x'.repeat(4001) }), { ok: false, problem: 'the question is longer than 4000 characters' });
    assert.deepEqual(checkToolInput(SearchEvidenceToolInput, { question: 'q', maxRegions: 0 }), { ok: false, problem: 'input.maxRegions must be from 1 to 100' });
    assert.deepEqual(checkToolInput(SearchEvidenceToolInput, { question: 'q', maxRegions: 2.5 }), { ok: false, problem: 'input.maxRegions must be an integer' });
  });

  it('declares the chat participant and the commands its handler serves', () => {
    const [participant] = manifest.contributes.chatParticipants;
    assert.match(source('src/extension/chatParticipant.ts'), new RegExp(`chatParticipantId = '${participant.id}'`));
    assert.equal(participant.name, 'canopy');
    assert.ok(manifest.activationEvents.includes(`onChatParticipant:${participant.id}`));
    const handler = source('src/extension/chat/chatHandler.ts');
    for (const c of participant.commands) assert.ok(handler.includes(`command === '${c.name}'`), `/${c.name} is not handled`);
  });

  it('declares the MCP server definition provider and activates for it', () => {
    const [provider] = manifest.contributes.mcpServerDefinitionProviders;
    assert.match(source('src/extension/mcpProvider.ts'), new RegExp(`mcpProviderId = '${provider.id}'`));
    assert.ok(manifest.activationEvents.includes(`onMcpCollection:${provider.id}`));
    assert.ok(manifest.activationEvents.includes('onUri'), 'the inspector links need the URI handler');
  });

  it('needs no newer VS Code than the APIs it requires (lm tools: 1.95); the MCP API (1.101) is looked up at run time', () => {
    assert.equal(manifest.engines.vscode, '^1.95.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.95.0');
    const mcp = source('src/extension/mcpProvider.ts');
    assert.match(mcp, /typeof lm\.registerMcpServerDefinitionProvider !== 'function'/);
    for (const file of ['src/extension/mcpProvider.ts', 'src/extension/agentTools.ts', 'src/extension/chatParticipant.ts', 'src/extension/agentHost.ts']) {
      const code = source(file)
        .split('\n')
        .filter((l) => !/^\s*(\*|\/\*\*|\/\/)/.test(l))
        .join('\n');
      assert.doesNotMatch(code, /vscode\.lm\.registerMcpServerDefinitionProvider|new vscode\.McpStdioServerDefinition/, file);
    }
  });

  it('ships the icon and walkthrough media it names, and lists them in the VSIX allowlist', () => {
    const allow = source('.vscodeignore');
    assert.ok(allow.includes(`!${manifest.icon}`));
    const png = readFileSync(new URL(manifest.icon, root));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.ok(png.readUInt32BE(16) >= 128 && png.readUInt32BE(20) >= 128, 'the marketplace wants at least 128×128');
    const steps = manifest.contributes.walkthroughs[0].steps as Array<{ id: string; media: { markdown: string } }>;
    assert.deepEqual(steps.slice(0, 4).map((s) => s.id), ['index', 'ask', 'inspect', 'gold']);
    for (const s of steps) assert.ok(existsSync(new URL(s.media.markdown, root)), s.media.markdown);
    assert.ok(allow.includes('!media/walkthrough/*.md'));
    assert.ok(allow.includes('!dist/mcp.js') && allow.includes('!CHANGELOG.md'));
    assert.ok(!manifest.categories.includes('Other'));
  });
});

describe('MCP server definition and export settings', () => {
  it('starts the bundled server over the folder and the extension index with the answer settings', () => {
    const args = mcpServerArgs({ mcpScript: '/ext/dist/mcp.js', root: '/ws', indexDir: '/store/index', topK: 7, maxRounds: 2, adapter: 'ckpt/a.json', otlpEndpoint: 'http://localhost:6006', otlpProject: 'p' });
    assert.deepEqual(args, ['/ext/dist/mcp.js', '--dir', '/ws', '--index', '/store/index', '--top-k', '7', '--rounds', '2', '--adapter', '/ws/ckpt/a.json', '--otlp-endpoint', 'http://localhost:6006', '--otlp-project', 'p']);
    assert.deepEqual(mcpServerArgs({ mcpScript: 'm', root: '/ws', indexDir: 'i', topK: 10, maxRounds: 3, adapter: '', fusion: 'profile', otlpProject: 'canopy' }), ['m', '--dir', '/ws', '--index', 'i', '--top-k', '10', '--rounds', '3']);
    assert.deepEqual(mcpServerArgs({ mcpScript: 'm', root: '/ws', indexDir: 'i', topK: 10, maxRounds: 3, adapter: '', fusion: 'rrf' }).slice(-2), ['--fusion', 'rrf']);
  });

  it('exports nothing off the machine from an untrusted workspace', () => {
    const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations as string[];
    assert.ok(restricted.includes('canopy.export.otlpEndpoint') && restricted.includes('canopy.export.file'));
    const remote = { exportOtlpEndpoint: 'https://cloud.example/v1/traces', exportFile: '', exportProject: 'canopy' };
    assert.deepEqual(exportConfigFromSettings(remote, '/ws', true).value, { endpoint: 'https://cloud.example/v1/traces', project: 'canopy' });
    const gated = exportConfigFromSettings(remote, '/ws', false);
    assert.equal(gated.value, undefined);
    assert.match(gated.note ?? '', /not trusted/);
    const local = exportConfigFromSettings({ exportOtlpEndpoint: 'http://127.0.0.1:6006', exportFile: 'out/spans.jsonl', exportProject: 'x' }, '/ws', false);
    assert.deepEqual(local.value, { endpoint: 'http://127.0.0.1:6006', file: '/ws/out/spans.jsonl', project: 'x' });
    assert.equal(exportConfigFromSettings({ exportOtlpEndpoint: '', exportFile: '', exportProject: 'canopy' }, '/ws', true).value, undefined);
  });
});
