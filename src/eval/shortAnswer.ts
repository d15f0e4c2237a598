/**
 * The reader EM/F1 is measured with when an LLM is configured: the kept evidence and the question
 * in one prompt that asks for the shortest answer span only (EM/F1 compare short strings; the
 * product's LLM reader writes cited prose, which EM would always score 0).
 */
import type { ChatModel } from '../core/llm/llm';
import { regionText } from './outcome';
import type { Answer, Reader, ReaderInput } from '../core/read/reader';

export const SHORT_ANSWER_PROMPT =
  'Answer the question from the evidence only. Reply with the shortest answer: a name, number, date, short phrase, or yes/no. No explanation, no full sentence, no citation.';

export function shortAnswerReader(model: ChatModel): Reader {
  return {
    mode: 'llm',
    async answer(question: string, input: ReaderInput, signal?: AbortSignal): Promise<Answer> {
      // The reader input's own text when it was built (a long PDF's subgraph XML); else numbered titles and texts.
      const evidence = input.text || input.regions.map((r, i) => `[${i + 1}] ${r.itemTitle}\n${regionText(r.node)}`).join('\n\n');
      const result = await model.chat(
        [
          { role: 'system', content: SHORT_ANSWER_PROMPT },
          { role: 'user', content: `Evidence:\n${evidence}\n\nQuestion: ${question}\nShort answer:` },
        ],
        { maxTokens: 64, temperature: 0, ...(signal ? { signal } : {}) },
      );
      return { mode: 'llm', text: result.text.trim().split('\n')[0] ?? '', citations: [], model: result.model };
    },
  };
}
