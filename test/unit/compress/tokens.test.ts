// Token counts (cl100k_base through gpt-tokenizer): exact BPE counts, memoised per text, and a
// document that quotes a special-token string is counted as text rather than rejected.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';

describe('bpeTokenCounter', () => {
  const tokens = bpeTokenCounter();

  it('counts cl100k_base tokens', () => {
    assert.equal(tokens.name, 'cl100k_base');
    // Known cl100k_base counts: "hello world" is two tokens, "Hello, world!" four.
    assert.equal(tokens.count('hello world'), 2);
    assert.equal(tokens.count('Hello, world!'), 4);
    assert.equal(tokens.count(''), 0);
  });

  it('counts a special-token string in a document as text, and does not throw', () => {
    const text = 'Models end a sample with <|endoftext|> and chat turns with <|im_end|>.';
    const n = tokens.count(text);
    assert.ok(n > 10, `the markers are counted as several ordinary tokens each (got ${n})`);
    assert.equal(tokens.count(text), n);
  });

  it('gives the same count for a long text as for the sum of its lines plus their breaks, within a token per break', () => {
    const lines = ['The 1973 oil crisis began in October 1973.', 'OAPEC proclaimed an oil embargo.', 'Prices rose nearly 300%.'];
    const whole = tokens.count(lines.join('\n'));
    const parts = lines.reduce((a, l) => a + tokens.count(l), 0) + lines.length - 1;
    assert.ok(Math.abs(whole - parts) <= lines.length - 1, `${whole} vs ${parts}`);
  });

  it('counts texts longer than the memo limit (whole reader inputs) exactly', () => {
    const long = Array.from({ length: 20_000 }, () => 'word').join(' ');
    assert.equal(tokens.count(long), 20_000);
  });
});
