import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, assertTreeShape, fixture, fixtureText, ofKind } from './helpers';

test('csv: rows are exact source lines; quoted fields, doubled quotes and multi-line cells decode into cells', async () => {
  const doc = await parseFile('data/readings.csv', fixture('readings.csv'));
  const source = fixtureText('readings.csv');
  assert.equal(doc.format, 'csv');
  assert.equal(assertExactLeaves(doc.items, source, ['row']), 4);
  assertTreeShape(doc.items, 2);
  const rows = ofKind(doc.items, 'row');
  assert.deepEqual(rows[1]!.cells, ['north', '2024-02-01', '9', 'quoted "gauge" note']);
  assert.deepEqual(rows[2]!.cells, ['south', '2024-01-01', '30', 'multi\nline note']);
  assert.equal(rows[2]!.text, 'south,2024-01-01,30,"multi\nline note"');
  assert.ok(rows.every((r) => r.header === 'station | date | rainfall_mm | note'));
  assert.deepEqual(
    rows.map((r) => r.anchor.row),
    [0, 1, 2, 3],
  );
  assert.equal(doc.items[0]!.modality, 'table');
  assert.deepEqual(doc.warnings, []);
});

test('csv: ragged rows are kept and reported in one warning naming the file', async () => {
  const doc = await parseFile('ragged.csv', fixture('ragged.csv'));
  const rows = ofKind(doc.items, 'row');
  assert.equal(rows.length, 3);
  assert.deepEqual(rows[1]!.cells, ['4', '5']);
  assert.equal(rows[0]!.header, 'a | b | c | column 4');
  assert.equal(doc.warnings.length, 1);
  assert.equal(doc.warnings[0]!.code, 'raggedRows');
  assert.match(doc.warnings[0]!.message, /ragged\.csv: 2 row\(s\) do not have 3 cells \(line 3, 4\)/);
});

test('tsv and CRLF: exact rows; a numeric first row is data, not a header', async () => {
  const tsv = await parseFile('values.tsv', fixture('values.tsv'));
  assert.equal(assertExactLeaves(tsv.items, fixtureText('values.tsv'), ['row']), 2);
  assert.deepEqual(ofKind(tsv.items, 'row')[0]!.cells, ['alpha', '1.5', 'mm']);

  const crlf = '1,2,3\r\n4,5,6\r\n7,8,9\r\n';
  const doc = await parseFile('n.csv', Buffer.from(crlf));
  assert.equal(assertExactLeaves(doc.items, crlf, ['row']), 3);
  assert.equal(ofKind(doc.items, 'row')[0]!.header, 'column 1 | column 2 | column 3');
  assert.equal(doc.warnings[0]?.code, 'noHeader');
});
