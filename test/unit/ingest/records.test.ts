// Records as records (issue 33, finding 2): JSON arrays, JSONL, CSV and TSV of many records are
// cut into items of runs of records within the item budget, each record with its exact anchor, and
// no item — kept whole or not — is larger than the reader's cap.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { buildReaderInput } from '../../../src/core/read/reader';
import type { RegionNode } from '../../../src/contracts/region';
import { allNodes, ofKind } from './helpers';
import { inventoryLines } from '../../helpers/records';

const enc = (s: string) => new TextEncoder().encode(s);
const tokens = bpeTokenCounter();
const READER_CAP = 16_000;

function assertExactRows(source: string, rows: RegionNode[]): void {
  for (const r of rows) assert.equal(source.slice(r.anchor.charStart, r.anchor.charEnd), r.text, r.id);
}

describe('records as records', () => {
  it('JSONL: many records without spaces are cut into items within the budget; every line keeps its exact anchor; no item passes the reader cap', async () => {
    const lines = inventoryLines();
    const text = `${lines.join('\n')}\n`;
    assert.ok(tokens.count(text) > READER_CAP, `the file alone is ${tokens.count(text)} tokens`);
    const doc = await parseFile('inventory.jsonl', enc(text), { graph: false });
    assert.ok(doc.items.length >= 5, `${doc.items.length} items`);
    for (const item of doc.items) assert.ok(tokens.count(item.root.text) <= READER_CAP, `${item.id}: ${tokens.count(item.root.text)} tokens`);
    const rows = ofKind(doc.items, 'row');
    assert.equal(rows.length, 361);
    assertExactRows(text, rows);
    assert.deepEqual(
      rows.map((r) => r.anchor.row),
      lines.map((_, i) => i),
    );
    assert.match(doc.items[0]!.title, /rows 1–\d+/);
  });

  it('a JSON array of records without long text: one row per record, exact source, cut into items', async () => {
    const text = `[\n  ${inventoryLines(200).join(',\n  ')}\n]\n`;
    const doc = await parseFile('inventory.json', enc(text), { graph: false });
    const rows = ofKind(doc.items, 'row');
    assert.equal(rows.length, 200);
    assertExactRows(text, rows);
    assert.ok(doc.items.length >= 3, `${doc.items.length} items`);
    for (const item of doc.items) assert.ok(tokens.count(item.root.text) <= READER_CAP);
  });

  it('CSV and TSV of many spaceless rows: runs of rows, the header on each', async () => {
    for (const [file, sep] of [['stock.csv', ','], ['stock.tsv', '\t']] as const) {
      const header = ['sku', 'warehouse', 'bin', 'qty', 'unit_cost', 'supplier'].join(sep);
      const body = Array.from({ length: 2000 }, (_, i) => [`FX-${i}`, `north-${i % 7}`, `R${i % 13}-S${i % 5}`, (i * 37) % 500, ((i * 13) % 900) / 10, `acme-rotor-works-${i % 11}`].join(sep));
      const text = `${header}\n${body.join('\n')}\n`;
      const doc = await parseFile(file, enc(text), { graph: false });
      assert.ok(doc.items.length > 5, `${file}: ${doc.items.length} items`);
      for (const item of doc.items) assert.ok(tokens.count(item.root.text) <= READER_CAP, `${file}: ${tokens.count(item.root.text)} tokens`);
      const rows = ofKind(doc.items, 'row');
      assert.equal(rows.length, 2000);
      assert.ok(rows.every((r) => r.header === header.split(sep).join(' | ')));
      assertExactRows(text, rows);
    }
  });

  it('one record larger than an item is cut into its fields, each with its exact anchor', async () => {
    const fields = Array.from({ length: 3000 }, (_, i) => `"reading_${i}":{"at":"2024-01-01T00:${String(i % 60).padStart(2, '0')}","v":${i % 97}}`);
    const text = `{"station":"ridge",${fields.join(',')}}\n`;
    const doc = await parseFile('huge.jsonl', enc(text), { graph: false });
    const record = ofKind(doc.items, 'record')[0]!;
    assert.ok(record, 'the line became a record of its fields');
    const leaves = allNodes(doc.items).filter((n) => n.children.length === 0);
    assert.ok(leaves.length >= 3001);
    assertExactRows(text, leaves);
    assert.equal(leaves[0]!.text, '"station":"ridge"');
    for (const item of doc.items) assert.ok(tokens.count(item.root.text) <= READER_CAP);
  });

  it('the reader never gets nothing while a region is kept: a first region over the whole cap is cut to its leading regions', async () => {
    const text = `${inventoryLines().join('\n')}\n`;
    const doc = await parseFile('inventory.jsonl', enc(text), { graph: false, itemMaxWords: 1_000_000 });
    assert.equal(doc.items.length, 1, 'one blob, as an index built before records were cut holds');
    const root = doc.items[0]!.root;
    const input = buildReaderInput([{ itemId: doc.items[0]!.id, itemTitle: 'inventory', file: 'inventory.jsonl', node: root, score: 0.5 }], tokens, READER_CAP);
    assert.ok(input.tokens > READER_CAP / 2 && input.tokens <= READER_CAP, `${input.tokens} tokens`);
    assert.equal(input.truncated, true);
    assert.ok(input.regions.length >= 1);
    assert.ok(input.regions.every((r) => r.node.id.startsWith(root.id)), 'the parts are regions of the kept one');
    // A single leaf larger than the cap is cut at the characters that fit.
    const leaf: RegionNode = { id: 'x#0/0', kind: 'row', modality: 'text', text, anchor: { file: 'x.jsonl' }, children: [] };
    const cut = buildReaderInput([{ itemId: 'x#0', itemTitle: 'x', file: 'x.jsonl', node: leaf, score: 0 }], tokens, 500);
    assert.ok(cut.tokens > 400 && cut.tokens <= 500, `${cut.tokens}`);
    assert.match(cut.regions[0]!.node.text, /…$/);
  });
});
