// Prune-sibling pairs (annotate/prunePairs.ts) on hand-built trees: along the path to gold, a
// partly gold parent is preferred over each gold-free child; nothing below a fully gold node,
// nothing in items without gold, nothing for a child holding its parent's text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { itemPreferences } from '../../../src/core/annotate/preferences';
import { itemPrunePairs, prunePairs } from '../../../src/core/annotate/prunePairs';
import type { Anchor, Item, RegionNode } from '../../../src/contracts/region';

type Spec = [string, number, number, Spec[]?, string?];
function item(spec: Spec, file = 'f.md'): Item {
  const make = ([id, s, e, kids = [], text]: Spec): RegionNode => ({ id, kind: kids.length ? 'group' : 'sentence', modality: 'text', text: text ?? id, anchor: { file, charStart: s, charEnd: e }, children: kids.map(make) });
  return { id: `${file}#0`, file, title: file, modality: 'text', root: make(spec) };
}
const tree = item(['root', 0, 100, [['a', 0, 50, [['a1', 0, 20], ['a2', 21, 50]]], ['b', 50, 100, [['b1', 50, 75], ['b2', 76, 100]]]]]);
const g = (s: number, e: number, file = 'f.md'): Anchor => ({ file, charStart: s, charEnd: e });

describe('prune-sibling pairs', () => {
  it('prefers each partly gold parent on the path over its gold-free children', () => {
    const pairs = itemPrunePairs(tree, [g(21, 50)]);
    assert.deepEqual(
      pairs.map((p) => [p.rule, p.preferred, p.other, p.parent]),
      [
        ['prune-sibling', 'a', 'a1', 'a'],
        ['prune-sibling', 'root', 'b', 'root'],
      ],
    );
    // They never contradict a §10 pair: no node is both preferred over and below the same node.
    const s10 = itemPreferences(tree, [g(21, 50)]).map((p) => `${p.other}>${p.preferred}`);
    for (const p of pairs) assert.ok(!s10.includes(`${p.preferred}>${p.other}`));
  });

  it('gives nothing below a fully gold node, nothing without gold, and skips a child with its parent text', () => {
    assert.deepEqual(
      itemPrunePairs(tree, [g(0, 20), g(21, 50)]).map((p) => [p.preferred, p.other]),
      [['root', 'b']],
    );
    assert.deepEqual(itemPrunePairs(tree, [g(0, 10, 'other.md')]), []);
    const same = item(['root', 0, 50, [['only', 0, 50, [['x', 0, 20], ['y', 21, 50]], 'root']]]);
    assert.deepEqual(
      itemPrunePairs(same, [g(21, 50)]).map((p) => [p.preferred, p.other]),
      [['only', 'x']],
    );
    assert.equal(prunePairs([tree, same], [g(21, 50)]).length, 3);
  });
});
