/**
 * `canopy mcp`: the MCP server over stdio (src/cli/mcp/server.ts) for one indexed folder. It runs
 * until the client closes stdin. stdout carries the protocol only: everything else — log lines,
 * any library's console output — goes to stderr.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { TraceExporter } from '../../core/export/otlpExport';
import type { ChatModel } from '../../core/llm/llm';
import type { AskTrace } from '../../contracts/trace';
import { createCanopyMcpServer } from '../mcp/server';
import { type CliIO, UsageError } from '../io';
import { llmFromEnv } from '../llm';
import { openWorkspace } from '../runtime';
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
  --llm                  the ask tool answers with the OpenAI-compatible endpoint in
                         CANOPY_LLM_BASE_URL / CANOPY_LLM_MODEL (key: CANOPY_LLM_API_KEY);
                         without it, answers are extractive
  --verbose              log every step to stderr
${exportFlagsHelp}

Client configuration (e.g. Claude Desktop's claude_desktop_config.json):
  { "mcpServers": { "canopy": { "command": "canopy", "args": ["mcp", "--dir", "/path/to/folder"] } } }`;

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
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
      llm: { type: 'boolean' },
      verbose: { type: 'boolean' },
      ...exportFlagOptions,
    },
  });
  const topK = positiveInt(values['top-k'], '--top-k');
  const maxRounds = positiveInt(values.rounds, '--rounds');
  const llm = values.llm ? llmFromEnv(io.env, '--llm') : undefined;
  const exporter = exporterFromFlags(values, io);
  // The protocol owns stdout: a library printing there would corrupt the stream.
  const toStderr = (...parts: unknown[]) => io.err(parts.map(String).join(' '));
  const saved = { log: console.log, info: console.info, debug: console.debug };
  Object.assign(console, { log: toStderr, info: toStderr, debug: toStderr });
  try {
    await serve(values, io, stdio, { topK, maxRounds, llm, exporter });
  } finally {
    Object.assign(console, saved);
  }
  return 0;
}

interface ServeOptions {
  topK: number | undefined;
  maxRounds: number | undefined;
  llm: ChatModel | undefined;
  exporter: TraceExporter | undefined;
}

async function serve(
  values: { dir?: string | undefined; index?: string | undefined; adapter?: string | undefined; verbose?: boolean | undefined },
  io: CliIO,
  stdio: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream },
  { topK, maxRounds, llm, exporter }: ServeOptions,
): Promise<void> {
  const workspace = openWorkspace(values.dir ?? '.', values.index, {}, io, values.verbose ?? false);
  const onTrace = exporter
    ? async (trace: AskTrace) => {
        try {
          const { spans } = await exporter.export(trace);
          if (values.verbose) io.err(`info: trace ${trace.id}: ${spans} spans exported to ${exporter.describe()}`);
        } catch (err) {
          io.err(`warn: ${(err as Error).message}`);
        }
      }
    : undefined;
  const server = createCanopyMcpServer({
    workspace,
    root: workspace.config.root,
    version: typeof CANOPY_VERSION === 'string' ? CANOPY_VERSION : 'dev',
    ...(llm ? { llm } : {}),
    defaults: {
      ...(topK ? { topK } : {}),
      ...(maxRounds ? { maxRounds } : {}),
      ...(values.adapter !== undefined ? { adapter: values.adapter && path.resolve(io.cwd, values.adapter) } : {}),
    },
    ...(onTrace ? { onTrace } : {}),
  });
  const transport = new StdioServerTransport(stdio.stdin as never, stdio.stdout as never);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    stdio.stdin.once('end', () => resolve());
  });
  try {
    await server.connect(transport);
    io.err(`canopy mcp: serving ${workspace.config.root} (index ${workspace.config.indexDir}) on stdio`);
    await closed;
  } finally {
    await server.close().catch(() => undefined);
    await workspace.dispose();
  }
}
