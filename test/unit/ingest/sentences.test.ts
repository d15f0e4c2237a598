import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sentenceSpans, wordCount } from '../../../src/core/ingest/sentences';

const split = (t: string): string[] => sentenceSpans(t).map(([s, e]) => t.slice(s, e));

test('sentences: abbreviations, initials and hard wraps do not end sentences; real ends do', () => {
  assert.deepEqual(split('Dr. Smith met Mr. Jones at 3 p.m. on Friday. They talked.'), ['Dr. Smith met Mr. Jones at 3 p.m. on Friday.', 'They talked.']);
  assert.deepEqual(split('See Fig. 3 and e.g. the appendix. Then stop.'), ['See Fig. 3 and e.g. the appendix.', 'Then stop.']);
  assert.deepEqual(split('John F. Kennedy spoke. Apple Inc. grew.'), ['John F. Kennedy spoke.', 'Apple Inc. grew.']);
  assert.deepEqual(split('A line that wraps\nin the middle. Next one!\nAnd a question?'), ['A line that wraps\nin the middle.', 'Next one!', 'And a question?']);
  assert.deepEqual(split('Prices rose 3.5% in the U.S. last year.'), ['Prices rose 3.5% in the U.S. last year.']);
  assert.deepEqual(split('The biologist E. O. Wilson wrote it. Then more.'), ['The biologist E. O. Wilson wrote it.', 'Then more.']);
  assert.deepEqual(split('A calculator A. A. Michelson built. Next one.'), ['A calculator A. A. Michelson built.', 'Next one.']);
  assert.deepEqual(split('It is rich in vitamin A. The next sentence.'), ['It is rich in vitamin A.', 'The next sentence.']);
  assert.deepEqual(split('Markdown ![alt](x.png) inline. End.'), ['Markdown ![alt](x.png) inline.', 'End.']);
  // A sentence may open with a name in code (ICU breaks only before a capital, quote or bracket).
  assert.deepEqual(split('It needs no adapter. `createApp` is `new Hono()` with parsing. `x` ends.'), ['It needs no adapter.', '`createApp` is `new Hono()` with parsing.', '`x` ends.']);
  assert.deepEqual(split('Use `a`. `b` is next. See e.g. `c` here.'), ['Use `a`.', '`b` is next.', 'See e.g. `c` here.']);
  assert.deepEqual(split('Call `fs.readFile` on it. Done.'), ['Call `fs.readFile` on it.', 'Done.']);
  // No sentence ends inside brackets, whatever the abbreviation before the break.
  assert.deepEqual(split('Ye Hai Mohabbatein (lit. This is love) is a soap opera. It aired in 2013.'), ['Ye Hai Mohabbatein (lit. This is love) is a soap opera.', 'It aired in 2013.']);
  assert.deepEqual(split('John Hancock (January 23, 1737 [O.S. January 12, 1736] – 1793) was a merchant. He signed.'), ['John Hancock (January 23, 1737 [O.S. January 12, 1736] – 1793) was a merchant.', 'He signed.']);
  assert.deepEqual(split('The Union (Russian: Soyuz, tr. Soyuz, IPA: [x] ( listen)), also the USSR (Russian: SSSR, tr. SSSR), was a state. Next.'), ['The Union (Russian: Soyuz, tr. Soyuz, IPA: [x] ( listen)), also the USSR (Russian: SSSR, tr. SSSR), was a state.', 'Next.']);
  // A bracket that opens and is never closed does not swallow the sentences after it, nor does a stray closing one.
  assert.deepEqual(split('See (the notes. They follow. Done.'), ['See (the notes.', 'They follow.', 'Done.']);
  assert.deepEqual(split('Steps: A) first one. B) second one.'), ['Steps: A) first one.', 'B) second one.']);
  assert.deepEqual(split('  \n  '), []);
  assert.deepEqual(split('今日は晴れです。明日は雨です。'), ['今日は晴れです。', '明日は雨です。']);
});

test('sentence spans are trimmed and index the original text', () => {
  const t = '  First one.   Second one.  ';
  assert.deepEqual(sentenceSpans(t), [
    [2, 12],
    [15, 26],
  ]);
  assert.equal(wordCount(' a  b\tc\nd '), 4);
});

test('sentences: long texts are segmented in windows without inventing or losing breaks', () => {
  const sentences = Array.from({ length: 400 }, (_, i) => `Sentence number ${i} mentions Dr. Hale and e.g. the gauge${i % 7 === 0 ? ' (see Fig. 2)' : ''}.`);
  const text = sentences.join(' ');
  assert.ok(text.length > 20000);
  assert.deepEqual(split(text), sentences);
  // A "sentence" longer than a window is cut at spaces, and nothing is lost.
  const run = Array.from({ length: 1200 }, (_, i) => `word${i}`).join(' ');
  const parts = split(run);
  assert.ok(parts.length >= 2);
  assert.equal(parts.join(' '), run);
});
