/**
 * The `canopy` command line: the same core as the extension, headless. `main(argv)` returns the
 * exit code so tests can run it in-process; bin/canopy.js calls it.
 */
import { describeError, ErrorCodes } from '../core/errors';
import { type CliIO, isUsageError, processIO } from './io';

declare const CANOPY_VERSION: string | undefined;

interface Command {
  summary: string;
  /** The command's help text (a function for a command whose module is loaded on demand). */
  help: string | (() => Promise<string>);
  /** Has subcommands that answer `--help` themselves (`canopy bench realdocs --help`). */
  subcommandHelp?: boolean;
  run(args: string[], io: CliIO): Promise<number>;
}

/**
 * The research commands live in their own bundle (tools.ts, built to dist/cliTools.js): required
 * when one of them runs. A require, not import(): the tests load TypeScript through tsx's
 * CommonJS hook, where import() of a relative .ts path fails.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = async (): Promise<typeof import('./tools')> => require('./tools') as typeof import('./tools');

/**
 * Every other command's module is required when that command runs or its help is asked for,
 * so the bundle initialises only what the command uses: `canopy ask` does not set up the MCP
 * server, the indexer's progress bar or the training code (a required module of the bundle is
 * initialised on its first require). Requires with literal paths, so the bundler includes them.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const modules = {
  ask: () => require('./commands/ask') as typeof import('./commands/ask'),
  index: () => require('./commands/index') as typeof import('./commands/index'),
  gold: () => require('./commands/gold') as typeof import('./commands/gold'),
  train: () => require('./commands/train') as typeof import('./commands/train'),
  topics: () => require('./commands/topics') as typeof import('./commands/topics'),
  store: () => require('./commands/store') as typeof import('./commands/store'),
  mcp: () => require('./commands/mcp') as typeof import('./commands/mcp'),
  export: () => require('./commands/export') as typeof import('./commands/export'),
  tune: () => require('./commands/tune') as typeof import('./commands/tune'),
  traces: () => require('./commands/traces') as typeof import('./commands/traces'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

const commands: Record<string, Command> = {
  index: { summary: 'index a folder of documents', help: async () => modules.index().indexHelp, run: (args, io) => modules.index().runIndex(args, io) },
  ask: { summary: 'answer a question from an index, with evidence and citations', help: async () => modules.ask().askHelp, run: (args, io) => modules.ask().runAsk(args, io) },
  eval: {
    summary: 'measure evidence compression and retrieval on a dataset file',
    help: async () => (await tools()).evalHelp,
    run: async (args, io) => (await tools()).runEvalCommand(args, io),
  },
  bench: {
    summary: 'benchmarks: encoder, indexing, query latency (bench --help)',
    help: async () => (await tools()).benchHelp,
    subcommandHelp: true,
    run: async (args, io) => (await tools()).runBench(args, io),
  },
  gold: { summary: 'import a dataset\'s gold evidence as annotations', help: async () => modules.gold().goldHelp, run: (args, io) => modules.gold().runGold(args, io) },
  train: { summary: 'train the node-encoder adapter on gold annotations', help: async () => modules.train().trainHelp, run: (args, io) => modules.train().runTrain(args, io) },
  topics: { summary: 'topic compass: fit topics, train its scorer (topics --help)', help: async () => modules.topics().topicsHelp, run: (args, io) => modules.topics().runTopics(args, io) },
  store: { summary: 'index stores: serve a PGlite database, show what a store holds (store --help)', help: async () => modules.store().storeHelp, run: (args, io) => modules.store().runStore(args, io) },
  mcp: { summary: 'serve the index to AI agents over the Model Context Protocol (stdio)', help: async () => modules.mcp().mcpHelp, run: (args, io) => modules.mcp().runMcp(args, io) },
  export: { summary: 'export saved traces as OpenInference spans (OTLP/HTTP or a file)', help: async () => modules.export().exportHelp, run: (args, io) => modules.export().runExport(args, io) },
  tune: { summary: 'fit the retrieval fusion to this workspace\'s gold annotations or qrels', help: async () => modules.tune().tuneHelp, run: (args, io) => modules.tune().runTune(args, io) },
  traces: { summary: 'saved answers: how many and how big, prune the oldest (traces --help)', help: async () => modules.traces().tracesHelp, run: (args, io) => modules.traces().runTraces(args, io) },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return `Usage: canopy <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun "canopy <command> --help" for a command's options.`;
}

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.out(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.out(typeof CANOPY_VERSION === 'string' ? CANOPY_VERSION : 'dev');
    return 0;
  }
  const command = commands[name];
  if (!command) {
    io.err(`canopy: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const forSubcommand = command.subcommandHelp === true && rest[0] !== undefined && !rest[0].startsWith('-');
  if ((rest.includes('--help') || rest.includes('-h')) && !forSubcommand) {
    io.out(typeof command.help === 'string' ? command.help : await command.help());
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (isUsageError(err) || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      const help = typeof command.help === 'string' ? command.help : await command.help();
      io.err(`canopy ${name}: ${usageMessage(err as Error & { code?: string }, name)}\n\n${help}`);
      return 2;
    }
    const { code, message } = cliError(err);
    io.err(`canopy ${name}: ${message} (${code})`);
    return code === 'E_CANCELLED' ? 130 : 1;
  }
}

/** Node's parseArgs messages, reworded where they are garbled (its unknown-option text leaves a quote open). */
export function usageMessage(err: Error & { code?: string }, command: string): string {
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /^Unknown option '([^']*)'/.exec(err.message)?.[1];
    if (option !== undefined) {
      return `unknown option ${option}; an argument that starts with "-" goes after "--", as in: canopy ${command} -- "${option}"`;
    }
  }
  return err.message;
}

/**
 * The code and message the CLI prints. A file-system error that reached the top (a path given by
 * the user that is missing, a file where a folder belongs, no permission) is the user's to fix,
 * so it gets that code, never E_INTERNAL.
 */
export function cliError(err: unknown): { code: string; message: string } {
  const described = describeError(err);
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  if (described.code !== ErrorCodes.internal || typeof errno !== 'string') return described;
  if (errno === 'ENOENT') return { code: ErrorCodes.notFound, message: described.message };
  if (errno === 'ENOTDIR' || errno === 'EISDIR' || errno === 'ELOOP' || errno === 'ENAMETOOLONG') return { code: ErrorCodes.badInput, message: described.message };
  if (errno === 'EACCES' || errno === 'EPERM' || errno === 'EROFS') return { code: ErrorCodes.forbidden, message: described.message };
  return described;
}
