// Canopy's fast Unigram tokeniser must give exactly the ids @huggingface/tokenizers gives for
// the built-in tokenizer.json (which is the contract the conversion promises).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Tokenizer } from '@huggingface/tokenizers';
import { normalizeText } from '../../../src/core/encode/encoder';
import { UnigramTokenizer } from '../../../src/core/encode/unigram';
import { builtinModelDir, loadReference } from './support/builtinModel';

const TRICKY = [
  '<s> hi </s> extra_token_id_1',
  'naïve café ﬁne ① ½ Ⅻ',
  '日本語のテキスト and 中文',
  'emoji 😀😀 ok 👍🏽',
  'x\u0000y\u200bz',
  '\ufffd alone \ufffd\ufffd',
  'Ünïcödé ÅNGSTRÖM',
  'a:b://c :) :-) :( ):',
  '””5 ”5 ”',
  '▁already▁marked ▁ ▁▁',
  'ＦＵＬＬ　ＷＩＤＴＨ ｶﾀｶﾅ',
  'e-mail: someone@example.com, https://example.com/a?b=c#d',
  'C++ && x->y || z::w; // comment',
  '1,234.56 vs 1.234,56 (≈ 10%)',
  "Don't won't isn't it's",
];

describe('fast Unigram tokeniser', () => {
  let hf: Tokenizer;
  let fast: UnigramTokenizer;
  const hfIds = (t: string): number[] => hf.encode(t, { add_special_tokens: false }).ids;

  before(() => {
    const json = JSON.parse(readFileSync(join(builtinModelDir(), 'tokenizer.json'), 'utf8')) as object;
    hf = new Tokenizer(json, {});
    const f = UnigramTokenizer.fromTokenizerJson(json);
    assert.ok(f, 'the built-in tokenizer.json has the supported shape');
    fast = f;
  });

  it('gives the oracle piece ids', () => {
    const ref = loadReference();
    ref.sentences.forEach((s, i) => assert.deepEqual(fast.encode(s), ref.tokens[i]));
  });

  it('agrees with tokenizers.js on tricky text', () => {
    for (const t of TRICKY) assert.deepEqual(fast.encode(normalizeText(t)), hfIds(normalizeText(t)), t);
  });

  it('does not match control symbols in text, and maps unknown characters to <unk> (fused)', () => {
    const ids = fast.encode('<s> x');
    assert.ok(!ids.includes(1), `ids ${ids}`);
    assert.deepEqual(fast.encode('日本語'), [30, 0]);
  });

  it('agrees with tokenizers.js on random strings', () => {
    const unit = fc.oneof(
      fc.constantFrom(' ', ' ', 'e', 't', 'a', 'o', 'n', 'T', 's', '.', ',', ':', ')', '-', '▁', '5', '”', 'é', 'ß', 'ﬁ', '😀', '中', '\ufffd', 'İ', 'Å'),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 60 }), (s) => {
        const t = normalizeText(s);
        if (t === '') return;
        assert.deepEqual(fast.encode(t), hfIds(t));
      }),
      { numRuns: 600, seed: 42 },
    );
  });

  it('only accepts the tokenizer.json shape it reproduces', () => {
    const json = JSON.parse(readFileSync(join(builtinModelDir(), 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(UnigramTokenizer.fromTokenizerJson({ ...json, normalizer: { type: 'NFC' } }), undefined);
    assert.equal(UnigramTokenizer.fromTokenizerJson({ ...json, post_processor: { type: 'TemplateProcessing' } }), undefined);
    assert.equal(UnigramTokenizer.fromTokenizerJson({ ...json, model: { type: 'WordPiece', vocab: {} } }), undefined);
    assert.equal(UnigramTokenizer.fromTokenizerJson({ ...json, pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first' } }), undefined);
  });
});
