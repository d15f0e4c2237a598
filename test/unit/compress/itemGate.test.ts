// The rank gate (compressor option `items`, with `wholeBelow`): a round's items kept for their
// BM25 rank or because the question or a kept item names them; the rest dropped with a reason
// the trace carries; short kept items kept whole.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Item, RegionNode } from '../../../src/contracts/region';
import { compress } from '../../../src/core/compress/compressor';
import { describeItemOrder, gateItems, glimpseLeaves, itemBm25, itemOrderFeatures, subjectPhrase } from '../../../src/core/compress/itemGate';
import { Bm25Index } from '../../../src/core/index/bm25';

/** An item whose root is a paragraph of the given sentences. */
function item(title: string, sentences: string[]): Item {
  const id = title.replace(/\W+/g, '-');
  const leaf = (text: string, i: number): RegionNode => ({ id: `${id}/${i}`, kind: 'sentence', modality: 'text', text, anchor: { file: `${id}.md` }, children: [] });
  const root: RegionNode = { id, kind: 'paragraph', modality: 'text', text: sentences.join(' '), anchor: { file: `${id}.md` }, children: sentences.map(leaf) };
  return { id, file: `${id}.md`, title, modality: 'text', root };
}

const question = 'The band who released the debut album "Tinted Windows" had their first performance in what city?';
const items = [
  item('Tinted Windows (album)', ['Tinted Windows is the debut album of the band Tinted Windows.', 'The album was released in 2009.']),
  item('Tinted Windows (band)', ['Tinted Windows is an American supergroup.', 'The members met in New York.', 'Their first live show was in Tulsa, Oklahoma.']),
  item('Act of Congress', ['Act of Congress is a group from Birmingham.', 'Their first performance of the debut album sold out.']),
  item('Extended Play', ['Extended Play is an EP by the Pretenders.', 'It was released in 1981.']),
  item('Mellow Yellow', ['Mellow Yellow is a song.', 'It was a hit in 1966.']),
  item('Green Day', ['Green Day is a rock band.', 'The band released Dookie in 1994.']),
];

// A two-hop round: the album's item names the band, whose own item shares none of the question's words.
const hopQuestion = 'Where did the band that recorded the album Dookie play its first show?';
const hopItems = [
  item('Dookie', ['Dookie is the third album the band Mellow Yellow recorded.', 'It sold ten million copies.']),
  item('Mellow Yellow', ['Mellow Yellow formed in Berkeley in 1987.', 'Its members grew up in Oakland.']),
  item('Nimrod', ['Nimrod is an album.', 'It was released in 1997.']),
  item('Insomniac', ['Insomniac is an album.', 'It was released in 1995.']),
  item('Warning', ['Warning is an album.', 'It was released in 2000.']),
];

describe('rank gate', () => {
  it("scores items by the index's BM25, the same with each item's terms kept from an earlier question", () => {
    const plain = (q: string, its: readonly Item[]) => {
      const index = Bm25Index.build(its.map((it) => ({ id: it.id, title: it.title, text: it.root.text, modality: 'text' })));
      const hits = new Map(index.query(q, its.length).map((h) => [h.id, h.score]));
      return its.map((it) => hits.get(it.id) ?? 0);
    };
    const first = itemBm25(question, items);
    assert.ok(first.some((x) => x > 0));
    assert.deepEqual(first, plain(question, items));
    // Again, another question, and a different set of items (other document counts and lengths): the kept terms give the same scores.
    assert.deepEqual(itemBm25(question, items), first);
    const other = 'Which rock band released Dookie in 1994?';
    assert.deepEqual(itemBm25(other, items.slice(2)), plain(other, items.slice(2)));
    assert.ok(itemBm25(other, items.slice(2)).some((x) => x > 0));
  });

  it('reduces a title to the subject a text would name', () => {
    assert.equal(subjectPhrase('Tinted Windows (band)'), 'tinted windows');
    assert.equal(subjectPhrase('Van Buren Township, Brown County, Indiana'), 'van buren township');
    assert.equal(subjectPhrase('Annual report (p. 4)'), 'annual report');
  });

  it('keeps the best-ranked share and the items the question or a kept item names, and says why', () => {
    const gate = gateItems(question, items, 0.3);
    const kept = [...gate].filter(([, g]) => g.kept).map(([id]) => id);
    // ceil(0.3 × 6) = 2 by rank; "Tinted Windows (band)" is named by the question either way.
    assert.ok(kept.includes('Tinted-Windows-album-'), JSON.stringify([...gate]));
    assert.ok(kept.includes('Tinted-Windows-band-'));
    assert.ok(!kept.includes('Mellow-Yellow'));
    assert.ok(!kept.includes('Green-Day'));
    assert.match(gate.get('Mellow-Yellow')!.why, /^rank \d of 6 by BM25 for the question \(the gate keeps 2\), and named by neither/);
    const ranked = [...gate.values()].filter((g) => g.kept && g.why.startsWith('rank '));
    assert.equal(ranked.length, 2);
  });

  it('follows a name from a kept item to its own item (the second hop)', () => {
    const gate = gateItems(hopQuestion, hopItems.slice(0, 4), 0.25);
    assert.equal(gate.get('Dookie')!.kept, true);
    assert.deepEqual(gate.get('Mellow-Yellow'), { kept: true, why: 'named by “Dookie”' });
    assert.equal(gate.get('Nimrod')!.kept, false);
  });

  it('keeps every item when the round has no more than the gate keeps', () => {
    const gate = gateItems(question, items.slice(0, 2), 0.5);
    assert.deepEqual([...gate.values()].map((g) => g.kept), [true, true]);
  });

  it('in the compressor: dropped items keep nothing, short kept items are kept whole, long ones are refined', () => {
    const scores = new Map<string, number>();
    for (const it of items) {
      scores.set(it.root.id, 0.5);
      it.root.children.forEach((c, i) => scores.set(c.id, i === 0 ? 0.9 : 0.1));
    }
    const score = (n: RegionNode) => scores.get(n.id) ?? 0;
    const refined = compress(items, { name: 'canopy', items: 0.3 }, score, false, question);
    assert.equal(refined.gate?.get('Green-Day')?.kept, false);
    assert.deepEqual(refined.kept.get('Green-Day'), []);
    assert.equal(refined.verdicts.get('Green-Day')![0]!.decision, 'dropped-sibling');
    // Without wholeBelow the projection refines the kept item to its first sentence.
    assert.deepEqual(refined.kept.get('Tinted-Windows-band-')!.map((n) => n.id), ['Tinted-Windows-band-/0']);
    const whole = compress(items, { name: 'canopy', items: 0.3, wholeBelow: 600 }, score, false, question);
    assert.deepEqual(whole.kept.get('Tinted-Windows-band-')!.map((n) => n.id), ['Tinted-Windows-band-']);
    // Kept whole, and every sentence inside it says so (not "none").
    assert.deepEqual(whole.verdicts.get('Tinted-Windows-band-'), [
      { nodeId: 'Tinted-Windows-band-', decision: 'keep-whole', rule: 'short-item', score: 0.5, depth: 0 },
      ...[0, 1, 2].map((i) => ({ nodeId: `Tinted-Windows-band-/${i}`, decision: 'not-visited', rule: 'ancestor-kept-whole', depth: 1 })),
    ]);
    // No gate: no item is dropped and no gate verdicts are returned.
    const plain = compress(items, { name: 'canopy' }, score, false, question);
    assert.equal(plain.gate, undefined);
    assert.ok([...plain.kept.values()].every((k) => k.length > 0));
  });

  it('keeps at least minItems items in all: the next by rank while the ranked and named ones are fewer', () => {
    // ceil(0.3 × 6) = 2 by rank; "Tinted Windows (band)" is one of them or named by the question:
    // two more by rank make four.
    const four = gateItems(question, items, 0.3, 4);
    const kept = [...four.values()].filter((g) => g.kept);
    assert.equal(kept.length, 4, JSON.stringify([...four]));
    assert.ok(kept.every((g) => /^rank \d of 6 by BM25 for the question \(the gate keeps 2 for their rank, at least 4 in all\)$/.test(g.why) || g.why.startsWith('named by ')));
    assert.match([...four.values()].find((g) => !g.kept)!.why, /the gate keeps 2 for their rank, at least 4 in all\), and named by neither/);
    // A round of no more items than minItems keeps them all.
    const small = gateItems(question, items.slice(2), 0.3, 4);
    assert.ok([...small.values()].every((g) => g.kept));
  });

  it('counts the items a kept one names towards minItems, so the second hop needs no item for its rank', () => {
    const hop = hopItems;
    const q = hopQuestion;
    // ceil(0.2 × 5) = 1 by rank (Dookie), which names Mellow Yellow: two items, as minItems asks.
    const gate = gateItems(q, hop, 0.2, 2);
    assert.deepEqual([...gate].filter(([, g]) => g.kept).map(([id]) => id), ['Dookie', 'Mellow-Yellow']);
    assert.deepEqual(gate.get('Mellow-Yellow'), { kept: true, why: 'named by “Dookie”' });
    // Three asked: the best-ranked of the rest fills the third place.
    const three = gateItems(q, hop, 0.2, 3);
    assert.equal([...three.values()].filter((g) => g.kept).length, 3);
    assert.equal([...three.values()].filter((g) => g.kept && g.why.startsWith('rank ')).length, 2);
  });

  it('ranks by a trained item order when given one; the BM25 weight alone keeps exactly the BM25 order', () => {
    // Node scores that disagree with BM25: the items BM25 ranks last score best.
    const bm25 = itemBm25(question, items);
    const byBm25 = items.map((_, i) => i).sort((a, b) => bm25[b]! - bm25[a]! || a - b);
    const scores = new Map<string, number>();
    byBm25.forEach((i, r) => {
      scores.set(items[i]!.root.id, r / items.length);
      items[i]!.root.children.forEach((c) => scores.set(c.id, r / items.length));
    });
    const score = (n: RegionNode) => scores.get(n.id) ?? 0;
    const keptOf = (g: ReturnType<typeof gateItems>) => [...g].filter(([, v]) => v.kept).map(([id]) => id);
    const plain = gateItems(question, items, 0.3, 3);
    // Default weights (BM25 alone, at any positive scale): the same verdicts, reasons included.
    assert.deepEqual([...gateItems(question, items, 0.3, 3, { weights: { bm25: 1, root: 0, leaf: 0, length: 0 }, score })], [...plain]);
    assert.deepEqual([...gateItems(question, items, 0.3, 3, { weights: { bm25: 2.5, root: 0, leaf: 0, length: 0 }, score })], [...plain]);
    // A trained order that weighs the node scores keeps other items, and says the order's score.
    const weights = { bm25: 0.2, root: 1, leaf: 0.5, length: 0 };
    const trained = gateItems(question, items, 0.3, 3, { weights, score });
    assert.notDeepEqual(keptOf(trained), keptOf(plain));
    const last = items[byBm25[byBm25.length - 1]!]!.id;
    assert.equal(plain.get(last)!.kept, false);
    assert.equal(trained.get(last)!.kept, true);
    assert.match(trained.get(last)!.why, /^rank 1 of 6 by the trained order \(0\.2 × BM25 \+ 1 × root score \+ 0\.5 × best leaf score, each standardised within the round: -?\d+\.\d\d\) for the question/);
    // The features are standardised within the round: each column has mean 0.
    const f = itemOrderFeatures(question, items, score);
    for (let j = 0; j < 4; j++) assert.ok(Math.abs(f.reduce((a, row) => a + row[j]!, 0)) < 1e-9);
    assert.equal(describeItemOrder({ bm25: 1, root: -0.25, leaf: 0, length: 0 }), '1 × BM25 − 0.25 × root score');
    // Through the compressor: the setting's itemOrder reaches the gate.
    const viaCompress = compress(items, { name: 'canopy', items: 0.3, minItems: 3, itemOrder: weights }, score, false, question);
    assert.deepEqual([...viaCompress.gate!].filter(([, v]) => v.kept).map(([id]) => id), keptOf(trained));
  });

  it('ranks the leaves by score per token when given their cost', () => {
    const it0 = item('Long and short', ['A long sentence that says a great deal about many things at once.', 'Short one.', 'Middle sentence here.']);
    const s = new Map(it0.root.children.map((c, i) => [c.id, [0.9, 0.5, 0.55][i]!]));
    const score = (n: RegionNode) => s.get(n.id) ?? 0;
    const cost = (n: RegionNode) => n.text.split(' ').length;
    assert.deepEqual(glimpseLeaves(it0.root, 1, score).map((n) => n.id), ['Long-and-short/0']);
    // 0.9 / 13 words < 0.5 / 2 words.
    assert.deepEqual(glimpseLeaves(it0.root, 1, score, cost).map((n) => n.id), ['Long-and-short/1']);
  });

  it('a glimpse keeps the best leaves of a dropped item, in document order', () => {
    const it0 = items[1]!;
    const s = new Map(it0.root.children.map((c, i) => [c.id, [0.2, 0.7, 0.5][i]!]));
    const score = (n: RegionNode) => s.get(n.id) ?? 0;
    assert.deepEqual(glimpseLeaves(it0.root, 1, score).map((n) => n.id), ['Tinted-Windows-band-/1']);
    assert.deepEqual(glimpseLeaves(it0.root, 2, score).map((n) => n.id), ['Tinted-Windows-band-/1', 'Tinted-Windows-band-/2']);
    assert.deepEqual(glimpseLeaves(it0.root, 0, score), []);
  });

  it('in the compressor: with a glimpse, each dropped item keeps its best leaf and says so', () => {
    const scores = new Map<string, number>();
    for (const it of items) {
      scores.set(it.root.id, 0.5);
      it.root.children.forEach((c, i) => scores.set(c.id, i === 1 ? 0.8 : 0.1));
    }
    const score = (n: RegionNode) => scores.get(n.id) ?? 0;
    const r = compress(items, { name: 'canopy', items: 0.3, glimpse: 1 }, score, false, question);
    assert.equal(r.gate?.get('Green-Day')?.kept, false);
    assert.deepEqual(r.kept.get('Green-Day')!.map((n) => n.id), ['Green-Day/1']);
    const v = r.verdicts.get('Green-Day')!;
    assert.deepEqual(v[0], { nodeId: 'Green-Day', decision: 'descend', rule: 'glimpse', score: 0.5, depth: 0 });
    assert.deepEqual(v.slice(1).map((x) => [x.nodeId, x.decision, x.rule]), [['Green-Day/0', 'not-visited', 'ancestor-dropped'], ['Green-Day/1', 'keep-whole', 'glimpse']]);
    // Inside an item the gate keeps, the glimpse keeps the leaves the rule drops below their parent.
    const plain = compress(items, { name: 'canopy', items: 0.3 }, score, false, question);
    assert.deepEqual(plain.kept.get('Tinted-Windows-band-')!.map((n) => n.id), ['Tinted-Windows-band-/1']);
    assert.deepEqual(r.kept.get('Tinted-Windows-band-')!.map((n) => n.id), ['Tinted-Windows-band-/0', 'Tinted-Windows-band-/1', 'Tinted-Windows-band-/2']);
    assert.deepEqual(plain.kept.get('Green-Day'), []);
  });

  it('in the compressor: an item outside the gate keeps its leaf with the best score per token, a sibling below its parent its best-scoring leaf', () => {
    const scores = new Map<string, number>();
    for (const it of items) {
      scores.set(it.root.id, 0.5);
      it.root.children.forEach((c, i) => scores.set(c.id, i === 1 ? 0.8 : 0.1));
    }
    // Green Day: "Green Day is a rock band." (0.7, 25 characters) against the longer best "The band
    // released Dookie in 1994." (0.8, 33 characters); the cost here is characters.
    scores.set('Green-Day/0', 0.7);
    const score = (n: RegionNode) => scores.get(n.id) ?? 0;
    const characters = { name: 'characters', count: (t: string) => t.length };
    const r = compress(items, { name: 'canopy', items: 0.3, glimpse: 1 }, score, false, question, characters);
    assert.equal(r.gate?.get('Green-Day')?.kept, false);
    assert.deepEqual(r.kept.get('Green-Day')!.map((n) => n.id), ['Green-Day/0']);
    // Inside a kept item the rule's dropped siblings keep their best-scoring leaves, whatever they cost.
    assert.deepEqual(r.kept.get('Tinted-Windows-band-')!.map((n) => n.id), ['Tinted-Windows-band-/0', 'Tinted-Windows-band-/1', 'Tinted-Windows-band-/2']);
  });

  it('in the compressor: with a glimpse floor, a dropped item keeps its glimpse only when its best leaf scores near the kept items\' best', () => {
    const scores = new Map<string, number>();
    for (const it of items) {
      scores.set(it.root.id, 0.5);
      it.root.children.forEach((c, i) => scores.set(c.id, i === 1 ? 0.8 : 0.1));
    }
    // Green Day's best leaf is weak: 0.5 of the kept items' best (0.8).
    for (const c of items.find((it) => it.id === 'Green-Day')!.root.children) scores.set(c.id, c.id === 'Green-Day/1' ? 0.4 : 0.1);
    const score = (n: RegionNode) => scores.get(n.id) ?? 0;
    const low = compress(items, { name: 'canopy', items: 0.3, glimpse: 1, glimpseFloor: 0.4 }, score, false, question);
    assert.deepEqual(low.kept.get('Green-Day')!.map((n) => n.id), ['Green-Day/1']);
    const high = compress(items, { name: 'canopy', items: 0.3, glimpse: 1, glimpseFloor: 0.6 }, score, false, question);
    assert.equal(high.gate?.get('Green-Day')?.kept, false);
    assert.deepEqual(high.kept.get('Green-Day'), []);
    assert.deepEqual(high.verdicts.get('Green-Day'), [{ nodeId: 'Green-Day', decision: 'dropped-sibling', rule: 'below-parent', score: 0.5, depth: 0 }]);
  });

  it('in the compressor: every region of an item the gate drops has a verdict, sections included', () => {
    // Green Day as a document of two sections of sentences: the gate drops it, its best leaf is the glimpse.
    const section = (id: string, texts: string[]): RegionNode => ({ id, kind: 'section', modality: 'text', text: texts.join(' '), anchor: { file: 'Green-Day.md' }, children: texts.map((text, i) => ({ id: `${id}/${i}`, kind: 'sentence', modality: 'text', text, anchor: { file: 'Green-Day.md' }, children: [] })) });
    const nested: Item = { ...items[5]!, root: { ...items[5]!.root, children: [section('Green-Day/a', ['Green Day is a rock band.', 'It formed in 1987.']), section('Green-Day/b', ['The band released Dookie in 1994.'])] } };
    const all = [...items.slice(0, 5), nested];
    const score = (n: RegionNode) => (n.id === 'Green-Day/b/0' ? 0.9 : 0.2);
    const r = compress(all, { name: 'canopy', items: 0.3, minItems: 2, glimpse: 1 }, score, false, question);
    assert.equal(r.gate?.get('Green-Day')?.kept, false);
    assert.deepEqual(r.kept.get('Green-Day')!.map((n) => n.id), ['Green-Day/b/0']);
    assert.deepEqual(
      r.verdicts.get('Green-Day')!.map((x) => [x.nodeId, x.decision, x.rule]),
      [
        ['Green-Day', 'descend', 'glimpse'],
        ['Green-Day/a', 'not-visited', 'ancestor-dropped'],
        ['Green-Day/a/0', 'not-visited', 'ancestor-dropped'],
        ['Green-Day/a/1', 'not-visited', 'ancestor-dropped'],
        ['Green-Day/b', 'not-visited', 'ancestor-dropped'],
        ['Green-Day/b/0', 'keep-whole', 'glimpse'],
      ],
    );
  });
});
