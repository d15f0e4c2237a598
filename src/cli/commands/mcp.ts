/**
 * `canopy mcp`: the MCP server over stdio (src/cli/mcp/server.ts) for one indexed folder. It runs
 * until the client closes stdin. stdout carries the protocol only: everything else — log lines,
 * any library's console output — goes to stderr.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { MAX_ROUNDS, TOP_K } from '../../contracts/askSettings';
import type { Range } from '../../contracts/validation';
import { AgentOperations } from '../../core/agent/operations';
import { resolveSettings, type CanopySettings } from '../../core/config/settings';
import { describeError } from '../../core/errors';
import type { TraceExporter } from '../../core/export/otlpExport';
import type { ChatModel } from '../../core/llm/llm';
import { type CliIO, UsageError } from '../io';
import { llmFromEnv } from '../llm';
import { cliLogger, cliServices } from '../runtime';
import { exportFlagOptions, exportFlagsHelp, exporterFromFlags } from '../traceExportFlags';

declare const CANOPY_VERSION: string | undefined;

export const mcpHelp = `Usage: canopy mcp [options]

Serve a folder's index to AI agents over the Model Context Protocol (stdio): the tools
search_evidence, ask, get_trace and list_questions, and every saved trace as a resource
(canopy://trace/<name>). Index the folder first ("canopy index <dir>").

Options:
  --dir <dir>            the indexed folder (default: the current folder)
  --index <dir>          the index (default <dir>/.canopy/index)
  -k, --top-k <n>        items retrieved per round (default 10)
  --rounds <n>           most critic rounds (default 3)
  --adapter <file>       a node-encoder adapter checkpoint (canopy train)
  --fusion <profile|rrf> how retrieval fuses dense and BM25 (default profile; see canopy ask --help)
  --llm                  the ask tool answers with the OpenAI-compatible endpoint in
                         CANOPY_LLM_BASE_URL / CANOPY_LLM_MODEL (key: CANOPY_LLM_API_KEY);
                         without it, answers are extractive
  --verbose              log every step to stderr
${exportFlagsHelp}

Client configuration (e.g. Claude Desktop's claude_desktop_config.json; VS Code's .vscode/mcp.json
takes "servers" for "mcpServers"), with this Node and this copy of Canopy by absolute path — a
client starts the server without your shell's PATH, where "canopy" is not found:
  { "mcpServers": { "canopy": ${JSON.stringify(mcpLaunch())} } }`;

/**
 * How an MCP client starts this server: this Node and the `canopy` entry of this copy (the
 * checkout's bin/canopy.js, else the script running now, e.g. the VSIX's dist/mcp.js), by absolute
 * path — a client spawns its servers without the user's shell PATH, and `canopy` is on no PATH
 * unless installed globally.
 */
export function mcpLaunch(dir = '/path/to/folder'): { command: string; args: string[] } {
  let at = __dirname;
  for (let up = 0; up < 4; up++) {
    const bin = path.join(at, 'bin', 'canopy.js');
    if (existsSync(bin)) return { command: process.execPath, args: [bin, 'mcp', '--dir', dir] };
    at = path.dirname(at);
  }
  const script = process.argv[1] ? path.resolve(process.argv[1]) : 'canopy.js';
  return { command: process.execPath, args: /mcp\.js$/.test(script) ? [script, '--dir', dir] : [script, 'mcp', '--dir', dir] };
}

function intFlag(value: string | undefined, flag: string, range: Range): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < range.min || n > range.max) throw new UsageError(`${flag} must be an integer from ${range.min} to ${range.max}`);
  return n;
}

export async function runMcp(args: string[], io: CliIO, stdio: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream } = { stdin: process.stdin, stdout: process.stdout }): Promise<number> {
  const { values } = parseArgs({
    args,
    allowPositionals: false,
    options: {
      dir: { type: 'string' },
      index: { type: 'string' },
      'top-k': { type: 'string', short: 'k' },
      rounds: { type: 'string' },
      adapter: { type: 'string' },
      fusion: { type: 'string' },
      llm: { type: 'boolean' },
      verbose: { type: 'boolean' },
      ...exportFlagOptions,
    },
  });
  const topK = intFlag(values['top-k'], '--top-k', TOP_K);
  const maxRounds = intFlag(values.rounds, '--rounds', MAX_ROUNDS);
  if (values.fusion !== undefined && values.fusion !== 'profile' && values.fusion !== 'rrf') throw new UsageError('--fusion must be profile or rrf');
  const llm = values.llm ? llmFromEnv(io.env, '--llm') : undefined;
  // The flags are the settings of every question this server answers.
  const settings = resolveSettings({
    ...(topK ? { topK } : {}),
    ...(maxRounds ? { maxRounds } : {}),
    ...(values.adapter ? { adapterCheckpoint: path.resolve(io.cwd, values.adapter) } : {}),
    ...(values.fusion !== undefined ? { retrievalFusion: values.fusion } : {}),
  });
  const exporter = exporterFromFlags(values, io);
  // The protocol owns stdout: a library printing there would corrupt the stream.
  const toStderr = (...parts: unknown[]) => io.err(parts.map(String).join(' '));
  const saved = { log: console.log, info: console.info, debug: console.debug };
  Object.assign(console, { log: toStderr, info: toStderr, debug: toStderr });
  try {
    await serve(values, io, stdio, { settings, llm, exporter });
  } finally {
    Object.assign(console, saved);
  }
  return 0;
}

interface ServeOptions {
  settings: CanopySettings;
  llm: ChatModel | undefined;
  exporter: TraceExporter | undefined;
}

async function serve(
  values: { dir?: string | undefined; index?: string | undefined; verbose?: boolean | undefined },
  io: CliIO,
  stdio: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  { settings, llm, exporter }: ServeOptions,
): Promise<void> {
  const verbose = values.verbose ?? false;
  const services = cliServices(values.dir ?? '.', values.index, io, verbose);
  const agent = new AgentOperations({ asker: services.ask, traces: services.traces, settings: () => settings, logger: cliLogger(io, verbose) });
  // Every answer is exported as it is saved; the answer stands whether or not the export went
  // through, and the exports still under way are awaited before the server exits.
  const exporting = new Set<Promise<void>>();
  const unsubscribe = exporter
    ? agent.onEvent(({ trace }) => {
        const done = exporter.export(trace).then(
          ({ spans }) => {
            if (verbose) io.err(`info: trace ${trace.id}: ${spans} spans exported to ${exporter.describe()}`);
          },
          (err: Error) => io.err(`warn: ${err.message}`),
        );
        exporting.add(done);
        void done.finally(() => exporting.delete(done));
      })
    : undefined;
  // The MCP SDK (some 150 modules with its schema validators) loads when a server starts, not
  // with every `canopy` command that imports this file for its help text.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createCanopyMcpServer, StdioServerTransport } = require('../mcp/server') as typeof import('../mcp/server');
  const server = createCanopyMcpServer({
    agent,
    root: services.root,
    version: typeof CANOPY_VERSION === 'string' ? CANOPY_VERSION : 'dev',
    ...(llm ? { llm } : {}),
  });
  const transport = new StdioServerTransport(stdio.stdin as never, stdio.stdout as never);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    stdio.stdin.once('end', () => resolve());
  });
  try {
    await server.connect(transport);
    io.err(`canopy mcp: serving ${services.root} (index ${services.indexDir}) on stdio`);
    // Say now, not at the first question, when there is nothing to serve yet: the tools answer E_NOT_FOUND until the folder is indexed.
    await services.index.corpus(settings).then(
      (corpus) => io.err(`canopy mcp: ${Object.keys(corpus.manifest.files).length} files, ${corpus.itemCount} items indexed`),
      (err: unknown) => io.err(`canopy mcp: ${describeError(err).message}`),
    );
    await closed;
  } finally {
    unsubscribe?.();
    await server.close().catch(() => undefined);
    await Promise.all(exporting);
    await services.close();
  }
}
