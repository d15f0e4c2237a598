// Shared bits of the LLM tests: a model on the loopback server, a key that must never leak, and a
// check that searches anything for it. Retries are the `openai` package's (its backoff starts at
// about 0.5 s); tests that script failures say how many retries they want.
import { inspect } from 'node:util';
import { OpenAiCompatibleChatModel, type OpenAiCompatibleOptions } from '../../../src/core/llm/openaiProvider';
import type { OpenAiTestServer } from '../../helpers/openaiServer';

/** Looks like a real key; long and unique so a substring search cannot match by accident. */
export const SECRET_KEY = 'sk-test-7Hq2ZpLx9vR4mN8wK3cT6yB1';

export function modelOn(server: OpenAiTestServer, options: Partial<OpenAiCompatibleOptions> = {}): OpenAiCompatibleChatModel {
  return new OpenAiCompatibleChatModel({
    baseUrl: server.baseUrl,
    model: 'test-model',
    apiKey: SECRET_KEY,
    ...options,
  });
}

/** Every way a value might be shown: JSON, util.inspect with hidden fields, message and stack, causes. */
export function everyRendering(value: unknown): string {
  const parts = [inspect(value, { depth: 20, showHidden: true, getters: true })];
  try {
    parts.push(JSON.stringify(value) ?? '');
  } catch {
    // cyclic: inspect covered it
  }
  for (let e: unknown = value, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) parts.push(e.message, e.stack ?? '', String(e));
  return parts.join('\n');
}

/** Settles `p` and returns how it settled, so a test can assert on errors without try/catch noise. */
export async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}
