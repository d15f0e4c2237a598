/**
 * The `canopy` command line: the same core as the extension, headless. `main(argv)` returns the
 * exit code so tests can run it in-process; bin/canopy.js calls it.
 */
import { describeError, ErrorCodes } from '../core/errors';
import { askHelp, runAsk } from './commands/ask';
import { indexHelp, runIndex } from './commands/index';
import { goldHelp, runGold } from './commands/gold';
import { trainHelp, runTrain } from './commands/train';
import { topicsHelp, runTopics } from './commands/topics';
import { runStore, storeHelp } from './commands/store';
import { mcpHelp, runMcp } from './commands/mcp';
import { exportHelp, runExport } from './commands/export';
import { tuneHelp, runTune } from './commands/tune';
import { type CliIO, isUsageError, processIO } from './io';

declare const CANOPY_VERSION: string | undefined;

interface Command {
  summary: string;
  /** The command's help text (a function for a command whose module is loaded on demand). */
  help: string | (() => Promise<string>);
  run(args: string[], io: CliIO): Promise<number>;
}

/**
 * The research commands live in their own bundle (tools.ts, built to dist/cliTools.js): required
 * when one of them runs. A require, not import(): the tests load TypeScript through tsx's
 * CommonJS hook, where import() of a relative .ts path fails.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = async (): Promise<typeof import('./tools')> => require('./tools') as typeof import('./tools');

const commands: Record<string, Command> = {
  index: { summary: 'index a folder of documents', help: indexHelp, run: runIndex },
  ask: { summary: 'answer a question from an index, with evidence and citations', help: askHelp, run: runAsk },
  eval: {
    summary: 'measure evidence compression and retrieval on a dataset file',
    help: async () => (await tools()).evalHelp,
    run: async (args, io) => (await tools()).runEvalCommand(args, io),
  },
  bench: {
    summary: 'benchmarks: encoder, indexing, query latency (bench --help)',
    help: async () => (await tools()).benchHelp,
    run: async (args, io) => (await tools()).runBench(args, io),
  },
  gold: { summary: 'import a dataset\'s gold evidence as annotations', help: goldHelp, run: runGold },
  train: { summary: 'train the node-encoder adapter on gold annotations', help: trainHelp, run: runTrain },
  topics: { summary: 'topic compass: fit topics, train its scorer (topics --help)', help: topicsHelp, run: runTopics },
  store: { summary: 'index stores: serve a PGlite database, show what a store holds (store --help)', help: storeHelp, run: runStore },
  mcp: { summary: 'serve the index to AI agents over the Model Context Protocol (stdio)', help: mcpHelp, run: (args, io) => runMcp(args, io) },
  export: { summary: 'export saved traces as OpenInference spans (OTLP/HTTP or a file)', help: exportHelp, run: runExport },
  tune: { summary: 'fit the retrieval fusion to this workspace\'s gold annotations or qrels', help: tuneHelp, run: runTune },
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
  if (rest.includes('--help') || rest.includes('-h')) {
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
