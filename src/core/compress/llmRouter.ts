/**
 * Query routing as an LLM prompt (design §5): is the question an aggregate over a table (keep
 * tables whole) or a lookup (prune rows), and which modalities may answer it? Returns the same
 * TraceRouting as the rule (`routeQuestion`), with `source: 'llm'`. Any failure — a failed or
 * slow call, no JSON, an unusable answer — falls back to the rule, and the reason says so. As
 * with the rule, text is never routed away: prose often carries the answer too.
 */
import { routeQuestion } from './router';
import type { Modality } from '../../contracts/region';
import type { TraceRouting } from '../../contracts/trace';
import { extractJsonObject, looseBoolean } from '../llm/jsonReply';
import { chatWithin, type ChatMessage, type ChatModel } from '../llm/llm';

export interface LlmRouterOptions {
  /** Routing may take this long; then the rule answers (default 20 s). */
  timeoutMs?: number;
  maxTokens?: number;
}

const modalities: readonly Modality[] = ['text', 'table', 'image', 'transcript', 'code'];

export const ROUTER_SYSTEM_PROMPT = [
  'You route questions for a document retrieval system.',
  'Decide two things:',
  '1. aggregate: true when answering needs a computation or a collection over many table rows or records (a sum, total, count, average, maximum or minimum, ranking, a list of all matching rows, a comparison across rows); false when it looks up one fact. When in doubt, answer true.',
  '2. modalities: which kinds of content may hold the answer, from "text", "table", "image", "transcript", "code". List every kind that may help.',
  'Reply with one JSON object and nothing else:',
  '{"aggregate": true or false, "modalities": ["text", ...], "reason": "one short sentence"}',
].join('\n');

export function buildRouterMessages(question: string): ChatMessage[] {
  return [
    { role: 'system', content: ROUTER_SYSTEM_PROMPT },
    { role: 'user', content: `Question: ${question}` },
  ];
}

export async function routeQuestionWithLlm(
  question: string,
  model: ChatModel,
  options: LlmRouterOptions = {},
  signal?: AbortSignal,
): Promise<TraceRouting> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const call = await chatWithin(model, buildRouterMessages(question), { maxTokens: options.maxTokens ?? 200, temperature: 0, json: true }, timeoutMs, signal);
  if (!call.ok) return fallBack(question, call.timedOut ? `no answer within ${timeoutMs} ms` : call.error);
  const reply = call.result.text;
  const found = extractJsonObject(reply, (v) => 'aggregate' in v);
  if (!found.ok) return fallBack(question, found.reason);
  const aggregate = looseBoolean(found.value.aggregate);
  if (aggregate === undefined) return fallBack(question, '"aggregate" is not a boolean');
  const named = Array.isArray(found.value.modalities)
    ? found.value.modalities.filter((m): m is Modality => typeof m === 'string' && (modalities as readonly string[]).includes(m))
    : [];
  const chosen: Modality[] = named.length > 0 ? [...new Set<Modality>(['text', ...named])] : [...modalities];
  const reason = typeof found.value.reason === 'string' ? found.value.reason.replace(/\s+/g, ' ').trim().slice(0, 300) : '';
  return {
    modalities: chosen,
    aggregate,
    source: 'llm',
    reason: `${aggregate ? 'aggregate' : 'lookup'} (${model.id})${reason ? `: ${reason}` : ''}${named.length === 0 ? '; no modality named: all modalities' : ''}`,
  };
}

function fallBack(question: string, why: string): TraceRouting {
  const rule = routeQuestion(question);
  return { ...rule, reason: `LLM routing failed (${why}), so the rule routed: ${rule.reason}` };
}
