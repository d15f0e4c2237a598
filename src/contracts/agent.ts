/**
 * What agents send Canopy: the inputs of the VS Code language-model tools (package.json's
 * `contributes.languageModelTools[].inputSchema` says the same; test/unit/extension/agentManifest
 * compares them) and the building blocks of the MCP server's tool inputs (src/cli/mcp/server.ts),
 * with the per-question ranges every other layer uses (askSettings.ts). One schema per input, so a
 * bad argument gets the same words from the tools, the chat participant and the MCP server.
 */
import * as z from 'zod/mini';
import { MAX_ROUNDS, TOP_K } from './askSettings';
import { check, intIn, type Checked, type Range } from './validation';

/** Longest question an agent may ask (characters). */
export const QUESTION_MAX = 4000;
/** How many evidence regions a search lists (the trace keeps all). */
export const REGION_LIMIT: Range = Object.freeze({ min: 1, max: 100 });
/** How many saved questions a list returns. */
export const LIST_LIMIT: Range = Object.freeze({ min: 1, max: 500 });

/**
 * A question: trimmed, not empty, at most QUESTION_MAX characters. Its problems are whole
 * sentences, since every host words the path differently (the MCP SDK appends "at question").
 */
export const AgentQuestion = z
  .string({ error: 'the question must be a string' })
  .check(z.trim(), z.minLength(1, 'the question is empty'), z.maxLength(QUESTION_MAX, `the question is longer than ${QUESTION_MAX} characters`));

/** The question as AgentQuestion reads it, or its problem. */
export function checkQuestion(value: unknown): Checked<string> {
  const result = z.safeParse(AgentQuestion, value);
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: result.error.issues[0]?.message ?? 'the question is not valid' };
}

export const describedQuestion = AgentQuestion.check(z.describe('The question, in natural language, about the indexed documents.'));
export const regionLimit = z.optional(intIn(REGION_LIMIT)).check(z.describe('List at most this many regions (default 20).'));
export const topK = z.optional(intIn(TOP_K)).check(z.describe('Items retrieved per round (default: the canopy.topK setting).'));
export const maxRounds = z.optional(intIn(MAX_ROUNDS)).check(z.describe('Most retrieval rounds; the critic may stop earlier (default: the canopy.maxRounds setting).'));
export const traceRef = z.string().check(z.trim(), z.minLength(1, 'is empty: a trace id or file name is needed'), z.maxLength(1000), z.describe('A trace id or a trace file name (from a search, an answer or the list of questions).'));
export const listLimit = z.optional(intIn(LIST_LIMIT)).check(z.describe('At most this many (default 50).'));

/** canopy_searchEvidence (VS Code language-model tool). Unknown keys are ignored: models add some. */
export const SearchEvidenceToolInput = z.object({ question: describedQuestion, maxRegions: regionLimit });
export type SearchEvidenceToolInput = z.output<typeof SearchEvidenceToolInput>;

/** canopy_ask (VS Code language-model tool). */
export const AskToolInput = z.object({ question: describedQuestion });
export type AskToolInput = z.output<typeof AskToolInput>;

/** A language-model tool's input as its schema reads it: the question's problem in its own words, any other named by its field. */
export function checkToolInput<T extends { question: string }>(schema: z.core.$ZodType<T>, value: unknown): Checked<T> {
  const question = checkQuestion(typeof value === 'object' && value !== null ? (value as { question?: unknown }).question : undefined);
  if (!question.ok) return question;
  return check(schema, value, 'input');
}
