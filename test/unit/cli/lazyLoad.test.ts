// Start-up of a `canopy` process: a command loads its own module and what it uses, not every
// command's. `canopy ask` must not load the MCP server, the LLM provider's SDK, the OpenTelemetry
// exporter, the Postgres driver or the file parsers unless the question asks for them (each cost
// start-up time in every cold `canopy ask`, BENCHMARKS.md "Real documents").
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tsNode } from '../../helpers/tsNode';

const root = join(__dirname, '..', '..', '..');

/** The source modules (relative to src/) and packages loaded after `main(argv)` in a fresh process. */
function loadedAfter(argv: string[]): string[] {
  const script = `
    const { main } = require('./src/cli/main.ts');
    const io = { out() {}, err() {}, env: {}, cwd: process.cwd() };
    main(${JSON.stringify(argv)}, io).then(() => {
      process.stdout.write(JSON.stringify(Object.keys(require.cache)));
    });`;
  const r = spawnSync(process.execPath, [...tsNode, '-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env } });
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as string[]).map((f) => f.replace(/\\/g, '/'));
}

const has = (files: string[], part: string) => files.some((f) => f.includes(part));

describe('CLI start-up loads only what the command uses', () => {
  it('ask loads its command, not the other commands, the LLM SDK, the exporter, pg or the parsers', () => {
    const files = loadedAfter(['ask', '--help']);
    assert.ok(has(files, 'src/cli/commands/ask.ts'), 'the ask command itself');
    assert.ok(has(files, 'src/core/app/askService.ts'));
    for (const absent of [
      'src/cli/commands/index.ts',
      'src/cli/commands/mcp.ts',
      'src/cli/commands/train.ts',
      'src/core/llm/openaiProvider.ts',
      'node_modules/openai/',
      'src/core/export/otlpExport.ts',
      'node_modules/@opentelemetry/',
      'src/core/index/postgresStore.ts',
      'node_modules/pg/',
      'src/core/ingest/parseFile.ts',
      'node_modules/parse5/',
      'node_modules/@modelcontextprotocol/',
    ]) {
      assert.ok(!has(files, absent), `${absent} is not loaded by canopy ask`);
    }
  });

  it('a command that needs them still gets them: index loads the parsers when it parses, mcp its server', () => {
    assert.ok(has(loadedAfter(['mcp', '--help']), 'src/cli/commands/mcp.ts'));
    assert.ok(has(loadedAfter(['index', '--help']), 'src/cli/commands/index.ts'));
  });
});
