import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CanopyError, ErrorCodes } from '../../../src/core/errors';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, assertTreeShape, fixture, fixtureText, ofKind } from './helpers';

/** A JSON string's source slice decodes to the leaf text. */
const jsonDecode = (slice: string): string => JSON.parse(`"${slice}"`) as string;

test('json: long string fields become text; records per array object; anchors into the file', async () => {
  const doc = await parseFile('station.json', fixture('station.json'));
  const source = fixtureText('station.json');
  assert.equal(assertExactLeaves(doc.items, source, ['sentence'], jsonDecode), 4);
  assertTreeShape(doc.items, 2);
  const sentences = ofKind(doc.items, 'sentence').map((s) => s.text);
  assert.ok(sentences.includes('Shielded from the sun — cleaned twice a year.'), 'escaped \\u2014 decoded');
  assert.ok(!sentences.some((s) => s === 'Ridge' || s.includes('Wind vane')), 'short strings are not text nodes');
  const records = ofKind(doc.items, 'record');
  assert.deepEqual(
    records.map((r) => r.context),
    ['$.sensors[0] — id: rg; label: Rain gauge', '$.sensors[1] — id: th; label: Thermometer'],
  );
  // The escape sequence in the source is covered by the leaf's range.
  const th = ofKind(doc.items, 'sentence').find((s) => s.text.startsWith('Shielded'))!;
  assert.ok(source.slice(th.anchor.charStart, th.anchor.charEnd).includes('\\u2014'));
});

test('jsonl: one record per line with line anchors; bad lines reported; short-only lines are row leaves', async () => {
  const doc = await parseFile('records.jsonl', fixture('records.jsonl'));
  const source = fixtureText('records.jsonl');
  assert.equal(assertExactLeaves(doc.items, source, ['sentence', 'row'], (s, n) => (n.kind === 'row' ? s : jsonDecode(s))), 6);
  const records = ofKind(doc.items, 'record');
  assert.deepEqual(
    records.map((r) => [r.anchor.startLine, r.anchor.endLine, r.context]),
    [
      [1, 1, 'line 1 — id: 1; title: Rain'],
      [2, 2, 'line 2 — id: 2; title: Wind'],
      [6, 6, 'line 6 — id: 4'],
    ],
  );
  const row = ofKind(doc.items, 'row')[0]!;
  assert.equal(row.text, '{"id": 3, "value": 42}');
  assert.equal(row.anchor.startLine, 4);
  assert.deepEqual(
    doc.warnings.map((w) => w.code),
    ['jsonlBadLine'],
  );
  assert.match(doc.warnings[0]!.message, /records\.jsonl: 1 line\(s\) are not valid JSON .*line 3/);
  const gust = ofKind(doc.items, 'sentence').find((s) => s.text.startsWith('Gusts'))!;
  assert.equal(gust.text, 'Gusts reached "forty" knots once.');
});

test('json: invalid JSON is a CanopyError naming the file, line and column', async () => {
  await assert.rejects(parseFile('bad.json', Buffer.from('{\n  "a": "b",\n  oops\n}')), (err: unknown) => {
    assert.ok(err instanceof CanopyError);
    assert.equal(err.code, ErrorCodes.parseFailed);
    assert.match(err.message, /^bad\.json: invalid JSON .* line 3, column 3/);
    return true;
  });
});
