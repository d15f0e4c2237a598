// What a new user met on a folder of their own (issue 33): stale content said in the index
// summary, the answer and the trace; and the smaller findings of 8 — one question limit, the MCP
// help's command, the empty-folder hint, a refused connection's own code, eval without --sweep.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { checkQuestion, QUESTION_MAX } from '../../../src/contracts/agent';
import type { AskTrace } from '../../../src/contracts/trace';
import { ASK_COMPRESSOR } from '../../../src/cli/commands/eval';
import { AskService } from '../../../src/core/app/askService';
import { canopyCompressor, defaultSettings, resolveSettings } from '../../../src/core/config/settings';
import { CanopyError } from '../../../src/core/errors';
import { parseEvalCompressor } from '../../../src/eval/configs';
import { comparisonTable, type Comparison } from '../../../src/eval/report';
import { writePdf } from '../ingest/pdfWriter';

function capture(cwd = process.cwd()): CliIO & { stdout: string[]; stderr: string[]; all: () => string } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd, all: () => [...stdout, ...stderr].join('\n') };
}

describe('stale said: a file that no longer parses keeps its last good version, and every answer from it says so', () => {
  let work: string;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'canopy-stale-'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('index summary (text and --json), the answer, its citations and its retrieved items', async () => {
    const root = join(work, 'docs');
    mkdirSync(root);
    const pdf = join(root, 'gauge-report.pdf');
    writeFileSync(pdf, writePdf([[{ x: 72, y: 700, size: 11, text: 'The anemometer on the ridge mast was recalibrated on 12 March 2024.' }]]));
    writeFileSync(join(root, 'notes.md'), '# Notes\n\nThe rain gauge was cleaned in April.\n');
    const index = join(work, 'idx');
    let io = capture();
    assert.equal(await main(['index', root, '--index', index], io), 0, io.all());
    // The file is cut short after it was indexed: it no longer opens.
    truncateSync(pdf, 200);
    io = capture();
    assert.equal(await main(['index', root, '--index', index], io), 0, io.all());
    const text = io.stdout.join('\n');
    assert.match(text, /stale {3}1 \(their last good version is served/);
    assert.match(text, /error gauge-report\.pdf: .*; its last good version stays indexed \(stale\)/);
    io = capture();
    assert.equal(await main(['index', root, '--index', index, '--json'], io), 0, io.all());
    const summary = JSON.parse(io.stdout.pop()!) as { stale: Array<{ file: string; reason: string }> };
    assert.deepEqual(
      summary.stale.map((s) => s.file),
      ['gauge-report.pdf'],
    );
    assert.match(summary.stale[0]!.reason, /gauge-report\.pdf/);

    const question = 'When was the anemometer recalibrated?';
    io = capture();
    assert.equal(await main(['ask', question, '--dir', root, '--index', index, '--json'], io), 0, io.all());
    const trace = JSON.parse(io.stdout.pop()!) as AskTrace;
    const cited = trace.answer.citations.find((c) => c.file === 'gauge-report.pdf');
    assert.ok(cited, trace.answer.text);
    assert.equal(cited.stale, true);
    assert.ok(trace.answer.citations.filter((c) => c.file !== 'gauge-report.pdf').every((c) => c.stale === undefined));
    const items = trace.rounds.flatMap((r) => r.retrieved);
    assert.ok(items.some((it) => it.file === 'gauge-report.pdf' && it.stale === true));
    assert.ok(items.filter((it) => it.file !== 'gauge-report.pdf').every((it) => it.stale === undefined));
    io = capture();
    assert.equal(await main(['ask', question, '--dir', root, '--index', index], io), 0, io.all());
    const out = io.stdout.join('\n');
    assert.match(out, /\[\d\] gauge-report\.pdf p\.1 .*\(stale: from the last good version of a file that no longer parses\)/);
    assert.match(out, /Note: gauge-report\.pdf changed and no longer parses; the evidence quoted from it is the last good version/);
  });
});

describe('an honest reader label', () => {
  let work: string;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'canopy-llm-label-'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('a refused LLM endpoint: "LLM failed: <reason>; answered extractively", at once, not "no LLM configured"', async () => {
    const root = join(work, 'docs');
    mkdirSync(root);
    writeFileSync(join(root, 'notes.md'), '# Notes\n\nThe rain gauge was cleaned in April.\n');
    const index = join(work, 'idx');
    let io = capture();
    assert.equal(await main(['index', root, '--index', index], io), 0, io.all());
    // A port that was open a moment ago and is closed now: the connection is refused.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const p = (server.address() as { port: number }).port;
        server.close(() => resolve(p));
      });
    });
    io = capture();
    io.env = { CANOPY_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, CANOPY_LLM_MODEL: 'some-model' };
    const started = Date.now();
    assert.equal(await main(['ask', 'When was the rain gauge cleaned?', '--dir', root, '--index', index, '--llm'], io), 0, io.all());
    const out = io.stdout.join('\n');
    assert.match(out, new RegExp(`A \\(LLM failed: LLM request to 127\\.0\\.0\\.1:${port} failed: could not connect \\(ECONNREFUSED\\)[^\\n]*; answered extractively`));
    assert.doesNotMatch(out, /no LLM configured/);
    assert.match(out, /April/);
    assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
    io = capture();
    io.env = { CANOPY_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, CANOPY_LLM_MODEL: 'some-model' };
    assert.equal(await main(['ask', 'When was the rain gauge cleaned?', '--dir', root, '--index', index, '--llm', '--json'], io), 0, io.all());
    const trace = JSON.parse(io.stdout.pop()!) as AskTrace;
    assert.equal(trace.answer.mode, 'extractive');
    assert.match(trace.answer.llmFailure ?? '', /ECONNREFUSED/);
  });
});

describe('the smaller findings of a first real try (issue 33, finding 8)', () => {
  let work: string;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'canopy-small-'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('one question limit: the CLI refuses what the MCP server and the tools refuse, before opening anything; the core refuses it for every host', async () => {
    const io = capture(work);
    assert.equal(await main(['ask', 'x'.repeat(QUESTION_MAX + 1000), '--dir', work], io), 2);
    assert.match(io.stderr.join('\n'), /the question is longer than 4000 characters \(at most 4,000, as for the MCP server and the VS Code tools\)/);
    assert.equal(checkQuestion('x'.repeat(QUESTION_MAX + 1000)).ok, false, 'the agents\' schema says the same');
    const service = new AskService({} as ConstructorParameters<typeof AskService>[0]);
    await assert.rejects(service.ask('y'.repeat(QUESTION_MAX + 1), resolveSettings({})), (err: unknown) => err instanceof CanopyError && err.code === 'E_BAD_INPUT' && /longer than 4000/.test(err.message));
  });

  it('canopy mcp --help suggests a client configuration that runs: this Node and this bin/canopy.js by absolute path', async () => {
    const io = capture(work);
    assert.equal(await main(['mcp', '--help'], io), 0);
    const help = io.stdout.join('\n');
    assert.doesNotMatch(help, /"command": ?"canopy"/);
    const config = JSON.parse(/\{ "mcpServers": \{ "canopy": (\{.*\}) \} \}/.exec(help)![1]!) as { command: string; args: string[] };
    assert.equal(config.command, process.execPath);
    assert.ok(existsSync(config.args[0]!) && config.args[0]!.endsWith(join('bin', 'canopy.js')), config.args[0]);
    assert.deepEqual(config.args.slice(1), ['mcp', '--dir', '/path/to/folder']);
  });

  it('an empty folder gets a "no supported files" hint (text and --json)', async () => {
    const root = join(work, 'empty');
    mkdirSync(root);
    writeFileSync(join(root, 'photo.heic'), 'not a format Canopy reads');
    let io = capture(work);
    assert.equal(await main(['index', root, '--index', join(work, 'idx-empty')], io), 0, io.all());
    assert.match(io.stdout.join('\n'), /hint: no supported files in .*empty: Canopy reads \.md .*\.pdf .*"canopy index .* --list" shows what it finds/);
    io = capture(work);
    assert.equal(await main(['index', root, '--index', join(work, 'idx-empty'), '--json'], io), 0, io.all());
    assert.match((JSON.parse(io.stdout.pop()!) as { hint?: string }).hint ?? '', /^no supported files in /);
  });

  it('canopy eval: its default compressor and node score are the ask\'s, and a run without --sweep prints no table of dashes', () => {
    assert.deepEqual(parseEvalCompressor(ASK_COMPRESSOR).compressor, canopyCompressor(defaultSettings));
    const unmeasured = comparisonTable({ rows: [], metrics: [], curve: [], questions: 3, comparisons: [{ config: ASK_COMPRESSOR } as Comparison] });
    assert.ok(unmeasured.every((line) => !/\| — \| — \|/.test(line)), unmeasured.join('\n'));
    assert.match(unmeasured.join('\n'), /--sweep measures the flat top-m curve/);
  });
});
