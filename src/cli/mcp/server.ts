/**
 * Canopy as a Model Context Protocol server (`canopy mcp`, stdio): any MCP client — VS Code's
 * agent mode, Claude Desktop and Claude Code, Cursor, Continue — can search one folder's index for
 * cited evidence, ask for a cited answer, list the questions asked and read their traces. The
 * tools only validate arguments and format results; the work is the core's agent operations
 * (src/core/agent), the same the VS Code language-model tools call, and the input schemas are
 * built from the contracts' (src/contracts/agent.ts: the question, the k and rounds ranges).
 *
 * Tools: search_evidence, ask, get_trace, list_questions. Resources: every saved trace as
 * `canopy://trace/<file name>` (the full JSON, what the Evidence Inspector renders). Bad
 * arguments are refused by the SDK's schema check (zod, the contracts' version), and failures (no index yet, an unknown
 * trace) come back as tool errors (`isError`) whose text starts with Canopy's error code.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
// For `canopy mcp`, which loads this module (and the SDK) only when a server starts.
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod/mini';
import { describedQuestion, LIST_LIMIT, listLimit, maxRounds, regionLimit, topK, traceRef } from '../../contracts/agent';
import { describeTrace, type AgentAskOptions, type AgentOperations } from '../../core/agent/operations';
import { describeError } from '../../core/errors';
import type { ChatModel } from '../../core/llm/llm';

export interface CanopyMcpOptions {
  /** The agent operations over the folder's services (their settings carry the CLI's defaults). */
  agent: AgentOperations;
  /** The indexed folder, named in the server's instructions. */
  root: string;
  version: string;
  /** The LLM the `ask` tool answers with (else the extractive reader). */
  llm?: ChatModel;
}

const TRACE_URI = 'canopy://trace/{name}';

function text(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

/** A failure as a tool error: the client's model reads the code and the reason. */
function toolError(err: unknown): CallToolResult {
  const { code, message } = describeError(err);
  const hint = code === 'E_NOT_FOUND' && /no Canopy index/.test(message) ? ' (run "canopy index <folder>" first, or open the folder in VS Code with Canopy and index it)' : '';
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}${hint}` }] };
}

async function guarded(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return text(await run());
  } catch (err) {
    return toolError(err);
  }
}

export function createCanopyMcpServer(options: CanopyMcpOptions): McpServer {
  const { agent } = options;
  const server = new McpServer(
    { name: 'canopy', title: 'Canopy evidence search', version: options.version },
    {
      instructions:
        `Canopy searches the indexed documents of ${options.root} and returns evidence regions with exact citations ` +
        '(file, 1-based lines, 0-based editor range, character offsets; PDF pages; table rows). Every call saves a trace ' +
        '(canopy://trace/<name>) that a person can open in the Evidence Inspector. Cite the regions you use by their "ref".',
    },
  );
  const ask = (extra: { signal: AbortSignal }, args: { top_k?: number | undefined; max_rounds?: number | undefined }): AgentAskOptions => ({
    ...(args.top_k !== undefined ? { topK: args.top_k } : {}),
    ...(args.max_rounds !== undefined ? { maxRounds: args.max_rounds } : {}),
    signal: extra.signal,
  });

  server.registerTool(
    'search_evidence',
    {
      title: 'Search evidence',
      description:
        'Searches the indexed documents for evidence on a question: hybrid retrieval, each retrieved item compressed to the regions that matter, ' +
        'follow-up rounds while evidence is missing. Returns the kept regions in reading order with exact citations, their scores, and the trace id. No LLM is used.',
      inputSchema: { question: describedQuestion, max_regions: regionLimit, top_k: topK, max_rounds: maxRounds },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args, extra) => guarded(() => agent.searchEvidence(args.question, { ...ask(extra, args), ...(args.max_regions !== undefined ? { maxRegions: args.max_regions } : {}) })),
  );

  server.registerTool(
    'ask',
    {
      title: 'Ask with citations',
      description:
        `Answers a question from the indexed documents with numbered citations to exact source ranges. ${options.llm ? `The answer is written by ${options.llm.id}.` : 'No LLM is configured, so the answer quotes the best-supported evidence (extractive).'}`,
      inputSchema: { question: describedQuestion, top_k: topK, max_rounds: maxRounds },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: options.llm?.remote ?? false },
    },
    (args, extra) => guarded(() => agent.ask(args.question, { ...ask(extra, args), ...(options.llm ? { llm: options.llm } : {}) })),
  );

  server.registerTool(
    'get_trace',
    {
      title: 'Get a trace',
      description:
        'Reads a saved answer by its trace id or file name: the answer, citations, every round (query, retrieved items with scores, critic verdict) and the kept regions. ' +
        'detail "full" returns the whole trace JSON with every scored region tree (large).',
      inputSchema: {
        trace: traceRef,
        detail: z.optional(z.enum(['summary', 'full'])).check(z.describe('summary (default) or full.')),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const { trace, name } = await agent.getTrace(args.trace);
        return args.detail === 'full' ? trace : describeTrace(trace, name);
      }),
  );

  server.registerTool(
    'list_questions',
    {
      title: 'List asked questions',
      description: 'Lists the saved answers, newest first: trace id and file name, question, time, reader mode and evidence tokens.',
      inputSchema: { limit: listLimit },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => guarded(() => agent.listQuestions(args.limit ?? 50)),
  );

  server.registerResource(
    'trace',
    new ResourceTemplate(TRACE_URI, {
      // The newest LIST_LIMIT.max traces; older ones stay readable by name.
      list: async () => ({
        resources: (await agent.listQuestions(LIST_LIMIT.max)).map((t) => ({
          uri: `canopy://trace/${encodeURIComponent(t.name)}`,
          name: t.name,
          title: t.question,
          description: `${t.mode} answer of ${t.createdAt}, ${t.evidenceTokens} evidence tokens`,
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'Canopy trace', description: 'A saved answer with every score and decision (the Evidence Inspector renders it).', mimeType: 'application/json' },
    async (uri, variables) => {
      const name = decodeURIComponent(String(variables.name ?? ''));
      const trace = await agent.readTrace(name);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(trace) }] };
    },
  );
  return server;
}
