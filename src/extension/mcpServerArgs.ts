/**
 * The command line VS Code starts Canopy's MCP server with (the bundled `canopy mcp`): free of
 * `vscode` so that a plain-Node test can check it against the CLI's flags.
 */
import * as path from 'node:path';

/** The server definition's command line for the current folder and settings. */
export function mcpServerArgs(options: { mcpScript: string; root: string; indexDir: string; topK: number; maxRounds: number; adapter: string; fusion?: 'profile' | 'rrf'; otlpEndpoint?: string; otlpFile?: string; otlpProject?: string }): string[] {
  return [
    options.mcpScript,
    '--dir', options.root,
    '--index', options.indexDir,
    '--top-k', String(options.topK),
    '--rounds', String(options.maxRounds),
    ...(options.adapter ? ['--adapter', path.resolve(options.root, options.adapter)] : []),
    ...(options.fusion === 'rrf' ? ['--fusion', 'rrf'] : []),
    ...(options.otlpEndpoint ? ['--otlp-endpoint', options.otlpEndpoint] : []),
    ...(options.otlpFile ? ['--otlp-file', options.otlpFile] : []),
    ...(options.otlpProject && (options.otlpEndpoint || options.otlpFile) ? ['--otlp-project', options.otlpProject] : []),
  ];
}
