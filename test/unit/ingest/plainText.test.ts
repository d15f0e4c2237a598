import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, assertInnerTexts, assertTreeShape, fixture, fixtureText, ofKind } from './helpers';

test('plain text: blank-line paragraphs of sentences with exact anchors', async () => {
  const doc = await parseFile('notes/notes.txt', fixture('notes.txt'));
  const source = fixtureText('notes.txt');
  assert.equal(doc.format, 'text');
  assert.equal(assertExactLeaves(doc.items, source, ['sentence']), 6);
  assertTreeShape(doc.items, 2);
  assertInnerTexts(doc.items);
  assert.deepEqual(
    ofKind(doc.items, 'paragraph').map((p) => p.children.length > 0),
    [true, true, true],
  );
  assert.deepEqual(
    ofKind(doc.items, 'sentence').map((s) => s.text),
    [
      'Field notes for the spring visit.',
      'The crew arrived at 9 a.m. and left at noon.',
      'Mr. Ortiz checked\nthe rain gauge, which was clogged with leaves.',
      'Second paragraph.',
      'It has two sentences!',
      'Third paragraph after a blank line with spaces.',
    ],
  );
  const third = ofKind(doc.items, 'sentence')[2]!;
  assert.deepEqual([third.anchor.startLine, third.anchor.startColumn, third.anchor.endLine], [2, 45, 3]);
});

test('plain text: a UTF-16 LE file with a BOM decodes', async () => {
  const text = 'Hello there. Second sentence.\n\nNew paragraph.';
  const bytes = new Uint8Array([0xff, 0xfe, ...Buffer.from(text, 'utf16le')]);
  const doc = await parseFile('u16.txt', bytes);
  assert.equal(assertExactLeaves(doc.items, text, ['sentence']), 3);
});
