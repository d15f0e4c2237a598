// The index's content does not depend on how indexing runs: indexing the fixtures (test/helpers/indexDigest.ts)
// gives the regions, graph, BM25 and (within the encoder's batch tolerance) vectors recorded in
// test/fixtures/index-digest/expected.json, which the indexer as it was before issue 34 wrote.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareDigests, fixtureIndexDigest, type IndexDigest } from '../../helpers/indexDigest';

const expected = JSON.parse(readFileSync(fileURLToPath(new URL('../../fixtures/index-digest/expected.json', import.meta.url)), 'utf8')) as IndexDigest;

describe('index content', () => {
  it('indexing the fixtures gives the reference index (regions, graph, BM25 exactly; vectors within tolerance)', async () => {
    const actual = await fixtureIndexDigest();
    assert.deepEqual(compareDigests(expected, actual), []);
  });

  it('the comparison notices a changed region and a moved vector', () => {
    const changed = JSON.parse(JSON.stringify(expected)) as IndexDigest;
    const [rel, file] = Object.entries(changed.files).find(([, f]) => f.doc !== undefined)!;
    file.doc!.structure = '0'.repeat(64);
    const [id] = Object.keys(file.doc!.items);
    file.doc!.items[id!] = file.doc!.items[id!]!.map((x) => x + 0.01);
    const diff = compareDigests(expected, changed);
    assert.ok(diff.some((d) => d.startsWith(`${rel}: document structure differs`)), diff.join('\n'));
    assert.ok(diff.some((d) => d.startsWith(`${rel}: item vector of ${id}`)), diff.join('\n'));
  });
});
