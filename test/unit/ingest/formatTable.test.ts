// Every extension the parser reads is also found by discovery and indexed. The two used to keep
// their own tables, which drifted: .log, .mdown, .mkd, .xhtml and .bmp parsed but were never
// discovered, so such files were silently left out of the index.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { formatForPath, supportedExtensions } from '../../../src/core/ingest/documentFormat';
import { indexFolder } from '../../helpers/indexFolder';
import { writePdf } from './pdfWriter';

/** A small valid file of each format, about a river gauge. */
const samples: Record<string, string | Uint8Array> = {
  markdown: '# Gauge\n\nThe river gauge peaked at noon.\n',
  text: 'The river gauge peaked at noon.\n',
  pdf: writePdf([[{ x: 72, y: 720, size: 11, text: 'The river gauge peaked at noon.' }]]),
  csv: 'station,level\ngauge,4.2\n',
  tsv: 'station\tlevel\ngauge\t4.2\n',
  html: '<!DOCTYPE html><html><head><title>Gauge</title></head><body><p>The river gauge peaked at noon.</p></body></html>',
  notebook: JSON.stringify({ cells: [{ cell_type: 'markdown', source: ['The river gauge peaked at noon.'] }], metadata: {}, nbformat: 4, nbformat_minor: 5 }),
  json: JSON.stringify({ note: 'The river gauge peaked at noon today.' }),
  jsonl: `${JSON.stringify({ note: 'The river gauge peaked at noon today.' })}\n`,
  subtitles: 'WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nThe river gauge peaked at noon.\n',
  image: 'not really pixels',
};

let root: string;
let indexDir: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'canopy-formats-'));
  indexDir = mkdtempSync(join(tmpdir(), 'canopy-formats-index-'));
  for (const ext of supportedExtensions) {
    const format = formatForPath(`f.${ext}`)!;
    if (format === 'subtitles' && ext === 'srt') writeFileSync(join(root, `sample.${ext}`), '1\n00:00:01,000 --> 00:00:04,000\nThe river gauge peaked at noon.\n');
    else writeFileSync(join(root, `sample.${ext}`), samples[format] ?? '');
  }
});

after(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(indexDir, { recursive: true, force: true });
});

describe('one formats table for discovery and parsing', () => {
  it('discovers a file of every extension the parser reads, as the format the parser uses', async () => {
    const found = await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 1, listImages: true });
    const byName = new Map(found.files.map((f) => [f.relPath, f.format]));
    const missing = supportedExtensions.filter((ext) => byName.get(`sample.${ext}`) !== formatForPath(`sample.${ext}`));
    assert.deepEqual(missing, [], 'parsed but not discovered (or discovered as another format)');
    assert.equal(found.files.length, supportedExtensions.length, 'nothing is discovered that the parser cannot read');
  });

  it('indexes .log, .mdown, .mkd and .xhtml files', async () => {
    const summary = await indexFolder(root, indexDir);
    // Every file but the images (a walk lists stand-alone images only on request).
    const documents = supportedExtensions.filter((ext) => formatForPath(`f.${ext}`) !== 'image');
    assert.deepEqual(summary.errors, []);
    assert.equal(summary.files, documents.length);
    assert.equal(summary.parsed, documents.length);
  });
});
