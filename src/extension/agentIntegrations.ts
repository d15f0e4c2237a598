/**
 * Canopy for agents, wired in one call from activate(): the language-model tools, the @canopy
 * chat participant, the MCP server definition for VS Code, the URI handler behind the tools'
 * "open in the Evidence Inspector" links, and the OpenInference trace export of every answer.
 */
import * as vscode from 'vscode';
import type { AskTrace } from '../contracts/trace';
import { createAgentHost } from './agentHost';
import { registerAgentTools } from './agentTools';
import { registerChatParticipant } from './chatParticipant';
import { registerMcpProvider } from './mcpProvider';
import type { CanopySession } from './session';
import { ExtensionTraceExport } from './traceExport';

export interface AgentIntegrations {
  /** Export an answer the extension itself produced (the Ask command). */
  exportTrace(trace: AskTrace): void;
  disposables: vscode.Disposable[];
}

export function registerAgentIntegrations(context: vscode.ExtensionContext, session: CanopySession, log: vscode.LogOutputChannel): AgentIntegrations {
  const version = (context.extension.packageJSON as { version?: string }).version ?? '0.0.0';
  const exporter = new ExtensionTraceExport(log, version);
  const host = createAgentHost(context, session, log, exporter.exportTrace);
  const disposables: vscode.Disposable[] = [
    ...registerAgentTools(host),
    registerChatParticipant(context, host),
    ...registerMcpProvider(context, host),
    vscode.window.registerUriHandler({
      handleUri(uri) {
        const name = new URLSearchParams(uri.query).get('name');
        if (uri.path === '/openTrace' && name) {
          log.info(`opening trace ${name} from a link`);
          void vscode.commands.executeCommand('canopy.openTrace', name);
        } else log.warn(`unknown link ${uri.toString()}`);
      },
    }),
  ];
  return { exportTrace: exporter.exportTrace, disposables };
}
