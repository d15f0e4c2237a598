/**
 * Builds a Hugging Face `tokenizer.json` for the USE-lite SentencePiece unigram vocabulary
 * (8,000 pieces with log-probability scores): NFKC normaliser, Metaspace pre-tokeniser ('▁'
 * replaces spaces and is prepended), Unigram model with unk id 0. `@huggingface/tokenizers`
 * runs it, and so does Canopy's own Unigram tokenizer (src/core/encode/unigram.ts).
 *
 * Pieces 1..5 (<s>, </s>, extra_token_id_1..3) are control symbols: SentencePiece, and the
 * TF.js tokenizer the model shipped with, never match them in text. A Unigram tokenizer.json
 * has no "never match" flag, so they get a score far below every real piece (and below the unk
 * penalty), which keeps "<s>" in a document from becoming the control symbol. Piece 0 is <unk>.
 *
 * Seven pieces containing ':' (":", "://", "▁:", "▁:)", "▁:(", "):", "▁:-)") have `null` scores
 * in vocab.json. The TF.js tokenizer that defines the reference behaviour adds scores with `+`,
 * where null counts as 0, so tokenizer.json stores 0 for them (JSON readers need a number).
 */

export const RESERVED_PIECES = 6;
/** Score given to control symbols so the Viterbi search never prefers them. */
export const CONTROL_SCORE = -1e4;

export interface UnigramTokenizerJson {
  version: string;
  truncation: null;
  padding: null;
  added_tokens: [];
  normalizer: { type: 'NFKC' };
  pre_tokenizer: { type: 'Metaspace'; replacement: string; prepend_scheme: 'always'; split: boolean };
  post_processor: null;
  decoder: { type: 'Metaspace'; replacement: string; prepend_scheme: 'always'; split: boolean };
  model: { type: 'Unigram'; unk_id: number; vocab: [string, number][]; byte_fallback: boolean };
}

export function buildTokenizerJson(vocab: [string, number | null][]): UnigramTokenizerJson {
  if (vocab.length < RESERVED_PIECES + 1) throw new Error('vocabulary too small');
  if (vocab[0]?.[1] !== 0) throw new Error('vocabulary: piece 0 should be <unk> with score 0');
  const pieces: [string, number][] = vocab.map(([piece, rawScore], i) => {
    const score = rawScore === null ? 0 : rawScore;
    if (typeof piece !== 'string' || typeof score !== 'number' || !Number.isFinite(score)) {
      throw new Error(`vocabulary entry ${i} is not [string, number]`);
    }
    return [piece, i > 0 && i < RESERVED_PIECES ? CONTROL_SCORE : score];
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: { type: 'NFKC' },
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    post_processor: null,
    decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 0, vocab: pieces, byte_fallback: false },
  };
}
