/**
 * Writes a tiny BERT-shaped sentence-embedding model folder for the user-model tests: an ONNX
 * graph with BERT's inputs (input_ids, attention_mask, token_type_ids as int64) and a
 * [batch, tokens, 8] `last_hidden_state`, plus a WordPiece tokenizer.json with [CLS]/[SEP]
 * around each sequence. Weights come from a seeded generator, and `referenceStates` recomputes
 * the graph in plain JS, so the tests can check the encoder's pooling against known numbers.
 *
 * The graph mixes every position with the masked mean of the sequence (a one-step stand-in for
 * attention), so outputs depend on the mask and padded positions hold non-zero values: pooling
 * that ignored the mask would give wrong vectors.
 *   x = word[id] + type[tt] + pos[t];  ctx = sum(mask * x) / max(sum(mask), 1)
 *   last_hidden_state = tanh((x + ctx) W + b)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder } from '../../../../tools/convert-use/onnxGraph';
import { DataType, encodeModel } from '../../../../tools/convert-use/onnxProto';

export const TINY_HIDDEN = 8;
export const TINY_POSITIONS = 16;
export const TINY_VOCAB = [
  '[PAD]', '[UNK]', '[CLS]', '[SEP]', 'the', 'cat', 'sat', 'on', 'mat', 'a', 'kitten', 'is', 'rest', '##ing', 'rug',
  '.', ',', 'dog', '##s', 'run', 'quarterly', 'revenue', 'grew', 'by', 'ten', 'percent', 'and', 'then',
];

export interface TinyWeights {
  word: Float32Array; // [V, H]
  type: Float32Array; // [2, H]
  pos: Float32Array; // [P, H]
  w: Float32Array; // [H, H]
  b: Float32Array; // [H]
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

export function tinyWeights(seed = 7): TinyWeights {
  const r = seeded(seed);
  const make = (n: number): Float32Array => Float32Array.from({ length: n }, () => r());
  const H = TINY_HIDDEN;
  return { word: make(TINY_VOCAB.length * H), type: make(2 * H), pos: make(TINY_POSITIONS * H), w: make(H * H), b: make(H) };
}

export interface TinyBertOptions {
  /** Include the token_type_ids input (BERT does; DistilBERT-style exports do not). Default true. */
  tokenTypes?: boolean;
  /** Include the attention_mask input. Default true (false makes an invalid model for Canopy). */
  attentionMask?: boolean;
  /** model_max_length written to tokenizer_config.json. Default TINY_POSITIONS. */
  maxLength?: number;
}

export function tinyBertModel(weights: TinyWeights, options: TinyBertOptions = {}): Uint8Array {
  const tokenTypes = options.tokenTypes ?? true;
  const withMask = options.attentionMask ?? true;
  const H = TINY_HIDDEN;
  const g = new GraphBuilder();
  const word = g.float('word_embeddings', [TINY_VOCAB.length, H], weights.word);
  const pos = g.float('position_embeddings', [TINY_POSITIONS, H], weights.pos);
  let x = g.op('Gather', [word, 'input_ids'], { axis: 0 });
  if (tokenTypes) x = g.op('Add', [x, g.op('Gather', [g.float('token_type_embeddings', [2, H], weights.type), 'token_type_ids'], { axis: 0 })]);
  const seqLen = g.op('Slice', [g.op('Shape', ['input_ids']), g.int64('one', [1], [1]), g.int64('two', [1], [2])]);
  const zero = g.int64('zero', [1], [0]);
  x = g.op('Add', [x, g.op('Slice', [pos, zero, seqLen, zero])]);
  const axis1 = g.int64('axis1', [1], [1]);
  let mixed = x;
  if (withMask) {
    const m3 = g.op('Unsqueeze', [g.op('Cast', ['attention_mask'], { to: DataType.float }), g.int64('axis2', [1], [2])]);
    const sum = g.op('ReduceSum', [g.op('Mul', [x, m3]), axis1], { keepdims: 1 });
    const count = g.op('Max', [g.op('ReduceSum', [m3, axis1], { keepdims: 1 }), g.float('one_f', [], [1])]);
    mixed = g.op('Add', [x, g.op('Div', [sum, count])]);
  }
  const h = g.op('Tanh', [g.op('Add', [g.op('MatMul', [mixed, g.float('dense.weight', [H, H], weights.w)]), g.float('dense.bias', [H], weights.b)])], {}, 'last_hidden_state');
  const ints = (name: string) => ({ name, elemType: DataType.int64, shape: ['batch', 'sequence'] });
  return encodeModel({
    irVersion: 8,
    opset: 17,
    producerName: 'canopy test tinyBert',
    producerVersion: '1',
    graphName: 'tiny_bert',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [ints('input_ids'), ...(withMask ? [ints('attention_mask')] : []), ...(tokenTypes ? [ints('token_type_ids')] : [])],
    outputs: [{ name: h, elemType: DataType.float, shape: ['batch', 'sequence', H] }],
  });
}

export function tinyTokenizerJson(): object {
  const special = (id: number, content: string) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]')],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(TINY_VOCAB.map((t, i) => [t, i])),
    },
  };
}

/** Write a complete model folder; returns its path. */
export function writeTinyBertFolder(dir: string, weights: TinyWeights, options: TinyBertOptions = {}): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.onnx'), tinyBertModel(weights, options));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ model_max_length: options.maxLength ?? TINY_POSITIONS, do_lower_case: true }));
  return dir;
}

/** The graph's last_hidden_state for one unpadded window of ids, in plain JS. */
export function referenceStates(weights: TinyWeights, ids: readonly number[], tokenTypes = true): Float32Array[] {
  const H = TINY_HIDDEN;
  const xs = ids.map((id, t) => {
    const v = new Float64Array(H);
    for (let k = 0; k < H; k++) {
      v[k] = (weights.word[id * H + k] as number) + (tokenTypes ? (weights.type[k] as number) : 0) + (weights.pos[t * H + k] as number);
    }
    return v;
  });
  const ctx = new Float64Array(H);
  for (const v of xs) for (let k = 0; k < H; k++) ctx[k] = (ctx[k] as number) + (v[k] as number) / Math.max(1, xs.length);
  return xs.map((v) => {
    const out = new Float32Array(H);
    for (let j = 0; j < H; j++) {
      let s = weights.b[j] as number;
      for (let k = 0; k < H; k++) s += ((v[k] as number) + (ctx[k] as number)) * (weights.w[k * H + j] as number);
      out[j] = Math.tanh(s);
    }
    return out;
  });
}

/** Mean of states, L2-normalised: what the encoder should return for one window. */
export function referenceEmbedding(states: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(TINY_HIDDEN);
  for (const s of states) for (let k = 0; k < TINY_HIDDEN; k++) out[k] = (out[k] as number) + (s[k] as number) / states.length;
  let n = 0;
  for (const v of out) n += v * v;
  return out.map((v) => v / Math.sqrt(n));
}
