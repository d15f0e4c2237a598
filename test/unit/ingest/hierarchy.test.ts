import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { wordCount } from '../../../src/core/ingest/sentences';
import type { RegionNode } from '../../../src/contracts/region';
import { allNodes, assertExactLeaves, assertInnerTexts, assertTreeShape, fixture, leaves, ofKind, walk } from './helpers';

/** A text with paragraphs of 1, 2, 5, 9 and 23 sentences. */
function manySentences(): string {
  const para = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `Sentence ${i + 1} of paragraph ${tag} says something.`).join(' ');
  return [para(1, 'a'), para(2, 'b'), para(5, 'c'), para(9, 'd'), para(23, 'e')].join('\n\n');
}

function depthsBelow(node: RegionNode): number[] {
  const out: number[] = [];
  const go = (n: RegionNode, d: number): void => {
    if (n.children.length === 0) out.push(d);
    else n.children.forEach((c) => go(c, d + 1));
  };
  go(node, 0);
  return out;
}

test('grouping: for B = 2, 3, 4 no node has more than B children, leaves keep their order, groups are contiguous and balanced', async () => {
  const source = manySentences();
  let reference: string[] | undefined;
  for (const b of [2, 3, 4]) {
    const doc = await parseFile('many.txt', Buffer.from(source), { branchingFactor: b });
    assertTreeShape(doc.items, b);
    assertInnerTexts(doc.items);
    assertExactLeaves(doc.items, source, ['sentence']);
    const leafTexts = leaves(doc.items).map((l) => l.text);
    reference ??= leafTexts;
    assert.deepEqual(leafTexts, reference, `B=${b} keeps the same leaves in the same order`);
    assert.equal(leafTexts.length, 40);
    for (const n of allNodes(doc.items)) {
      if (n.kind !== 'group') continue;
      // A group spans exactly its first to its last child, and is at least two children.
      assert.ok(n.children.length >= 2);
      assert.equal(n.anchor.charStart, n.children[0]!.anchor.charStart);
      assert.equal(n.anchor.charEnd, n.children[n.children.length - 1]!.anchor.charEnd);
    }
    // The 23-sentence paragraph: leaves at depths differing by at most one (balanced), depth ⌈log_B 23⌉.
    const big = ofKind(doc.items, 'paragraph').find((p) => p.text.includes('paragraph e'))!;
    const depths = depthsBelow(big);
    assert.equal(depths.length, 23);
    assert.ok(Math.max(...depths) - Math.min(...depths) <= 1, `B=${b}: depths ${depths.join(',')}`);
    assert.equal(Math.max(...depths), Math.ceil(Math.log(23) / Math.log(b)));
  }
});

test('grouping: row groups carry the table header; group modality follows the parent', async () => {
  const rows = ['id,name', ...Array.from({ length: 11 }, (_, i) => `${i},name ${i}`)].join('\n');
  const doc = await parseFile('t.csv', Buffer.from(rows), { branchingFactor: 3 });
  assertTreeShape(doc.items, 3);
  const groups = ofKind(doc.items, 'group');
  assert.ok(groups.length > 0);
  assert.ok(groups.every((g) => g.header === 'id | name' && g.modality === 'table'));
});

/** A Markdown file with sections, a table and a long paragraph, for the item rule. */
function longMarkdown(): string {
  // Sentences of 12 words; each starts with a capital so the segmenter ends the one before.
  const words = (n: number, w: string): string =>
    Array.from({ length: n }, (_, i) => (i % 12 === 0 ? w[0]!.toUpperCase() + w.slice(1) : i % 12 === 11 ? `${w}.` : w)).join(' ') + '.';
  const table = ['| Key | Value |', '|---|---|', ...Array.from({ length: 40 }, (_, i) => `| k${i} | v${i} value |`)].join('\n');
  return [
    '# Report',
    words(10, 'intro'),
    '## Alpha',
    words(40, 'alpha'),
    words(40, 'alphb'),
    table,
    '## Beta',
    '### Beta one',
    words(45, 'beta'),
    words(45, 'betb'),
    words(45, 'betc'),
    '## Gamma',
    words(130, 'gamma'),
  ].join('\n\n');
}

test('items: a short file is one item; a long one is cut at sections, tables get their own items, oversized nodes are cut into runs', async () => {
  const source = longMarkdown();
  const whole = await parseFile('docs/long.md', Buffer.from(source), { itemMaxWords: 100000 });
  assert.equal(whole.items.length, 1);
  assert.equal(whole.items[0]!.id, 'docs/long.md#0');

  const doc = await parseFile('docs/long.md', Buffer.from(source), { itemMaxWords: 100 });
  assert.ok(doc.items.length >= 6);
  assert.deepEqual(
    doc.items.map((i) => i.id),
    doc.items.map((_, k) => `docs/long.md#${k}`),
  );
  // Nothing lost, nothing repeated, order kept.
  assert.deepEqual(
    leaves(doc.items).map((l) => l.id.replace(/#\d+\/.*/, '') + l.text),
    leaves(whole.items).map((l) => l.id.replace(/#\d+\/.*/, '') + l.text),
  );
  assertExactLeaves(doc.items, source, ['sentence', 'row', 'heading']);
  for (const item of doc.items) {
    assert.ok(wordCount(item.root.text) <= 100 || item.root.children.length === 0, `${item.id} (${item.title}) is within budget`);
  }
  // Tables are their own items; a table over budget is cut into row runs that keep the header.
  const tableItems = doc.items.filter((i) => i.root.kind === 'table');
  assert.ok(tableItems.length >= 2, 'the 40-row table is split into row runs');
  for (const t of tableItems) {
    assert.equal(t.root.header, 'Key | Value');
    assert.match(t.title, /^Report › Alpha › table \(rows \d+–\d+\)$/);
    walk(t.root, (n) => {
      if (n.kind === 'row') assert.equal(n.header, 'Key | Value');
    });
  }
  // Items are titled by their heading path; a heading whose section is cut opens the first part
  // (no item is a lone heading); the long paragraph is cut into sentence runs.
  assert.ok(doc.items.some((i) => i.title.startsWith('Report › Beta › Beta one') && leaves([i])[0]!.text === 'Beta'));
  assert.ok(!doc.items.some((i) => i.root.kind === 'heading'));
  const gamma = doc.items.filter((i) => i.title.startsWith('Report › Gamma'));
  assert.ok(gamma.length >= 2);
  assert.ok(gamma.every((i) => wordCount(i.root.text) <= 100));
  // Same bytes, same options → same ids and trees.
  const again = await parseFile('docs/long.md', Buffer.from(source), { itemMaxWords: 100 });
  assert.deepEqual(again.items, doc.items);
});

test('items: a long PDF becomes page groups; a long transcript runs of segments', async () => {
  const pdf = await parseFile('report.pdf', fixture('report.pdf'), { itemMaxWords: 60 });
  assert.deepEqual(
    pdf.items.map((i) => i.root.kind),
    ['page', 'page'],
  );
  const cues = Array.from({ length: 12 }, (_, i) => `${i + 1}\n00:${String(i * 30 / 60 | 0).padStart(2, '0')}:${String((i * 30) % 60).padStart(2, '0')},000 --> 00:${String(i * 30 / 60 | 0).padStart(2, '0')}:${String((i * 30) % 60 + 5).padStart(2, '0')},000\nCue number ${i + 1} says a few words here.`).join('\n\n');
  const srt = await parseFile('long.srt', Buffer.from(cues), { itemMaxWords: 20 });
  assert.equal(ofKind(srt.items, 'segment').length, 12);
  assert.ok(srt.items.length >= 4);
  assert.ok(srt.items.every((i) => /long\.srt(?: \(\d+:\d\d–\d+:\d\d\))?$/.test(i.title)), srt.items.map((i) => i.title).join(', '));
});
