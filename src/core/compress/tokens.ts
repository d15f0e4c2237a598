/**
 * Evidence tokens are counted with a real BPE tokenizer (design §5): OpenAI's cl100k_base via
 * js-tiktoken, the standard choice when the reader's own tokenizer is unknown. Counting is on
 * the hot path of every compressor, so the encoder is built once and counts are memoised per
 * region text.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

export interface TokenCounter {
  readonly name: string;
  count(text: string): number;
}

let shared: Tiktoken | undefined;

export function bpeTokenCounter(): TokenCounter {
  shared ??= new Tiktoken(cl100k);
  const encoder = shared;
  const memo = new Map<string, number>();
  return {
    name: 'cl100k_base',
    count(text: string): number {
      const hit = memo.get(text);
      if (hit !== undefined) return hit;
      const n = encoder.encode(text).length;
      if (memo.size > 200_000) memo.clear();
      memo.set(text, n);
      return n;
    },
  };
}
