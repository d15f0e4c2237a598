// Test-only extension, installed by test/e2e/run.mjs next to the packaged Canopy VSIX. It runs in
// the same extension host and drives Canopy through the public VS Code API, the way another
// extension or an agent would, and writes what it saw to JSON files under $CANOPY_PROBE_OUT
// (a folder) for the outer script to check; it asserts nothing itself.
//   - "Canopy Probe: Run Tool Checks": vscode.lm.tools, vscode.lm.invokeTool on canopy_searchEvidence
//     and canopy_ask (no chat model or sign-in needed), and a bad input. (The results' inspectorLink
//     is not opened: in code-server, openExternal on the product's own scheme asks to launch the
//     desktop app in a modal dialog instead of reaching the extension's URI handler.)
//   - "Canopy Probe: Run MCP Checks": the tools VS Code registered from Canopy's MCP server (after
//     the outer script started it), and vscode.lm.invokeTool on its search_evidence.
//   - A scripted language model (vscode.lm.registerLanguageModelChatProvider, vendor canopy-probe)
//     so that the chat view has a model and @canopy can be asked there: it answers a critic prompt
//     with a JSON verdict and a reader prompt with a sentence citing evidence block [1]. Every
//     prompt it receives is recorded.
'use strict';
const vscode = require('vscode');
const fs = require('node:fs');
const path = require('node:path');

const outDir = () => process.env.CANOPY_PROBE_OUT || path.join(require('node:os').tmpdir(), 'canopy-probe');
const question = () => process.env.CANOPY_PROBE_QUESTION || '';

function write(name, value) {
  fs.mkdirSync(outDir(), { recursive: true });
  fs.writeFileSync(path.join(outDir(), name), JSON.stringify(value, null, 2));
}

function partsText(result) {
  return (result?.content ?? []).map((p) => (typeof p.value === 'string' ? p.value : '')).join('');
}

async function step(report, name, fn) {
  const started = Date.now();
  try {
    report[name] = { ok: true, value: await fn(), ms: Date.now() - started };
  } catch (err) {
    report[name] = { ok: false, error: String(err && err.message ? err.message : err), ms: Date.now() - started };
  }
}

function messageText(m) {
  return (m.content ?? []).map((p) => (typeof p.value === 'string' ? p.value : '')).join('');
}

const prompts = [];

function activate(context) {
  if (typeof vscode.lm.registerLanguageModelChatProvider === 'function') {
    context.subscriptions.push(
      vscode.lm.registerLanguageModelChatProvider('canopy-probe', {
        provideLanguageModelChatInformation: () => [
          // isUserSelectable / isDefault (not yet in the stable typings) put it in the chat's model picker.
          { id: 'probe-model', name: 'Canopy Probe Model', family: 'canopy-probe', version: '1', maxInputTokens: 100000, maxOutputTokens: 4000, capabilities: {}, isUserSelectable: true, isDefault: true },
        ],
        async provideLanguageModelChatResponse(_model, messages, _options, progress) {
          const text = messages.map(messageText).join('\n');
          prompts.push(text);
          write('prompts.json', prompts);
          const critic = /"sufficient"/.test(text);
          progress.report(new vscode.LanguageModelTextPart(critic ? '{"sufficient": true, "missing": [], "followUpQuery": ""}' : 'The probe model read the evidence: the anemometer and the vane were recalibrated on 2024-03-12 [1].'));
        },
        provideTokenCount: async (_model, text) => Math.ceil((typeof text === 'string' ? text : messageText(text)).length / 4),
      }),
    );
  }
  context.subscriptions.push(
    vscode.commands.registerCommand('canopyProbe.toolChecks', async () => {
      const report = { vscodeVersion: vscode.version, question: question() };
      await step(report, 'models', async () => (await vscode.lm.selectChatModels()).map((m) => `${m.vendor}/${m.id}`));
      await step(report, 'tools', async () => vscode.lm.tools.filter((t) => t.name.startsWith('canopy_')).map((t) => ({ name: t.name, tags: t.tags, required: t.inputSchema?.required })));
      await step(report, 'searchEvidence', async () => JSON.parse(partsText(await vscode.lm.invokeTool('canopy_searchEvidence', { input: { question: question(), maxRegions: 5 }, toolInvocationToken: undefined }))));
      await step(report, 'ask', async () => JSON.parse(partsText(await vscode.lm.invokeTool('canopy_ask', { input: { question: question() }, toolInvocationToken: undefined }))));
      await step(report, 'badInput', async () => partsText(await vscode.lm.invokeTool('canopy_searchEvidence', { input: { question: '' }, toolInvocationToken: undefined })));
      write('tools.json', report);
    }),
    vscode.commands.registerCommand('canopyProbe.askInChat', async () => {
      // The chat view with the probe model selected and "@canopy <question>" submitted.
      await vscode.commands.executeCommand('workbench.action.chat.open', { query: `@canopy ${question()}`, modelSelector: { vendor: 'canopy-probe', id: 'probe-model' } });
    }),
    vscode.commands.registerCommand('canopyProbe.mcpChecks', async () => {
      const report = {};
      // VS Code registers the MCP server's tools once the server has started and listed them.
      for (let i = 0; i < 240 && !vscode.lm.tools.some((t) => t.name.endsWith('search_evidence')); i++) await new Promise((r) => setTimeout(r, 500));
      await step(report, 'tools', async () => vscode.lm.tools.map((t) => t.name).filter((n) => /search_evidence|list_questions|get_trace|(^|_)ask$/.test(n)));
      await step(report, 'searchEvidence', async () => {
        const tool = vscode.lm.tools.find((t) => t.name.endsWith('search_evidence'));
        if (!tool) throw new Error(`no MCP search_evidence tool among ${vscode.lm.tools.length} tools`);
        return { name: tool.name, text: partsText(await vscode.lm.invokeTool(tool.name, { input: { question: question(), max_regions: 3 }, toolInvocationToken: undefined })) };
      });
      write('mcp.json', report);
    }),
  );
}

module.exports = { activate };
