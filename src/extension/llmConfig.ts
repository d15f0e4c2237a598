/**
 * Builds the ChatModel the settings ask for, honouring Workspace Trust: in an untrusted
 * workspace no LLM that sends document text away is used. The API key of an OpenAI-compatible
 * endpoint lives in SecretStorage only.
 */
import * as vscode from 'vscode';
import type { CanopySettings } from '../core/config/settings';
import { llmMayReceiveDocuments } from '../core/config/trust';
import type { ChatModel } from '../core/llm/llm';
import { OpenAiCompatibleChatModel } from '../core/llm/openaiProvider';
import { selectLmChatModel } from './lmChatModel';

export const apiKeySecret = 'canopy.llm.apiKey';

export interface LlmChoice {
  model?: ChatModel;
  /** Why no model is used, when one was configured. */
  note?: string;
}

export async function chooseLlm(settings: CanopySettings, secrets: vscode.SecretStorage, log: vscode.LogOutputChannel): Promise<LlmChoice> {
  if (settings.llmProvider === 'none') return {};
  if (settings.llmProvider === 'vscode-lm') {
    const gate = llmMayReceiveDocuments('vscode-lm', true, vscode.workspace.isTrusted);
    if (!gate.value) return { ...(gate.note ? { note: gate.note } : {}) };
    const model = await selectLmChatModel(settings.llmModel ? { family: settings.llmModel } : {});
    return model ? { model } : { note: 'no VS Code language model is available' };
  }
  if (!settings.llmModel) return { note: 'canopy.llm.model is empty' };
  const apiKey = await secrets.get(apiKeySecret);
  const model = new OpenAiCompatibleChatModel({
    baseUrl: settings.llmBaseUrl,
    model: settings.llmModel,
    ...(apiKey ? { apiKey } : {}),
    requestTimeoutMs: settings.llmRequestTimeoutSeconds * 1000,
    maxRetries: settings.llmMaxRetries,
    logger: { log: (level, message) => log[level === 'trace' || level === 'debug' ? 'debug' : level](message) },
  });
  const gate = llmMayReceiveDocuments('openai-compatible', model.remote, vscode.workspace.isTrusted);
  if (!gate.value) return { ...(gate.note ? { note: gate.note } : {}) };
  return { model };
}
