/**
 * The CLI's LLM: an OpenAI-compatible endpoint named by the environment — CANOPY_LLM_BASE_URL,
 * CANOPY_LLM_MODEL, and the key from CANOPY_LLM_API_KEY (else OPENAI_API_KEY). Keys never come
 * from flags, so they stay out of shell history and process listings.
 */
import type { ChatModel } from '../core/llm/llm';
import { UsageError } from './io';

/** The provider and its SDK, required only when a command is asked to use an LLM (a plain `canopy ask` never loads them). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const provider = () => require('../core/llm/openaiProvider') as typeof import('../core/llm/openaiProvider');

export function llmFromEnv(env: Record<string, string | undefined>, asked: string): ChatModel {
  const baseUrl = env.CANOPY_LLM_BASE_URL;
  const model = env.CANOPY_LLM_MODEL;
  if (!baseUrl || !model) throw new UsageError(`${asked} needs CANOPY_LLM_BASE_URL and CANOPY_LLM_MODEL (and CANOPY_LLM_API_KEY when the endpoint needs a key)`);
  const { apiKeyFromEnv, OpenAiCompatibleChatModel } = provider();
  const apiKey = apiKeyFromEnv(env);
  return new OpenAiCompatibleChatModel({ baseUrl, model, ...(apiKey ? { apiKey } : {}) });
}
