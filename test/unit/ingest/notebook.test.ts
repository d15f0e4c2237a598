import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CanopyError } from '../../../src/core/errors';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, assertTreeShape, fixture, fixtureText, leaves, ofKind } from './helpers';

/**
 * A leaf's range covers the JSON-escaped characters of its text inside the cell's source strings;
 * when it crosses source lines it also spans the `",\n "` between them. Undo both.
 */
const notebookDecode = (slice: string): string => JSON.parse(`"${slice.replace(/"\s*,\s*"/g, '')}"`) as string;

test('notebook: markdown cells parse as Markdown, code cells as code, anchors into the .ipynb text', async () => {
  const doc = await parseFile('nb/analysis.ipynb', fixture('analysis.ipynb'));
  const source = fixtureText('analysis.ipynb');
  assert.equal(doc.format, 'notebook');
  assert.equal(doc.title, 'Rainfall analysis');
  assert.ok(assertExactLeaves(doc.items, source, ['sentence', 'heading', 'code'], notebookDecode) >= 9);
  assertTreeShape(doc.items, 2);
  assert.deepEqual(
    ofKind(doc.items, 'heading').map((h) => [h.level, h.text]),
    [
      [1, 'Rainfall analysis'],
      [2, 'Results'],
    ],
  );
  const code = ofKind(doc.items, 'code').filter((c) => c.children.length === 0).map((c) => c.text);
  assert.deepEqual(code, ['import pandas as pd\ndf = pd.read_csv("readings.csv")', 'print(f"loaded {len(df)} rows")']);
  const texts = leaves(doc.items).map((l) => l.text);
  assert.ok(texts.includes('This notebook loads the "ridge" readings.'));
  assert.ok(texts.includes('Tabs and é accents survive.'));
  assert.ok(texts.includes('Raw cell text is kept as a paragraph.'));
  assert.ok(!texts.some((t) => t.includes('loaded 3 rows')), 'outputs are not indexed');
  // A leaf inside one source line slices back to its escaped JSON exactly.
  const s = ofKind(doc.items, 'sentence').find((x) => x.text.startsWith('This notebook'))!;
  assert.equal(source.slice(s.anchor.charStart, s.anchor.charEnd), 'This notebook loads the \\"ridge\\" readings.');
});

test('notebook: a JSON file without cells is refused with the file named', async () => {
  await assert.rejects(parseFile('x.ipynb', Buffer.from('{"metadata": {}}')), (e: unknown) => e instanceof CanopyError && /^x\.ipynb: not a Jupyter notebook/.test(e.message));
});
