// How the opened index reads parsed documents: the items of one file that retrieval returns
// together (loaded in parallel) share one read and parse of that file; a failed read is not kept.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import type { GenerationReader } from '../../../src/core/index/indexStore';
import { LocalStore } from '../../../src/core/index/localStore';
import { indexFolder } from '../../helpers/indexFolder';

/** A local store whose readers count (and can fail) document reads. */
function countingStore(dir: string) {
  const store = new LocalStore(dir);
  const counts = { reads: 0, failNext: 0 };
  const open = store.open.bind(store);
  store.open = async (g: number): Promise<GenerationReader> => {
    const reader = await open(g);
    return {
      ...reader,
      document: async (key: string) => {
        counts.reads++;
        if (counts.failNext > 0) {
          counts.failNext--;
          throw new Error('disk hiccup');
        }
        return reader.document(key);
      },
    };
  };
  return { store, counts };
}

describe('CorpusIndex document loads', () => {
  function workspace() {
    const root = mkdtempSync(join(tmpdir(), 'canopy-loads-ws-'));
    const dir = mkdtempSync(join(tmpdir(), 'canopy-loads-idx-'));
    // Long enough sections that the file is cut into several items.
    const section = (n: number) => `## Part ${n}\n\n${Array.from({ length: 120 }, (_, i) => `Sentence ${i} of part ${n} about oaks and ashes.`).join(' ')}\n`;
    writeFileSync(join(root, 'trees.md'), `# Trees\n\n${[1, 2, 3, 4].map(section).join('\n')}`);
    return { root, dir, done: () => [root, dir].forEach((d) => rmSync(d, { recursive: true, force: true })) };
  }

  it('items of one file loaded at once read and parse the file once, and get the same document', async () => {
    const w = workspace();
    try {
      await indexFolder(w.root, w.dir);
      const { store, counts } = countingStore(w.dir);
      const corpus = await CorpusIndex.open(store);
      const ids = corpus.manifest.files['trees.md']!.items;
      assert.ok(ids.length >= 3, `the file is cut into several items (${ids.length})`);
      const items = await Promise.all(ids.map((id) => corpus.item(id)));
      assert.deepEqual(
        items.map((it) => it.id),
        ids,
      );
      assert.equal(counts.reads, 1, 'one read for all the items of the file');
      const [a, b] = await Promise.all([corpus.document('trees.md'), corpus.document('trees.md')]);
      assert.equal(a, b, 'one parsed object');
      assert.equal(counts.reads, 1);
      await corpus.close();
    } finally {
      w.done();
    }
  });

  it('a failed read is reported naming the file and is not kept: the next call reads again', async () => {
    const w = workspace();
    try {
      await indexFolder(w.root, w.dir);
      const { store, counts } = countingStore(w.dir);
      const corpus = await CorpusIndex.open(store);
      counts.failNext = 1;
      await assert.rejects(corpus.document('trees.md'), (err: Error & { code?: string }) => err.code === 'E_INDEX_CORRUPT' && err.message.includes('trees.md'));
      const doc = await corpus.document('trees.md');
      assert.equal(doc.file, 'trees.md');
      assert.equal(counts.reads, 2);
      await corpus.close();
    } finally {
      w.done();
    }
  });
});
