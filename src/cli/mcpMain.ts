/**
 * `node dist/mcp.js [options]` is `canopy mcp [options]`: the MCP server as its own bundle, which
 * the VSIX ships (with the MCP SDK inside it, so it runs without node_modules) and which VS Code
 * starts through the extension's MCP server definition provider.
 */
import { describeError } from '../core/errors';
import { processIO } from './io';
import { mcpHelp, runMcp } from './commands/mcp';

async function main(argv: string[]): Promise<number> {
  const io = processIO();
  if (argv.includes('--help') || argv.includes('-h')) {
    io.err(mcpHelp);
    return 0;
  }
  try {
    return await runMcp(argv, io);
  } catch (err) {
    const { code, message } = describeError(err);
    io.err(`canopy mcp: ${message} (${code})\n\n${mcpHelp}`);
    return code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || (err as Error).name === 'UsageError' ? 2 : 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`canopy mcp: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
