// Canopy's binary BM25 index: the same scores as MiniSearch (the library it replaces) on real
// text, incremental updates equal to a fresh build, a binary round trip, damaged files refused.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import MiniSearch from 'minisearch';
import { Bm25Index, type LexicalDoc } from '../../../src/core/index/bm25';
import { indexTerm, words } from '../../../src/core/text/terms';

// Paragraphs of this project's own documentation: real English with headings as titles.
const docs: LexicalDoc[] = [];
for (const name of readdirSync('docs').filter((n) => n.endsWith('.md'))) {
  let title = name;
  for (const block of readFileSync(join('docs', name), 'utf8').split(/\n\s*\n/)) {
    if (block.startsWith('#')) title = block.replace(/^#+\s*/, '').split('\n')[0]!;
    else if (block.trim().length > 40) docs.push({ id: `${name}#${docs.length}`, title, text: block, modality: docs.length % 4 === 0 ? 'table' : 'text' });
  }
}
const queries = ['how is the index written crash safe', 'which reader answers without an LLM', 'topic compass metadata bank selection', 'PDF page images crops', 'gold spans annotations training adapter', 'the the the of', 'embedding cache segments compaction compaction'];

function miniSearch(list: LexicalDoc[]): MiniSearch<LexicalDoc> {
  const ms = new MiniSearch<LexicalDoc>({
    fields: ['title', 'text'],
    storeFields: ['modality'],
    tokenize: (text: string) => words(text),
    processTerm: (term: string) => indexTerm(term) ?? null,
    searchOptions: { boost: { title: 1 }, bm25: { k: 1.2, b: 0.75, d: 0 } },
  });
  ms.addAll(list);
  return ms;
}

describe('Bm25Index', () => {
  it('ranks and scores exactly as MiniSearch with the same options (OR, classic BM25, titles like text)', () => {
    assert.ok(docs.length > 200, `${docs.length} paragraphs`);
    const ms = miniSearch(docs);
    const ix = Bm25Index.build(docs);
    for (const q of queries) {
      const want = ms.search(q, { combineWith: 'OR' }).slice(0, 20);
      const got = ix.query(q, 20);
      assert.equal(got.length, want.length, q);
      got.forEach((h, i) => {
        assert.ok(Math.abs(h.score - want[i]!.score) <= 1e-9 * want[i]!.score, `${q} #${i}: ${h.score} vs ${want[i]!.score}`);
        // Items with equal scores may be listed in another order: the item is one of those MiniSearch scored the same.
        const tied = want.filter((w) => Math.abs(w.score - h.score) <= 1e-9 * w.score).map((w) => w.id);
        assert.ok(tied.includes(h.id), `${q} #${i}: ${h.id}`);
      });
      const tables = ix.query(q, 5, ['table']);
      const wantTables = ms.search(q, { combineWith: 'OR', filter: (r) => r.modality === 'table' }).slice(0, 5);
      assert.deepEqual(
        tables.map((h) => h.score.toFixed(9)),
        wantTables.map((w) => w.score.toFixed(9)),
      );
    }
  });

  it('flat scoring: one field of both fields\' terms, lengths summed, classic BM25 without the coordination factor', () => {
    const ix = Bm25Index.build(docs);
    const n = docs.length;
    const fieldTf = (text: string) => {
      const tf = new Map<string, number>();
      for (const w of words(text)) {
        const t = indexTerm(w);
        if (t) tf.set(t, (tf.get(t) ?? 0) + 1);
      }
      return tf;
    };
    const rows = docs.map((d) => {
      const tf = fieldTf(d.title);
      for (const [t, c] of fieldTf(d.text)) tf.set(t, (tf.get(t) ?? 0) + c);
      return { d, tf, len: new Set(words(d.title)).size + new Set(words(d.text)).size };
    });
    const avg = rows.reduce((a, r) => a + r.len, 0) / n;
    for (const q of queries) {
      const qt = words(q).map((w) => indexTerm(w)).filter((t): t is string => t !== undefined);
      const want = rows
        .map((r) => {
          let s = 0;
          for (const t of qt) {
            const df = rows.filter((x) => x.tf.has(t)).length;
            const tf = r.tf.get(t) ?? 0;
            if (tf > 0) s += Math.log(1 + (n - df + 0.5) / (df + 0.5)) * ((tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * r.len) / avg)));
          }
          return { id: r.d.id, s };
        })
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s);
      const got = ix.query(q, 15, undefined, 'flat');
      assert.equal(got.length, Math.min(15, want.length), q);
      got.forEach((h, i) => assert.ok(Math.abs(h.score - want[i]!.s) <= 1e-9 * want[i]!.s, `${q} #${i}: ${h.score} vs ${want[i]!.s}`));
      const tables = ix.query(q, 5, ['table'], 'flat');
      const wantTables = want.filter((w) => docs.find((d) => d.id === w.id)!.modality === 'table').slice(0, 5);
      assert.deepEqual(tables.map((h) => h.score.toFixed(9)), wantTables.map((w) => w.s.toFixed(9)));
    }
    // It is another ranking than the per-field one, and the per-field one is unchanged after it.
    const q = queries[0]!;
    assert.notDeepEqual(ix.query(q, 10, undefined, 'flat').map((h) => h.id), ix.query(q, 10).map((h) => h.id));
    assert.deepEqual(ix.query(q, 10), Bm25Index.build(docs).query(q, 10));
  });

  it('an update (remove, replace, add) equals a fresh build of the result', () => {
    const first = Bm25Index.build(docs.slice(0, 200));
    const removed = new Set(docs.slice(0, 200).filter((_, i) => i % 7 === 0).map((d) => d.id));
    const replaced = docs.slice(3, 6).map((d) => ({ ...d, text: `${d.text} replanted hornbeam` }));
    const added = docs.slice(200, 260);
    const updated = first.update(removed, [...replaced, ...added]);
    const replacedIds = new Set(replaced.map((d) => d.id));
    const expected = [...docs.slice(0, 200).filter((d) => !removed.has(d.id) && !replacedIds.has(d.id)), ...replaced.filter((d) => !removed.has(d.id)), ...added];
    const fresh = Bm25Index.build([...docs.slice(0, 200).filter((d) => !removed.has(d.id) && !replacedIds.has(d.id)), ...replaced, ...added]);
    assert.equal(updated.size, fresh.size);
    assert.ok(expected.length <= updated.size);
    for (const q of [...queries, 'replanted hornbeam']) {
      const a = updated.query(q, 15);
      const b = fresh.query(q, 15);
      assert.deepEqual(
        a.map((h) => [h.id, h.score.toFixed(9)]),
        b.map((h) => [h.id, h.score.toFixed(9)]),
        q,
      );
    }
    assert.ok(!updated.has([...removed][0]!));
    assert.ok(updated.has(added[0]!.id));
  });

  it('round-trips through its binary form and refuses a damaged or foreign buffer', () => {
    const ix = Bm25Index.build(docs.slice(0, 120));
    const buf = ix.toBuffer();
    const back = Bm25Index.fromBuffer(buf);
    assert.equal(back.size, 120);
    assert.deepEqual(back.query(queries[0]!, 10), ix.query(queries[0]!, 10));
    const bad = Buffer.from(buf);
    bad[200] = bad[200]! ^ 1;
    assert.throws(() => Bm25Index.fromBuffer(bad), /checksum mismatch/);
    assert.throws(() => Bm25Index.fromBuffer(Buffer.from('not an index at all, not at all, not at all, not at all, no')), /not a Canopy BM25 index/);
    assert.deepEqual(Bm25Index.fromBuffer(Bm25Index.empty().toBuffer()).query('anything', 5), []);
  });

  it('keeps each item\'s title key through updates and its binary form; a format-1 index has none', () => {
    const titled: LexicalDoc[] = [
      { id: 'a', title: 'Thomas More', text: 'Lord Chancellor', modality: 'text' },
      { id: 'b', title: 'Newark, New Jersey', text: 'a city', modality: 'text' },
      { id: 'c', title: 'Newark (table)', text: 'population', modality: 'table' },
      { id: 'd', title: 'The Venture Bros.', text: 'an animated series', modality: 'text' },
    ];
    const ix = Bm25Index.build(titled);
    assert.deepEqual([0, 1, 2, 3].map((d) => ix.titleKey(d)), ['thomas more', 'newark', 'newark', 'venture bros']);
    assert.deepEqual([...ix.titled(['newark', 'venture bros', 'thomas', 'no such title'])], [
      ['newark', ['b', 'c']],
      ['venture bros', ['d']],
    ]);
    assert.deepEqual(ix.titled(['newark'], ['table']).get('newark'), ['c']);
    // Kept items keep their keys through an update; a replaced item gets its new title's.
    const updated = ix.update(['a'], [{ id: 'b', title: 'Newark, Delaware', text: 'a city', modality: 'text' }, { id: 'e', title: 'Sir Thomas More', text: 'saint', modality: 'text' }]);
    assert.deepEqual([...updated.titled(['thomas more', 'newark'])], [
      ['thomas more', ['e']],
      ['newark', ['c', 'b']],
    ]);
    const back = Bm25Index.fromBuffer(updated.toBuffer());
    assert.deepEqual([...back.titled(['thomas more', 'newark'])], [...updated.titled(['thomas more', 'newark'])]);
    // The same index as format 1 wrote it (no key section): read, searched, found by no title.
    const body = ix.toBuffer().subarray(0, -32);
    const pad = (n: number) => n + ((8 - (n % 8)) % 8);
    const keyBytes = Buffer.byteLength(['thomas more', 'newark', 'newark', 'venture bros'].join(''));
    const v1 = Buffer.from(body.subarray(0, body.length - pad(5 * 4) - pad(keyBytes)));
    v1.writeUInt32LE(1, 8);
    const old = Bm25Index.fromBuffer(Buffer.concat([v1, createHash('sha256').update(v1).digest()]));
    assert.deepEqual(old.query('animated series', 2), ix.query('animated series', 2));
    assert.equal(old.titled(['newark']).size, 0);
    assert.equal(old.titleKey(0), '');
  });
});
