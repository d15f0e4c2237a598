// Preference construction (design §10) on hand-built trees: refine pairs along the path to gold,
// keep-whole pairs at fully gold nodes, nothing for items without located gold, and the counts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coverage, goldStatus } from '../../../src/core/annotate/overlap';
import { buildPreferences, itemPreferences, pairAgrees } from '../../../src/core/annotate/preferences';
import type { Anchor, Item, RegionNode } from '../../../src/contracts/region';

/** A tree from [id, start, end, children?]: char ranges in file f.md. */
type Spec = [string, number, number, Spec[]?];
function item(spec: Spec, file = 'f.md'): Item {
  const make = ([id, s, e, kids = []]: Spec): RegionNode => ({ id, kind: kids.length ? 'group' : 'sentence', modality: 'text', text: id, anchor: { file, charStart: s, charEnd: e }, children: kids.map(make) });
  return { id: `${file}#0`, file, title: file, modality: 'text', root: make(spec) };
}

//        root [0,100)
//        ├── a [0,50)        ├── b [50,100)
//        │   ├── a1 [0,20)   │   ├── b1 [50,75)
//        │   └── a2 [21,50)  │   └── b2 [76,100)
const tree = item([
  'root',
  0,
  100,
  [
    ['a', 0, 50, [['a1', 0, 20], ['a2', 21, 50]]],
    ['b', 50, 100, [['b1', 50, 75], ['b2', 76, 100]]],
  ],
]);
const g = (s: number, e: number, file = 'f.md'): Anchor => ({ file, charStart: s, charEnd: e });

describe('preferences', () => {
  it('refines along the path to one gold leaf', () => {
    const pairs = itemPreferences(tree, [g(21, 50)]);
    assert.deepEqual(
      pairs.map((p) => [p.rule, p.preferred, p.other, p.parent]),
      [
        ['refine', 'a', 'root', 'root'],
        ['refine', 'a2', 'a', 'a'],
      ],
    );
  });

  it('prefers keeping a fully gold node whole over each of its children, and stops there', () => {
    const pairs = itemPreferences(tree, [g(0, 20), g(21, 50), g(80, 90)]);
    assert.deepEqual(
      pairs.map((p) => [p.rule, p.preferred, p.other]),
      [
        ['refine', 'a', 'root'],
        ['keep-whole', 'a', 'a1'],
        ['keep-whole', 'a', 'a2'],
        ['refine', 'b', 'root'],
        ['refine', 'b2', 'b'],
      ],
    );
  });

  it('a leaf covered up to a few characters counts as fully gold; a partly covered one only overlaps', () => {
    const status = goldStatus(tree.root, [g(1, 20), g(21, 35)]);
    assert.deepEqual(status.get('a1'), { overlaps: true, full: true });
    assert.deepEqual(status.get('a2'), { overlaps: true, full: false });
    assert.deepEqual(status.get('a'), { overlaps: true, full: false });
    assert.deepEqual(status.get('b'), { overlaps: false, full: false });
  });

  it('a whole gold item is kept whole at the root', () => {
    const pairs = itemPreferences(tree, [g(0, 100)]);
    assert.deepEqual(
      pairs.map((p) => [p.rule, p.preferred, p.other]),
      [
        ['keep-whole', 'root', 'a'],
        ['keep-whole', 'root', 'b'],
      ],
    );
  });

  it('items without located gold give no pairs, and the counts say so', () => {
    const other = item(['x', 0, 10, [['x1', 0, 5], ['x2', 6, 10]]], 'other.md');
    const { pairs, counts } = buildPreferences([tree, other], [g(21, 50), g(0, 5, 'elsewhere.md')]);
    assert.equal(pairs.length, 2);
    assert.ok(pairs.every((p) => p.itemId === tree.id));
    assert.deepEqual(counts, { pairs: 2, identical: 0, itemsWithGold: 1, itemsWithoutGold: 1, perRule: { refine: 2, 'keep-whole': 0 } });
    assert.deepEqual(buildPreferences([other], []).counts, { pairs: 0, identical: 0, itemsWithGold: 0, itemsWithoutGold: 1, perRule: { refine: 0, 'keep-whole': 0 } });
  });

  it('works on table rows and PDF pages', () => {
    const rows: Item = {
      id: 't#0',
      file: 't.csv',
      title: 't',
      modality: 'table',
      root: {
        id: 'table',
        kind: 'table',
        modality: 'table',
        text: 'a\nb\nc',
        anchor: { file: 't.csv' },
        children: [0, 1, 2].map((r) => ({ id: `r${r}`, kind: 'row' as const, modality: 'table' as const, text: 'abc'[r]!, anchor: { file: 't.csv', row: r }, children: [] })),
      },
    };
    assert.deepEqual(
      itemPreferences(rows, [{ file: 't.csv', row: 1 }]).map((p) => p.preferred),
      ['r1'],
    );
    assert.equal(coverage({ file: 'r.pdf', page: 2, bbox: [0, 0, 1, 1] }, [{ file: 'r.pdf', page: 2 }]), 1);
    assert.equal(coverage({ file: 'r.pdf', page: 2, pageEnd: 3 }, [{ file: 'r.pdf', page: 3 }]), 0.5);
    assert.equal(coverage({ file: 'v.vtt', timeStart: 0, timeEnd: 30 }, [{ file: 'v.vtt', timeStart: 15, timeEnd: 60 }]), 0.5);
  });

  it('leaves out pairs whose child holds exactly the parent text, and walks on through them', () => {
    const chain: Item = {
      id: 'c#0',
      file: 'c.md',
      title: 'c',
      modality: 'text',
      root: {
        id: 'doc',
        kind: 'document',
        modality: 'text',
        text: 'One. Two.',
        anchor: { file: 'c.md', charStart: 0, charEnd: 9 },
        children: [
          {
            id: 'sec',
            kind: 'section',
            modality: 'text',
            text: 'One. Two.',
            anchor: { file: 'c.md', charStart: 0, charEnd: 9 },
            children: [
              { id: 's1', kind: 'sentence', modality: 'text', text: 'One.', anchor: { file: 'c.md', charStart: 0, charEnd: 4 }, children: [] },
              { id: 's2', kind: 'sentence', modality: 'text', text: 'Two.', anchor: { file: 'c.md', charStart: 5, charEnd: 9 }, children: [] },
            ],
          },
        ],
      },
    };
    const { pairs, counts } = buildPreferences([chain], [{ file: 'c.md', charStart: 5, charEnd: 9 }]);
    assert.deepEqual(
      pairs.map((p) => [p.rule, p.preferred, p.other]),
      [['refine', 's2', 'sec']],
    );
    assert.equal(counts.identical, 1);
    // All gold: the keep-whole decision is made one level down, at the section.
    const whole = buildPreferences([chain], [{ file: 'c.md', charStart: 0, charEnd: 9 }]);
    assert.deepEqual(
      whole.pairs.map((p) => [p.rule, p.preferred, p.other]),
      [
        ['keep-whole', 'sec', 's1'],
        ['keep-whole', 'sec', 's2'],
      ],
    );
    assert.equal(whole.counts.identical, 1);
  });

  it('reads agreement as the projection does: ties descend, keep-whole needs a strictly higher parent', () => {
    const [refine] = itemPreferences(tree, [g(21, 50)]);
    assert.equal(pairAgrees(refine!, (id) => (id === 'a' ? 0.5 : 0.5)), true);
    assert.equal(pairAgrees(refine!, (id) => (id === 'a' ? 0.4 : 0.5)), false);
    const [keep] = itemPreferences(tree, [g(0, 100)]);
    assert.equal(pairAgrees(keep!, () => 0.5), false);
    assert.equal(pairAgrees(keep!, (id) => (id === 'root' ? 0.6 : 0.5)), true);
  });
});
