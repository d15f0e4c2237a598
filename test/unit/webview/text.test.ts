/**
 * webview/text.ts: Markdown and inline HTML as the plain text the inspector shows (answers, item
 * titles, region labels), parsed with mdast-util-from-markdown.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { plainLabel, plainText } from '../../../webview/text';

describe('plain text from Markdown and HTML', () => {
  test('emphasis, links, images, code and raw HTML keep only their words', () => {
    assert.equal(plainLabel('**T**abular results'), 'Tabular results');
    assert.equal(plainLabel('[Anserini](http://anserini.io) and [BM25][ref]'), 'Anserini and [BM25][ref]');
    assert.equal(plainLabel('<img src=x onerror=alert(1)> Figure 3 ![a chart](c.png)'), 'Figure 3 a chart');
    assert.equal(plainLabel('the `score` of <b>a</b> &amp; b'), 'the score of a & b');
    assert.equal(plainLabel('## Findings\nThe *gap* is 140 m²'), 'Findings The gap is 140 m²');
  });

  test('plain text stays as it is, and numbers that look like list markers keep their numbers', () => {
    const plain = 'Plot P5 lost three mature ash trees (about 140 m2) between the visits.';
    assert.equal(plainText(plain), plain);
    assert.equal(plainText('2017. Revenue grew 12%.'), '2017. Revenue grew 12%.');
    assert.equal(plainText('1. first\n2. second\n\n- one\n- two'), '1. first\n2. second\n\n• one\n• two');
    assert.equal(plainLabel('3 * 4 * 5 = 60'), '3 * 4 * 5 = 60');
    assert.equal(plainLabel('snake_case_name and a_b'), 'snake_case_name and a_b');
  });

  test('an answer keeps its paragraphs and line breaks; markers like [1] stay', () => {
    assert.equal(plainText('First **point**. [1]\n\nSecond point.<br>Next line. [2]'), 'First point. [1]\n\nSecond point.\nNext line. [2]');
    assert.equal(plainText('Escaped \\*stars\\* stay'), 'Escaped *stars* stay');
  });

  test('a label is one line and only its start is read', () => {
    const long = `**Start** ${'word '.repeat(400)}`;
    const out = plainLabel(long);
    assert.ok(out.startsWith('Start word word'));
    assert.ok(!out.includes('\n') && out.length <= 600);
  });
});
