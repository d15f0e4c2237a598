/**
 * Registers Canopy's MCP server with VS Code (`vscode.lm.registerMcpServerDefinitionProvider`,
 * contributes.mcpServerDefinitionProviders), so that VS Code's agent mode — and MCP's own tool
 * picker — can start `dist/mcp.js` (the bundled `canopy mcp`) over the workspace folder and the
 * extension's index. That API arrived in VS Code 1.101 while Canopy supports 1.95, so it is
 * looked up at run time and typed here by the subset used; on an older VS Code nothing is
 * registered and the README's hand-written configuration still works.
 *
 * The server runs on the extension host's own runtime (`process.execPath`; in desktop VS Code
 * that is Electron, hence ELECTRON_RUN_AS_NODE) and gets the settings that change answers:
 * k, rounds, the retrieval fusion, the trusted user encoder folder and adapter, and the trace export.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { exportConfigFromSettings } from '../core/export/exportSettings';
import { userAdapterCheckpoint, userEncoderFolder } from '../core/config/trust';
import type { AgentHost } from './agentHost';
import { mcpServerArgs } from './mcpServerArgs';

export const mcpProviderId = 'canopy.mcp';

/** The subset of the VS Code ≥ 1.101 API used here. */
interface McpStdioServerDefinitionLike {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
  cwd?: vscode.Uri;
}
type McpStdioServerDefinitionCtor = new (label: string, command: string, args?: string[], env?: Record<string, string | number | null>, version?: string) => McpStdioServerDefinitionLike;
interface McpServerDefinitionProviderLike {
  onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<McpStdioServerDefinitionLike[]>;
  resolveMcpServerDefinition?(server: McpStdioServerDefinitionLike, token: vscode.CancellationToken): vscode.ProviderResult<McpStdioServerDefinitionLike>;
}
interface McpLm {
  registerMcpServerDefinitionProvider(id: string, provider: McpServerDefinitionProviderLike): vscode.Disposable;
}

export function registerMcpProvider(context: vscode.ExtensionContext, host: AgentHost): vscode.Disposable[] {
  const lm = vscode.lm as unknown as Partial<McpLm>;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioServerDefinitionCtor }).McpStdioServerDefinition;
  if (typeof lm.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    host.log.info(`this VS Code (${vscode.version}) has no MCP server definition API (1.101+): configure "canopy mcp" by hand (README)`);
    return [];
  }
  const changed = new vscode.EventEmitter<void>();
  const provider: McpServerDefinitionProviderLike = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions() {
      const folder = host.session.folder;
      if (!folder) return [];
      const trusted = vscode.workspace.isTrusted;
      const settings = host.settings();
      const encoder = userEncoderFolder(settings.encoderModelFolder, trusted).value;
      const exported = exportConfigFromSettings(settings, folder.uri.fsPath, trusted).value;
      const args = mcpServerArgs({
        mcpScript: vscode.Uri.joinPath(context.extensionUri, 'dist', 'mcp.js').fsPath,
        root: folder.uri.fsPath,
        indexDir: host.indexDir,
        topK: settings.topK,
        maxRounds: settings.maxRounds,
        adapter: userAdapterCheckpoint(settings.adapterCheckpoint, trusted).value,
        fusion: settings.retrievalFusion,
        ...(exported?.endpoint ? { otlpEndpoint: exported.endpoint } : {}),
        ...(exported?.file ? { otlpFile: exported.file } : {}),
        ...(exported?.project ? { otlpProject: exported.project } : {}),
      });
      const env: Record<string, string> = { ELECTRON_RUN_AS_NODE: '1', ...(encoder ? { CANOPY_ENCODER_FOLDER: path.resolve(folder.uri.fsPath, encoder) } : {}) };
      const version = (context.extension.packageJSON as { version?: string }).version ?? '0.0.0';
      const definition = new Definition(`Canopy: ${folder.name}`, process.execPath, args, env, version);
      definition.cwd = folder.uri;
      return [definition];
    },
    resolveMcpServerDefinition: (server) => server,
  };
  host.log.info(`MCP server definition provider registered (${mcpProviderId})`);
  return [
    changed,
    lm.registerMcpServerDefinitionProvider(mcpProviderId, provider),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('canopy')) changed.fire();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
  ];
}
