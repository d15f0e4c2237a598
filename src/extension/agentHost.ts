/**
 * What the agent integrations (language-model tools, the @canopy chat participant, the MCP server
 * definition) need from the extension, in one place: the indexed workspace, the LLM and adapter
 * after Workspace Trust, a hook for every saved trace (export, the Questions view) and a link
 * that opens a trace in the Evidence Inspector.
 */
import * as vscode from 'vscode';
import type { AgentCitation } from '../core/agent/citations';
import type { AgentWorkspace } from '../core/agent/operations';
import { userAdapterCheckpoint } from '../core/config/trust';
import type { ChatModel } from '../core/llm/llm';
import type { AskTrace } from '../contracts/trace';
import { readSettings } from './config';
import { chooseLlm } from './llmConfig';
import type { CanopySession } from './session';

export interface AgentHost {
  readonly session: CanopySession;
  readonly log: vscode.LogOutputChannel;
  workspace(): Promise<AgentWorkspace>;
  /** The adapter checkpoint questions use ('' for none), after Workspace Trust. */
  adapter(): string;
  /** The configured LLM (canopy.llm.*) after Workspace Trust, or a note why there is none. */
  configuredLlm(): Promise<{ model?: ChatModel; note?: string }>;
  onTrace(trace: AskTrace, file: string): void;
  /** A URI that opens the trace in the Evidence Inspector (through the extension's URI handler); give it out with toString(true), the name needs no escaping. */
  traceLink(traceName: string): vscode.Uri;
  /** A location for a citation in the workspace folder. */
  location(citation: AgentCitation): vscode.Location | undefined;
}

export function createAgentHost(context: vscode.ExtensionContext, session: CanopySession, log: vscode.LogOutputChannel, exportTrace: (trace: AskTrace) => void): AgentHost {
  return {
    session,
    log,
    workspace: () => session.workspaceForAgents(),
    adapter() {
      const folder = session.folder;
      if (!folder) return '';
      const gate = userAdapterCheckpoint(readSettings(folder.uri).adapterCheckpoint, vscode.workspace.isTrusted);
      if (gate.note) log.warn(gate.note);
      return gate.value;
    },
    async configuredLlm() {
      const folder = session.folder;
      if (!folder) return {};
      return chooseLlm(readSettings(folder.uri), context.secrets, log);
    },
    onTrace(trace) {
      session.agentAnswered();
      exportTrace(trace);
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
