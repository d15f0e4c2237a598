import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFragment } from 'parse5';
import type { DefaultTreeAdapterTypes } from 'parse5';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, assertInnerTexts, assertTreeShape, fixture, fixtureText, leaves, ofKind } from './helpers';

/** What a browser renders for a source slice: parsed independently, tags dropped, entities decoded. */
function rendered(slice: string): string {
  const out: string[] = [];
  const visit = (n: DefaultTreeAdapterTypes.Node): void => {
    if (n.nodeName === '#text') out.push((n as DefaultTreeAdapterTypes.TextNode).value);
    if ('childNodes' in n) for (const c of n.childNodes) visit(c);
  };
  visit(parseFragment(slice));
  return out.join(' ');
}
/** Whitespace is layout in HTML (collapsed, and cells are joined by a space): compare without it. */
const noSpace = (s: string): string => s.replace(/\s+/g, '');

test('html: leaves render exactly from their source ranges (entities, inline tags)', async () => {
  const doc = await parseFile('site/page.html', fixture('page.html'));
  const source = fixtureText('page.html');
  assert.equal(doc.title, 'Ridge Station & Valley');
  assert.ok(assertExactLeaves(doc.items, source, ['sentence', 'row', 'heading', 'code'], rendered, noSpace) >= 10);
  assertTreeShape(doc.items, 2);
  assertInnerTexts(doc.items);
  assert.deepEqual(doc.warnings, []);
  const sentences = ofKind(doc.items, 'sentence').map((s) => s.text);
  assert.ok(sentences.includes('The station\u00a0records rain, wind and temperature.'));
  assert.ok(sentences.includes('It sits at 1\u2009200\u00a0m — above the valley floor.'));
  assert.ok(sentences.includes('Readings are "raw" until checked.'));
  // The sentence spanning <b>…</b> covers the tags in the source.
  const valley = ofKind(doc.items, 'sentence').find((s) => s.text.startsWith('It sits'))!;
  assert.ok(source.slice(valley.anchor.charStart, valley.anchor.charEnd).includes('<b>valley</b>'));
});

test('html: scripts and styles are ignored; headings, list, table, figure, pre', async () => {
  const doc = await parseFile('page.html', fixture('page.html'));
  const all = leaves(doc.items).map((l) => l.text).join(' ');
  assert.ok(!all.includes('do not index'));
  assert.ok(!all.includes('color: red'));
  assert.ok(!all.includes('Enable scripts'));
  assert.deepEqual(
    ofKind(doc.items, 'heading').map((h) => [h.level, h.text]),
    [
      [1, 'Ridge Station & Valley'],
      [2, 'Sensors'],
      [2, 'Code'],
    ],
  );
  assert.deepEqual(
    ofKind(doc.items, 'listItem').map((l) => l.text),
    ['Rain gauge <tipping bucket>.', 'Thermometer, shielded.'],
  );
  const rows = ofKind(doc.items, 'row');
  assert.deepEqual(
    rows.map((r) => r.cells),
    [
      ['Rain gauge', '10 min'],
      ['Wind & vane', '1 min'],
    ],
  );
  assert.ok(rows.every((r) => r.header === 'Sensor | Interval'));
  const images = ofKind(doc.items, 'image');
  assert.deepEqual(
    images.map((i) => [i.text, i.ref]),
    [['The ridge at dawn.', 'img/ridge.png']],
    'figure caption names the image; the inline icon inside prose is not a node',
  );
  assert.equal(ofKind(doc.items, 'code')[0]!.text, 'def f(x):\n    return x < 3');
});

test('html: CRLF sources keep exact ranges', async () => {
  const src = '<p>First line\r\nsecond &amp; last.</p>\r\n<p>Next &lt;p&gt;.</p>';
  const doc = await parseFile('c.html', Buffer.from(src));
  assert.equal(assertExactLeaves(doc.items, src, ['sentence'], rendered, noSpace), 2);
  assert.deepEqual(
    ofKind(doc.items, 'sentence').map((s) => s.text),
    ['First line second & last.', 'Next <p>.'],
  );
});
