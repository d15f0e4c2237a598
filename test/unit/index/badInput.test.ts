// A workspace full of hostile or broken files: every bad file gets a clear per-file error (file +
// reason) in the summary, the good files are indexed, and nothing already indexed is lost.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { runIndexer } from '../../../src/core/index/indexer';
import { LocalStore } from '../../../src/core/index/localStore';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { hashEmbeddings } from '../../helpers/hashEmbeddings';

const fixtures = fileURLToPath(new URL('../../fixtures/ingest/', import.meta.url));
let root: string;
let dir: string;

const index = async () =>
  runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 0.5 }), {
    store: new LocalStore(dir),
    parse: (rel, bytes) => parseFile(rel, bytes, { graph: false, maxBytes: 0.5 * 1024 * 1024 }),
    embeddings: hashEmbeddings(),
    parserVersion: 'test',
    branchingFactor: 2,
  });

before(() => {
  root = mkdtempSync(join(tmpdir(), 'canopy-bad-'));
  dir = mkdtempSync(join(tmpdir(), 'canopy-bad-idx-'));
  writeFileSync(join(root, 'good.md'), '# Good\n\nThis file is fine and must be indexed.\n');
  copyFileSync(join(fixtures, 'report.pdf'), join(root, 'report.pdf'));
});

after(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('bad input corpus', () => {
  it('indexes the good files and names every bad file with its reason', async () => {
    const first = await index();
    assert.equal(first.errors.length, 0);

    copyFileSync(join(fixtures, 'encrypted.pdf'), join(root, 'encrypted.pdf'));
    const pdf = readFileSync(join(fixtures, 'report.pdf'));
    writeFileSync(join(root, 'truncated.pdf'), pdf.subarray(0, 400));
    writeFileSync(join(root, 'garbage.pdf'), Buffer.from('this is not a pdf at all'));
    writeFileSync(join(root, 'binary.txt'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 9, 0]));
    writeFileSync(join(root, 'latin.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe, 0x20, 0x6f, 0x6b, 0x2e]));
    writeFileSync(join(root, 'empty.md'), '');
    writeFileSync(join(root, 'ragged.csv'), 'a,b,c\n1,2\n3,4,5,6\n');
    writeFileSync(join(root, 'broken.ipynb'), '{"cells": [ {"cell_type": "markdown", "source": ["# hi"');
    writeFileSync(join(root, 'enormous.txt'), 'x'.repeat(700 * 1024));
    mkdirSync(join(root, 'loop'));
    symlinkSync(root, join(root, 'loop', 'back'));
    // A good file edited into a broken one keeps its last good version.
    writeFileSync(join(root, 'good.md'), Buffer.from([0, 1, 2, 3, 0, 0, 0, 0, 0xff, 0xfe, 0, 0]));

    const s = await index();
    const errors = Object.fromEntries(s.errors.map((e) => [e.file, e.reason]));
    const skipped = Object.fromEntries(s.skipped.map((k) => [k.file, k.reason]));
    for (const f of ['encrypted.pdf', 'truncated.pdf', 'garbage.pdf', 'binary.txt', 'broken.ipynb', 'good.md']) {
      assert.ok(errors[f], `${f} should be reported: ${JSON.stringify(errors)}`);
      assert.ok(errors[f]!.includes(f), `the reason names the file: ${errors[f]}`);
    }
    assert.match(errors['encrypted.pdf']!, /encrypt|password/i);
    assert.match(skipped['enormous.txt'] ?? '', /larger than canopy.maxFileSizeMB/);
    assert.match(skipped['loop/back'] ?? '', /symlink loop/);
    // Files that are odd but readable are indexed with warnings, not errors.
    assert.equal(errors['latin.txt'], undefined);
    assert.equal(errors['ragged.csv'], undefined);
    assert.equal(errors['empty.md'], undefined);

    const corpus = await CorpusIndex.open(new LocalStore(dir));
    assert.ok(corpus.hasFile('report.pdf'));
    assert.ok(corpus.hasFile('ragged.csv'));
    assert.match(corpus.manifest.files['ragged.csv']!.warnings.join(' '), /ragged|column|field/i);
    assert.ok(corpus.manifest.files['good.md']!.staleError, 'good.md keeps its last good version');
    const doc = await corpus.document('good.md');
    assert.match(doc.items[0]!.root.text, /must be indexed/);
  });
});
