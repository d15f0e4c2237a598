/**
 * Canopy for agents, wired in one call from activate(): the language-model tools, the @canopy
 * chat participant, the MCP server definition for VS Code, the URI handler behind the tools'
 * "open in the Evidence Inspector" links, and the OpenInference trace export of every answer —
 * which follows the answers as events: the Ask command's (Questions, 'answered') and the agents'
 * (AgentOperations, 'answered'), so nothing that answers has to remember to export.
 */
import * as vscode from 'vscode';
import { createAgentHost, type AgentHostDeps } from './agentHost';
import { registerAgentTools } from './agentTools';
import { registerChatParticipant } from './chatParticipant';
import { registerMcpProvider } from './mcpProvider';
import type { Questions } from './questions';
import { ExtensionTraceExport } from './traceExport';

export function registerAgentIntegrations(context: vscode.ExtensionContext, deps: AgentHostDeps & { questions: Questions }): vscode.Disposable[] {
  const { agent, questions, session, settings, log } = deps;
  const version = (context.extension.packageJSON as { version?: string }).version ?? '0.0.0';
  const exporter = new ExtensionTraceExport(log, version, settings, () => session.folder?.uri.fsPath);
  const host = createAgentHost(context, deps);
  const unsubscribes = [
    questions.onEvent((e) => {
      if (e.type === 'answered') exporter.exportTrace(e.trace);
    }),
    // An agent's answer joins the history (the Questions view) without taking over the inspector.
    agent.onEvent((e) => {
      session.historyChanged();
      exporter.exportTrace(e.trace);
    }),
  ];
  return [
    { dispose: () => unsubscribes.forEach((u) => u()) },
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
}
