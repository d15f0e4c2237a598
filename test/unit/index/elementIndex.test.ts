// The element BM25 stored beside a parsed PDF (src/core/index/elementIndex.ts): written at index
// time, read back with the document and used by the controller's view instead of tokenising the
// document again; an index without it is read as before; a damaged one is an error naming it.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DocumentView } from '../../../src/core/controller/documentView';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { attachedElementIndex, buildElementIndex } from '../../../src/core/index/elementIndex';
import { runIndexer } from '../../../src/core/index/indexer';
import { paths } from '../../../src/core/index/layout';
import { LocalStore } from '../../../src/core/index/localStore';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { contentTerms } from '../../../src/core/text/terms';
import { hashEmbeddings } from '../../helpers/hashEmbeddings';
import { buildFixtureDoc } from '../controller/fixtureDoc';

const fixture = join(__dirname, '..', '..', 'fixtures', 'ingest', 'report.pdf');
const queries = ['revenue growth by segment', 'cash flow statement', 'total assets and liabilities', 'employees'];

async function index(root: string, dir: string) {
  return runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 5 }), {
    store: new LocalStore(dir),
    // With the document graph, as the extension and the CLI parse.
    parse: (rel, bytes) => parseFile(rel, bytes),
    embeddings: hashEmbeddings(),
    parserVersion: 'test',
    branchingFactor: 2,
  });
}

function workspace() {
  const root = mkdtempSync(join(tmpdir(), 'canopy-elements-ws-'));
  const dir = mkdtempSync(join(tmpdir(), 'canopy-elements-idx-'));
  copyFileSync(fixture, join(root, 'report.pdf'));
  writeFileSync(join(root, 'notes.md'), '# Notes\n\nRevenue grew in the services segment.\n');
  return { root, dir, done: () => [root, dir].forEach((d) => rmSync(d, { recursive: true, force: true })) };
}

const sidecars = (dir: string) => readdirSync(paths(dir).docs).filter((n) => n.endsWith('.elements.bm25'));

describe('stored element index', () => {
  it('round trip: the indexer writes one for the PDF only, the view reads it, and it ranks exactly as one built from the document', async () => {
    const w = workspace();
    try {
      await index(w.root, w.dir);
      const key = (await new LocalStore(w.dir).readManifest((await new LocalStore(w.dir).liveGeneration())!)).files['report.pdf']!.doc;
      assert.deepEqual(sidecars(w.dir), [`${key}.elements.bm25`], 'one element index, for the PDF');
      const corpus = await CorpusIndex.open(new LocalStore(w.dir));
      const doc = await corpus.document('report.pdf');
      const stored = attachedElementIndex(doc);
      assert.ok(stored, 'the element index is read with the document');
      const view = await DocumentView.of(doc);
      assert.equal(view.elementBm25(), stored, 'the view uses the stored index, it does not build one');
      const built = buildElementIndex(doc.graph!);
      assert.ok(stored.size > 5);
      for (const q of queries) assert.deepEqual(stored.query(q, 50), built.query(q, 50), q);
      await corpus.close();
    } finally {
      w.done();
    }
  });

  it('an index written without element indexes answers as before: the view builds the same index', async () => {
    const w = workspace();
    try {
      await index(w.root, w.dir);
      const fresh = await CorpusIndex.open(new LocalStore(w.dir));
      const withIndex = await DocumentView.of(await fresh.document('report.pdf'));
      const expected = queries.map((q) => withIndex.elementBm25().query(q, 50));
      await fresh.close();
      for (const name of sidecars(w.dir)) unlinkSync(join(paths(w.dir).docs, name));
      const old = await CorpusIndex.open(new LocalStore(w.dir));
      const doc = await old.document('report.pdf');
      assert.equal(attachedElementIndex(doc), undefined);
      const view = await DocumentView.of(doc);
      assert.deepEqual(
        queries.map((q) => view.elementBm25().query(q, 50)),
        expected,
      );
      await old.close();
    } finally {
      w.done();
    }
  });

  it('a damaged element index is an index-corrupt error naming its file', async () => {
    const w = workspace();
    try {
      await index(w.root, w.dir);
      const [name] = sidecars(w.dir);
      const file = join(paths(w.dir).docs, name!);
      const bytes = readFileSync(file);
      const at = Math.floor(bytes.length / 2);
      bytes[at] = bytes[at]! ^ 0x5a;
      writeFileSync(file, bytes);
      const corpus = await CorpusIndex.open(new LocalStore(w.dir));
      await assert.rejects(corpus.document('report.pdf'), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'E_INDEX_CORRUPT');
        assert.ok(err.message.includes(name!), err.message);
        assert.match(err.message, /report\.pdf/);
        return true;
      });
      // One that indexes other elements than its document's (a foreign file) is refused the same way.
      writeFileSync(file, buildElementIndex({ file: 'x.pdf', nodes: [{ id: 'x#1', type: 'paragraph', text: 'other words', summary: '', anchor: { file: 'x.pdf' }, page: 0 }], edges: [] }).toBuffer());
      const again = await CorpusIndex.open(new LocalStore(w.dir));
      await assert.rejects(again.document('report.pdf'), (err: Error) => err.message.includes(name!) && /indexes 1 elements/.test(err.message));
      // What the message advises: without the file the document is read as an older index's is.
      unlinkSync(file);
      const repaired = await CorpusIndex.open(new LocalStore(w.dir));
      const view = await DocumentView.of(await repaired.document('report.pdf'));
      assert.ok(view.elementBm25().size > 5);
      await corpus.close();
      await again.close();
      await repaired.close();
    } finally {
      w.done();
    }
  });

  it('garbage collection keeps the element index of a document still indexed and removes that of one gone', async () => {
    const w = workspace();
    try {
      await index(w.root, w.dir);
      const [name] = sidecars(w.dir);
      writeFileSync(join(w.root, 'notes.md'), '# Notes\n\nEdited.\n');
      await index(w.root, w.dir);
      assert.deepEqual(sidecars(w.dir), [name]);
      unlinkSync(join(w.root, 'report.pdf'));
      await index(w.root, w.dir); // the previous generation still names it
      await index(w.root, w.dir);
      assert.equal(existsSync(join(paths(w.dir).docs, name!)), false);
    } finally {
      w.done();
    }
  });
});

describe('the view lexicon read from the element postings', () => {
  it('holds each element\'s distinct content terms and their document frequencies, as tokenising each element gives', async () => {
    const view = await DocumentView.of(await buildFixtureDoc());
    const { termSets, df, idf } = view.lexicon();
    const expectedDf = new Map<string, number>();
    for (const e of view.elements) {
      const set = new Set(contentTerms(e.text));
      assert.deepEqual([...termSets.get(e.id)!].sort(), [...set].sort(), e.id);
      for (const t of set) expectedDf.set(t, (expectedDf.get(t) ?? 0) + 1);
    }
    assert.equal(termSets.size, view.elements.length);
    assert.deepEqual(new Map([...df].sort()), new Map([...expectedDf].sort()));
    const n = view.elements.length;
    for (const [t, d] of expectedDf) assert.equal(idf.get(t), Math.log(1 + n / (1 + d)));
  });
});
