// The `canopy` CLI run in-process: exit codes, usage errors and the index summary.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main';
import type { CliIO } from '../../src/cli/io';
import { startOpenAiServer } from '../helpers/openaiServer';

const demo = fileURLToPath(new URL('../fixtures/demo', import.meta.url));

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('canopy CLI', () => {
  it('prints usage and exits 2 without a command', async () => {
    const io = capture();
    assert.equal(await main([], io), 2);
    assert.match(io.stdout.join('\n'), /Usage: canopy <command>/);
  });

  it('rejects an unknown command', async () => {
    const io = capture();
    assert.equal(await main(['frobnicate'], io), 2);
    assert.match(io.stderr.join('\n'), /unknown command "frobnicate"/);
  });

  it('rejects bad flags with the command help', async () => {
    const io = capture();
    assert.equal(await main(['index', demo, '--max-file-mb', 'lots'], io), 2);
    assert.match(io.stderr.join('\n'), /--max-file-mb must be a positive number/);
    assert.match(io.stderr.join('\n'), /Usage: canopy index/);
  });

  it('lists the demo corpus, one file per format', async () => {
    const io = capture();
    assert.equal(await main(['index', demo, '--list', '--json'], io), 0);
    const listing = JSON.parse(io.stdout.join('\n'));
    const formats = [...new Set(listing.files.map((f: { format: string }) => f.format))].sort();
    assert.deepEqual(formats, ['csv', 'html', 'jsonl', 'markdown', 'notebook', 'subtitles', 'text', 'tsv']);
  });

  it('indexes the demo corpus with the built-in encoder, then answers with citations', async () => {
    const index = mkdtempSync(join(tmpdir(), 'canopy-cli-'));
    try {
      let io = capture();
      assert.equal(await main(['index', demo, '--index', index, '--json'], io), 0, io.stderr.join('\n'));
      const summary = JSON.parse(io.stdout.join('\n'));
      assert.equal(summary.errors.length, 0);
      assert.equal(summary.files, 8);
      assert.ok(summary.nodes > summary.items);

      io = capture();
      assert.equal(await main(['ask', '--dir', demo, '--index', index, 'Which plot lost ash trees to dieback?'], io), 0, io.stderr.join('\n'));
      const text = io.stdout.join('\n');
      assert.match(text, /A \(extractive — no LLM configured/);
      assert.match(text, /P5 lost three mature ash trees/);
      assert.match(text, /\[1\] survey-report\.md:\d+:\d+/);
      assert.match(text, /Trace: .*\.json/);

      io = capture();
      assert.equal(await main(['ask', '--dir', demo, '--index', index, '--json', '--compressor', 'flat:3', 'When was the P6 battery replaced?'], io), 0);
      const trace = JSON.parse(io.stdout.join('\n'));
      assert.equal(trace.schema, 'canopy.trace');
      assert.deepEqual(trace.settings.compressor, { name: 'flat', m: 3 });
      assert.ok(trace.readerInput.regions.length <= 3);

      // --llm: the critic, reader and (with --llm-routing) router go to the endpoint in the environment.
      io = capture();
      assert.equal(await main(['ask', '--dir', demo, '--index', index, '--llm', 'Which plot lost ash trees?'], io), 2);
      assert.match(io.stderr.join('\n'), /--llm needs CANOPY_LLM_BASE_URL and CANOPY_LLM_MODEL/);
      const server = await startOpenAiServer();
      try {
        server.script(
          { kind: 'reply', content: '{"aggregate": false, "modalities": ["text"], "reason": "one plot"}' },
          { kind: 'reply', content: '{"sufficient": true, "missing": [], "followUpQuery": ""}' },
          { kind: 'reply', content: ['Plot P5 lost its ash trees [1].'] },
        );
        io = capture();
        io.env = { CANOPY_LLM_BASE_URL: server.baseUrl, CANOPY_LLM_MODEL: 'test-model', CANOPY_LLM_API_KEY: 'sk-cli-test' };
        assert.equal(await main(['ask', '--dir', demo, '--index', index, '--llm', '--llm-routing', '--json', 'Which plot lost ash trees?'], io), 0, io.stderr.join('\n'));
        const llmTrace = JSON.parse(io.stdout.join('\n'));
        assert.equal(llmTrace.rounds[0].routing.source, 'llm');
        assert.equal(llmTrace.rounds[0].critic.source, 'llm');
        assert.equal(llmTrace.answer.mode, 'llm');
        assert.match(llmTrace.answer.text, /P5 lost its ash trees/);
        assert.equal(server.requests.length, 3);
        assert.equal(server.requests[0]?.headers.authorization, 'Bearer sk-cli-test');
      } finally {
        await server.close();
      }
    } finally {
      rmSync(index, { recursive: true, force: true });
    }
  });

  it('names a missing folder in the error and creates nothing', async () => {
    for (const extra of [['--list'], []]) {
      const io = capture();
      assert.equal(await main(['index', '/no/such/folder', ...extra], io), 1);
      assert.match(io.stderr.join('\n'), /\/no\/such\/folder does not exist \(E_NOT_FOUND\)/);
      assert.equal(existsSync('/no/such/folder'), false);
    }
  });

  it('says how to build an index when asked before indexing', async () => {
    const io = capture();
    assert.equal(await main(['ask', '--dir', '/tmp', '--index', '/tmp/canopy-no-index-here', 'anything?'], io), 1);
    assert.match(io.stderr.join('\n'), /no Canopy index at \/tmp\/canopy-no-index-here: index the folder first/);
  });
});
