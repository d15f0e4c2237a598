/**
 * What the agent integrations (language-model tools, the @canopy chat participant, the MCP server
 * definition) need from the extension, in one place: the agent operations over the window's core
 * services (activate() builds them), the settings of now, the LLM after Workspace Trust, a link
 * that opens a trace in the Evidence Inspector and a location for a citation.
 */
import * as vscode from 'vscode';
import type { AgentCitation } from '../core/agent/citations';
import type { AgentOperations } from '../core/agent/operations';
import type { CanopySettings } from '../core/config/settings';
import type { ChatModel } from '../core/llm/llm';
import { chooseLlm } from './llmConfig';
import type { CanopySession } from './session';

export interface AgentHost {
  readonly agent: AgentOperations;
  readonly session: CanopySession;
  readonly log: vscode.LogOutputChannel;
  /** The settings as they are now. */
  settings(): CanopySettings;
  /** Where the extension keeps the folder's index (workspace storage). */
  readonly indexDir: string;
  /** The configured LLM (canopy.llm.*) after Workspace Trust, or a note why there is none. */
  configuredLlm(): Promise<{ model?: ChatModel; note?: string }>;
  /** A URI that opens the trace in the Evidence Inspector (through the extension's URI handler); give it out with toString(true), the name needs no escaping. */
  traceLink(traceName: string): vscode.Uri;
  /** A location for a citation in the workspace folder. */
  location(citation: AgentCitation): vscode.Location | undefined;
}

export interface AgentHostDeps {
  agent: AgentOperations;
  session: CanopySession;
  settings(): CanopySettings;
  indexDir: string;
  log: vscode.LogOutputChannel;
}

export function createAgentHost(context: vscode.ExtensionContext, deps: AgentHostDeps): AgentHost {
  const { agent, session, settings, indexDir, log } = deps;
  return {
    agent,
    session,
    log,
    settings,
    indexDir,
    async configuredLlm() {
      if (!session.folder) return {};
      return chooseLlm(settings(), context.secrets, log);
    },
    traceLink: (traceName) => vscode.Uri.from({ scheme: vscode.env.uriScheme, authority: context.extension.id, path: '/openTrace', query: `name=${encodeURIComponent(traceName)}` }),
    location(citation) {
      const folder = session.folder;
      if (!folder) return undefined;
      const uri = vscode.Uri.joinPath(folder.uri, citation.file);
      const r = citation.range;
      const range = r ? new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character) : new vscode.Range(0, 0, 0, 0);
      return new vscode.Location(uri, range);
    },
  };
}

/** A CancellationToken as an AbortSignal, and the subscription to dispose. */
export function signalOf(token: vscode.CancellationToken | undefined): { signal: AbortSignal; dispose(): void } {
  const abort = new AbortController();
  if (token?.isCancellationRequested) abort.abort();
  const sub = token?.onCancellationRequested(() => abort.abort());
  return { signal: abort.signal, dispose: () => sub?.dispose() };
}
