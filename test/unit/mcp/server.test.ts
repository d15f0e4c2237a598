// The MCP server as a client sees it: the built bundle (dist/mcp.js, from `npm run build`) is
// started as a child process from a folder laid out like the VSIX — its own package.json and
// model, and in dist/node_modules only the native runtime the VSIX stages (no MCP SDK, no zod) —
// and driven with the SDK's own Client over stdio on an indexed fixture (built-in encoder).
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AskForAgentResult, SearchEvidenceResult, TraceDetail } from '../../../src/core/agent/operations';
import type { TraceSummary } from '../../../src/contracts/savedTrace';
import type { AskTrace } from '../../../src/contracts/trace';
import { indexedFixture, type IndexedFixture } from '../../helpers/fixtureWorkspace';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlpReceiver';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const QUESTION = 'When were the anemometer and the wind vane recalibrated?';

/** A folder shaped like the installed VSIX: package.json, models/, dist/mcp.js and the staged native runtime only. */
function vsixLikeFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'canopy-mcp-pkg-'));
  copyFileSync(join(repo, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(repo, 'models'), join(dir, 'models'), 'dir');
  mkdirSync(join(dir, 'dist', 'node_modules'), { recursive: true });
  copyFileSync(join(repo, 'dist', 'mcp.js'), join(dir, 'dist', 'mcp.js'));
  for (const pkg of ['onnxruntime-node', 'onnxruntime-common', 'pdfjs-dist']) symlinkSync(join(repo, 'node_modules', pkg), join(dir, 'dist', 'node_modules', pkg), 'dir');
  return dir;
}

function json<T>(result: Awaited<ReturnType<Client['callTool']>>): T {
  const r = result as CallToolResult;
  assert.notEqual(r.isError, true, `tool error: ${JSON.stringify(r.content)}`);
  const [part] = r.content;
  assert.equal(part?.type, 'text');
  return JSON.parse((part as { text: string }).text) as T;
}

function errorText(result: Awaited<ReturnType<Client['callTool']>>): string {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r.content).slice(0, 300)}`);
  return (r.content[0] as { text: string }).text;
}

describe('canopy mcp (the bundled server over stdio)', () => {
  let fx: IndexedFixture;
  let pkg: string;
  let client: Client;
  let receiver: OtlpReceiver;
  let stderr = '';

  before(async () => {
    [fx, receiver] = await Promise.all([indexedFixture('e2e-workspace'), startOtlpReceiver()]);
    pkg = vsixLikeFolder();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(pkg, 'dist', 'mcp.js'), '--dir', fx.root, '--index', fx.indexDir, '--otlp-endpoint', receiver.base],
      cwd: pkg,
      env: { PATH: process.env.PATH ?? '', HOME: pkg },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'canopy-test', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await Promise.all([fx?.dispose(), receiver?.close()]);
    if (pkg) rmSync(pkg, { recursive: true, force: true });
  });

  it('lists its four tools with input schemas, and says what it serves on stderr only', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['ask', 'get_trace', 'list_questions', 'search_evidence']);
    const search = tools.find((t) => t.name === 'search_evidence')!;
    assert.deepEqual(search.inputSchema.required, ['question']);
    assert.ok(search.description?.includes('citations'));
    assert.equal(client.getServerVersion()?.name, 'canopy');
    assert.match(client.getInstructions() ?? '', new RegExp(fx.root.replace(/[/\\.]/g, '\\$&')));
    assert.match(stderr, /canopy mcp: serving/);
  });

  let searched: SearchEvidenceResult;
  it('search_evidence returns regions cited to the exact span of the indexed file', async () => {
    searched = json<SearchEvidenceResult>(await client.callTool({ name: 'search_evidence', arguments: { question: QUESTION, max_regions: 5 } }));
    assert.ok(searched.regions.length > 0 && searched.regions.length <= 5);
    const hit = searched.regions.find((r) => r.text.includes('2024-03-12'));
    assert.ok(hit, JSON.stringify(searched.regions));
    const c = hit.citation;
    const text = readFileSync(join(fx.root, c.file), 'utf8');
    assert.ok(c.chars);
    assert.ok(text.slice(c.chars.start, c.chars.end).includes('2024-03-12'));
    const lines = text.split('\n');
    assert.ok(lines.slice(c.lines!.start - 1, c.lines!.end).join('\n').includes('2024-03-12'));
    assert.match(searched.traceId, /\S/);
  });

  let asked: AskForAgentResult;
  it('ask answers with citations (extractive without --llm)', async () => {
    asked = json<AskForAgentResult>(await client.callTool({ name: 'ask', arguments: { question: QUESTION } }));
    assert.equal(asked.mode, 'extractive');
    assert.match(asked.answer, /2024-03-12/);
    const first = asked.citations[0]!;
    const text = readFileSync(join(fx.root, first.file), 'utf8');
    assert.equal(text.slice(first.chars!.start, first.chars!.end), first.text);
  });

  it('list_questions and get_trace find both answers; traces are resources', async () => {
    const listed = json<TraceSummary[]>(await client.callTool({ name: 'list_questions', arguments: {} }));
    assert.deepEqual(listed.map((l) => l.id).sort(), [searched.traceId, asked.traceId].sort());
    const summary = json<TraceDetail>(await client.callTool({ name: 'get_trace', arguments: { trace: asked.traceId } }));
    assert.equal(summary.answer, asked.answer);
    assert.deepEqual(summary.citations, asked.citations);
    const full = json<AskTrace>(await client.callTool({ name: 'get_trace', arguments: { trace: searched.traceName, detail: 'full' } }));
    assert.equal(full.schema, 'canopy.trace');
    assert.equal(full.id, searched.traceId);
    const { resources } = await client.listResources();
    const uri = resources.find((r) => r.name === asked.traceName)?.uri;
    assert.ok(uri, JSON.stringify(resources));
    assert.equal(resources.find((r) => r.name === asked.traceName)?.title, QUESTION);
    const read = await client.readResource({ uri });
    const trace = JSON.parse((read.contents[0] as { text: string }).text) as AskTrace;
    assert.equal(trace.id, asked.traceId);
  });

  it('answers bad arguments and failures with tool errors, and keeps serving', async () => {
    assert.match(errorText(await client.callTool({ name: 'search_evidence', arguments: { question: '  ' } })), /question is empty/);
    assert.match(errorText(await client.callTool({ name: 'search_evidence', arguments: { question: 42 } })), /question/);
    assert.match(errorText(await client.callTool({ name: 'ask', arguments: {} })), /question/);
    assert.match(errorText(await client.callTool({ name: 'search_evidence', arguments: { question: QUESTION, max_regions: 0 } })), /max_regions/);
    assert.match(errorText(await client.callTool({ name: 'get_trace', arguments: { trace: 'nope' } })), /^E_NOT_FOUND: no saved trace/);
    assert.match(errorText(await client.callTool({ name: 'get_trace', arguments: { trace: 'x', detail: 'everything' } })), /detail/);
    assert.match(errorText(await client.callTool({ name: 'no_such_tool', arguments: {} })), /no_such_tool/);
    const listed = json<TraceSummary[]>(await client.callTool({ name: 'list_questions', arguments: { limit: 1 } }));
    assert.equal(listed.length, 1);
  });

  it('exports every answer it saved to the OTLP endpoint it was given', async () => {
    await receiver.waitFor(2);
    const roots = receiver.requests.flatMap((r) => r.spans.filter((s) => s.name === 'canopy.ask'));
    assert.deepEqual(roots.map((s) => s.attributes['canopy.trace.id']).sort(), [searched.traceId, asked.traceId].sort());
  });

  it('reports a folder that has no index as a tool error naming the fix', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(pkg, 'dist', 'mcp.js'), '--dir', fx.root, '--index', join(pkg, 'no-index')],
      cwd: pkg,
      env: { PATH: process.env.PATH ?? '', HOME: pkg },
      stderr: 'ignore',
    });
    const other = new Client({ name: 'canopy-test', version: '1.0.0' });
    await other.connect(transport);
    try {
      assert.match(errorText(await other.callTool({ name: 'search_evidence', arguments: { question: QUESTION } })), /^E_NOT_FOUND: no Canopy index .*canopy index/);
    } finally {
      await other.close();
    }
  });
});
