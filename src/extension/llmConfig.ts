/**
 * Builds the ChatModel the settings ask for, honouring Workspace Trust: in an untrusted
 * workspace no LLM that sends document text away is used. The API key of an OpenAI-compatible
 * endpoint lives in SecretStorage only.
 */
import * as vscode from 'vscode';
import type { CanopySettings } from '../core/config/settings';
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
    if (!vscode.workspace.isTrusted) return { note: 'the workspace is not trusted, so no document text is sent to a language model' };
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
  if (model.remote && !vscode.workspace.isTrusted) {
    return { note: 'the workspace is not trusted, so no document text is sent to a remote LLM' };
  }
  return { model };
}
