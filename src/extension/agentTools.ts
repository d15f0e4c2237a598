/**
 * Canopy's language-model tools (`vscode.lm.registerTool`, declared under
 * contributes.languageModelTools): agents in VS Code — Copilot's agent mode, other chat
 * extensions, or any extension through `vscode.lm.invokeTool` — can search the workspace's index
 * for cited evidence (`canopy_searchEvidence`) or ask for a cited answer (`canopy_ask`). The result
 * is one JSON text part: the core's agent result (src/core/agent) plus `inspectorLink`, a URI that
 * opens the saved trace in the Evidence Inspector. Workspace Trust applies as for the Ask command:
 * in an untrusted workspace `canopy_ask` uses no LLM that sends documents away and no user model.
 */
import * as vscode from 'vscode';
import { AskToolInput, checkToolInput, SearchEvidenceToolInput } from '../contracts/agent';
import type { Checked } from '../contracts/validation';
import { CanopyError, describeError, ErrorCodes } from '../core/errors';
import { signalOf, type AgentHost } from './agentHost';

export const searchEvidenceTool = 'canopy_searchEvidence';
export const askTool = 'canopy_ask';

/** The tool's input as its contract reads it (src/contracts/agent.ts; package.json declares the same schema). */
function input<T>(checked: Checked<T>): T {
  if (!checked.ok) throw new CanopyError(ErrorCodes.badInput, checked.problem);
  return checked.value;
}

function result(value: unknown): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(value))]);
}

/** Errors go back to the calling model as a thrown Error whose message it can act on. */
function toolFailure(what: string, err: unknown): Error {
  const { code, message } = describeError(err);
  return new Error(`Canopy ${what} failed (${code}): ${message}`);
}

function preview(question: unknown): string {
  const q = typeof question === 'string' ? question.trim() : '';
  return q.length > 80 ? `${q.slice(0, 79)}…` : q;
}

export function registerAgentTools(host: AgentHost): vscode.Disposable[] {
  const search: vscode.LanguageModelTool<SearchEvidenceToolInput> = {
    prepareInvocation: (options) => ({ invocationMessage: `Searching the Canopy index for “${preview(options.input?.question)}”` }),
    async invoke(options, token) {
      const { signal, dispose } = signalOf(token);
      try {
        const { question, maxRegions } = input(checkToolInput(SearchEvidenceToolInput, options.input));
        const found = await host.agent.searchEvidence(question, { signal, ...(maxRegions !== undefined ? { maxRegions } : {}) });
        host.log.info(`tool ${searchEvidenceTool}: ${found.regions.length} of ${found.keptRegions} region(s) for "${found.question}" (trace ${found.traceId})`);
        return result({ ...found, inspectorLink: host.traceLink(found.traceName).toString(true) });
      } catch (err) {
        throw toolFailure('evidence search', err);
      } finally {
        dispose();
      }
    },
  };
  const ask: vscode.LanguageModelTool<AskToolInput> = {
    prepareInvocation: (options) => ({ invocationMessage: `Asking Canopy “${preview(options.input?.question)}”` }),
    async invoke(options, token) {
      const { signal, dispose } = signalOf(token);
      try {
        const { question } = input(checkToolInput(AskToolInput, options.input));
        const llm = await host.configuredLlm();
        if (llm.note) host.log.info(`tool ${askTool}: no LLM: ${llm.note}`);
        const answer = await host.agent.ask(question, { signal, ...(llm.model ? { llm: llm.model } : {}) });
        host.log.info(`tool ${askTool}: ${answer.mode} answer with ${answer.citations.length} citation(s) (trace ${answer.traceId})`);
        return result({ ...answer, inspectorLink: host.traceLink(answer.traceName).toString(true) });
      } catch (err) {
        throw toolFailure('answer', err);
      } finally {
        dispose();
      }
    },
  };
  return [vscode.lm.registerTool(searchEvidenceTool, search), vscode.lm.registerTool(askTool, ask)];
}
