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
/** Region texts up to this length are memoised (a sentence, a row, a paragraph, a small group). */
const MEMO_MAX_TEXT = 4_096;
/** The memo is dropped when its keys would pass this many characters (~16 MB of strings). */
const MEMO_MAX_CHARS = 8_000_000;

export function bpeTokenCounter(): TokenCounter {
  shared ??= new Tiktoken(cl100k);
  const encoder = shared;
  const memo = new Map<string, number>();
  let memoChars = 0;
  return {
    name: 'cl100k_base',
    count(text: string): number {
      // Whole reader inputs (tens of KB, new for every question) are counted, never memoised:
      // keeping them grew the heap by ~0.2 MB per question on a large index.
      if (text.length > MEMO_MAX_TEXT) return encoder.encode(text).length;
      const hit = memo.get(text);
      if (hit !== undefined) return hit;
      const n = encoder.encode(text).length;
      if (memoChars + text.length > MEMO_MAX_CHARS) {
        memo.clear();
        memoChars = 0;
      }
      memo.set(text, n);
      memoChars += text.length;
      return n;
    },
  };
}
