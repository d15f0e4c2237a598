// The CLI's export flags in-process: `canopy ask --otlp-file`, `canopy export`, and their usage errors.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { indexedFixture, type IndexedFixture } from '../../helpers/fixtureWorkspace';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlpReceiver';

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

const spansIn = (line: string) => (JSON.parse(line) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> }).resourceSpans[0]!.scopeSpans[0]!.spans;

describe('canopy ask/export --otlp-*', () => {
  let fx: IndexedFixture;
  let receiver: OtlpReceiver;
  before(async () => {
    [fx, receiver] = await Promise.all([indexedFixture('e2e-workspace'), startOtlpReceiver()]);
  });
  after(async () => {
    await Promise.all([fx?.dispose(), receiver?.close()]);
  });

  it('ask --otlp-file appends the answer as OTLP JSON and still prints the answer', async () => {
    const file = join(fx.root, '..', 'spans.jsonl');
    const io = capture();
    assert.equal(await main(['ask', '--dir', fx.root, '--index', fx.indexDir, '--otlp-file', file, 'When was the vane recalibrated?'], io), 0, io.stderr.join('\n'));
    assert.match(io.stdout.join('\n'), /2024-03-12/);
    assert.match(io.stderr.join('\n'), /Trace exported: \d+ spans to .*spans\.jsonl/);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    assert.ok(spansIn(lines[0]!).some((s) => s.name === 'canopy.ask'));
  });

  it('export --all sends every saved trace to an endpoint; a named trace can be sent alone', async () => {
    const io = capture();
    assert.equal(await main(['ask', '--dir', fx.root, '--index', fx.indexDir, 'wind speed on 2024-03-14'], io), 0, io.stderr.join('\n'));
    const all = capture();
    assert.equal(await main(['export', '--all', '--dir', fx.root, '--index', fx.indexDir, '--otlp-endpoint', receiver.base, '--otlp-project', 'p1', '--otlp-header', 'x-test=yes'], all), 0, all.stderr.join('\n'));
    assert.equal(all.stdout.length, 2);
    await receiver.waitFor(2);
    assert.deepEqual(receiver.requests.map((r) => r.resource['openinference.project.name']), ['p1', 'p1']);
    assert.equal(receiver.requests[0]!.headers['x-test'], 'yes');
    const one = capture();
    const name = all.stdout[0]!.split(':')[0]!;
    assert.equal(await main(['export', name, '--dir', fx.root, '--index', fx.indexDir, '--otlp-endpoint', receiver.base], one), 0, one.stderr.join('\n'));
    await receiver.waitFor(3);
    const missing = capture();
    assert.equal(await main(['export', 'no-such', '--dir', fx.root, '--index', fx.indexDir, '--otlp-endpoint', receiver.base], missing), 1);
    assert.match(missing.stderr.join('\n'), /no-such: no saved trace/);
  });

  it('refuses incomplete or malformed export flags with usage errors', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['export', '--all'], /needs --otlp-endpoint or --otlp-file/],
      [['export', '--otlp-file', 'x.jsonl'], /name at least one trace/],
      [['export', 'a', '--all', '--otlp-file', 'x.jsonl'], /not both/],
      [['ask', 'q', '--otlp-header', 'k=v'], /need --otlp-endpoint or --otlp-file/],
      [['ask', 'q', '--otlp-endpoint', 'http://h:1', '--otlp-header', 'novalue'], /name=value/],
      [['ask', 'q', '--otlp-endpoint', 'not a url'], /not a URL/],
      [['mcp', '--rounds', 'many'], /--rounds must be an integer from 1 to 10/],
      [['mcp', '--top-k', '101'], /--top-k must be an integer from 1 to 100/],
      [['mcp', '--fusion', 'max'], /--fusion must be profile or rrf/],
    ];
    for (const [args, message] of cases) {
      const io = capture();
      assert.equal(await main(args, io), 2, args.join(' '));
      assert.match(io.stderr.join('\n'), message, args.join(' '));
    }
    assert.ok(!existsSync('x.jsonl'));
  });

  it('documents the MCP client configuration in `canopy mcp --help`', async () => {
    const io = capture();
    assert.equal(await main(['mcp', '--help'], io), 0);
    assert.match(io.stdout.join('\n'), /"mcpServers": \{ "canopy"/);
    assert.match(io.stdout.join('\n'), /search_evidence, ask, get_trace and list_questions/);
  });
});
