// The CANOPY projection rule pinned on hand-built trees: ties, single-child chains, all
// children lower, tables, and trees of branching factor 2 to 4.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RegionNode } from '../../../src/contracts/region';
import { projectItem } from '../../../src/core/compress/projection';

/** Builds a tree from a nested spec: [id, score, children?]. */
type Spec = [string, number, Spec[]?];
function build(spec: Spec, kind: RegionNode['kind'] = 'section'): { root: RegionNode; scores: Map<string, number> } {
  const scores = new Map<string, number>();
  const make = ([id, s, kids = []]: Spec): RegionNode => {
    scores.set(id, s);
    return { id, kind: kids.length ? kind : 'sentence', modality: 'text', text: id, anchor: { file: 'f.md' }, children: kids.map(make) };
  };
  return { root: make(spec), scores };
}

function run(spec: Spec, opts = {}) {
  const { root, scores } = build(spec);
  const calls: string[] = [];
  const result = projectItem(
    root,
    (n) => {
      calls.push(n.id);
      return scores.get(n.id)!;
    },
    opts,
  );
  const verdict = Object.fromEntries(result.verdicts.map((v) => [v.nodeId, v]));
  return { kept: result.kept.map((n) => n.id), verdict, calls, verdicts: result.verdicts };
}

describe('CANOPY projection', () => {
  it('keeps the parent whole when every child scores lower', () => {
    const r = run(['root', 0.9, [['a', 0.5], ['b', 0.8]]]);
    assert.deepEqual(r.kept, ['root']);
    assert.equal(r.verdict.root!.decision, 'keep-whole');
    assert.equal(r.verdict.root!.rule, 'no-child-ge-parent');
    assert.equal(r.verdict.a!.decision, 'not-visited');
    assert.equal(r.verdict.a!.rule, 'ancestor-kept-whole');
  });

  it('descends into exactly the children scoring ≥ the parent and drops their siblings', () => {
    const r = run(['root', 0.5, [['a', 0.7], ['b', 0.2], ['c', 0.6]]]);
    assert.deepEqual(r.kept, ['a', 'c']);
    assert.equal(r.verdict.root!.decision, 'descend');
    assert.equal(r.verdict.b!.decision, 'dropped-sibling');
    assert.equal(r.verdict.b!.parentScore, 0.5);
    assert.equal(r.verdict.b!.score, 0.2);
  });

  it('treats a tie as "child ≥ parent" and descends', () => {
    const r = run(['root', 0.5, [['a', 0.5], ['b', 0.49]]]);
    assert.deepEqual(r.kept, ['a']);
    assert.equal(r.verdict.a!.rule, 'leaf');
    assert.equal(r.verdict.b!.decision, 'dropped-sibling');
  });

  it('follows a single-child chain while the child keeps up, and stops where it does not', () => {
    const r = run(['d', 0.3, [['s', 0.4, [['p', 0.4, [['x', 0.2], ['y', 0.1]]]]]]]);
    assert.deepEqual(r.kept, ['p']);
    assert.deepEqual(
      r.verdicts.map((v) => `${v.nodeId}:${v.decision}`),
      ['d:descend', 's:descend', 'p:keep-whole', 'x:not-visited', 'y:not-visited'],
    );
  });

  it('drops a single child scoring below its parent by keeping the parent', () => {
    const r = run(['d', 0.5, [['only', 0.49]]]);
    assert.deepEqual(r.kept, ['d']);
  });

  it('keeps regions at mixed depths, in document order', () => {
    const r = run([
      'doc', 0.2,
      [
        ['s1', 0.6, [['s1a', 0.3], ['s1b', 0.4]]],
        ['s2', 0.1, [['s2a', 0.9]]],
        ['s3', 0.25, [['s3a', 0.3], ['s3b', 0.25]]],
      ],
    ]);
    assert.deepEqual(r.kept, ['s1', 's3a', 's3b']);
    assert.equal(r.verdict.s2!.decision, 'dropped-sibling');
    assert.equal(r.verdict.s2a!.decision, 'not-visited');
    assert.equal(r.verdict.s2a!.rule, 'ancestor-dropped');
    assert.equal(r.verdict.s2a!.score, undefined, 'nodes inside dropped subtrees are never scored');
  });

  it('with a glimpse, a dropped sibling keeps its best leaf (a dropped leaf itself), in document order', () => {
    const spec: Spec = [
      'doc', 0.2,
      [
        ['s1', 0.6, [['s1a', 0.3], ['s1b', 0.4]]],
        ['s2', 0.1, [['s2a', 0.2], ['s2b', 0.9], ['s2c', 0.5]]],
        ['s3', 0.25, [['s3a', 0.3, [['x', 0.5], ['y', 0.1]]], ['s3b', 0.2]]],
      ],
    ];
    const plain = run(spec);
    assert.deepEqual(plain.kept, ['s1', 'x']);
    const r = run(spec, { glimpse: 1 });
    // s2 is dropped below its parent: its best leaf s2b stays; y and s3b, dropped leaves, stay themselves.
    assert.deepEqual(r.kept, ['s1', 's2b', 'x', 'y', 's3b']);
    assert.deepEqual([r.verdict.y!.decision, r.verdict.y!.rule, r.verdict.y!.parentScore], ['keep-whole', 'glimpse', 0.3]);
    assert.equal(r.verdict.s2!.decision, 'dropped-sibling');
    assert.equal(r.verdict.s2a!.decision, 'not-visited');
    assert.equal(r.verdict.s2a!.rule, 'ancestor-dropped');
    assert.deepEqual([r.verdict.s2b!.decision, r.verdict.s2b!.rule, r.verdict.s2b!.score], ['keep-whole', 'glimpse', 0.9]);
    assert.deepEqual(r.verdicts.map((v) => v.nodeId), plain.verdicts.map((v) => v.nodeId), 'still one verdict per node, in pre-order');
  });

  it('scores each visited node once and never scores unvisited nodes', () => {
    const r = run(['root', 0.9, [['a', 0.5, [['a1', 1], ['a2', 1]]], ['b', 0.8]]]);
    assert.deepEqual(r.calls.sort(), ['a', 'b', 'root']);
  });

  it('gives one verdict per node in pre-order', () => {
    const r = run(['r', 0.1, [['a', 0.2, [['a1', 0.1], ['a2', 0.3]]], ['b', 0.05, [['b1', 1]]]]]);
    assert.deepEqual(r.verdicts.map((v) => v.nodeId), ['r', 'a', 'a1', 'a2', 'b', 'b1']);
    assert.deepEqual(r.kept, ['a2']);
  });

  for (const B of [2, 3, 4]) {
    it(`works on a complete ${B}-ary tree: the kept set covers the best leaf and never overlaps`, () => {
      // Depth-3 complete tree; leaf k scores k / leaves; inner nodes score the mean of their leaves.
      let counter = 0;
      const leafScores: number[] = [];
      const make = (depth: number, id: string): Spec => {
        if (depth === 3) {
          const s = (counter++ % 7) / 7;
          leafScores.push(s);
          return [id, s];
        }
        const kids = Array.from({ length: B }, (_, i) => make(depth + 1, `${id}.${i}`));
        const mean = kids.reduce((a, k) => a + k[1], 0) / kids.length;
        return [id, mean, kids];
      };
      const spec = make(0, 'r');
      const r = run(spec);
      // Kept regions are disjoint: no kept id is a prefix-ancestor of another.
      for (const a of r.kept) for (const b of r.kept) if (a !== b) assert.ok(!b.startsWith(`${a}.`), `${a} contains ${b}`);
      // Every visited node has a verdict; the tree has (B^4 - 1) / (B - 1) nodes.
      assert.equal(r.verdicts.length, (B ** 4 - 1) / (B - 1));
      // With mean scores the best child of every descended node is ≥ its parent, so the rule
      // always descends from the root to at least one leaf.
      assert.ok(r.kept.some((id) => id.split('.').length === 4));
      // Under every descended node, exactly the children scoring ≥ it were visited.
      const { scores } = build(spec);
      for (const v of r.verdicts.filter((x) => x.decision === 'descend')) {
        const kids = [...scores.keys()].filter((id) => id.startsWith(`${v.nodeId}.`) && id.split('.').length === v.nodeId.split('.').length + 1);
        const visited = kids.filter((id) => r.verdict[id]!.decision !== 'dropped-sibling');
        assert.deepEqual(visited, kids.filter((id) => scores.get(id)! >= scores.get(v.nodeId)!));
      }
      assert.ok(leafScores.length === B ** 3);
    });
  }

  it('keeps tables whole for aggregate questions and prunes rows for lookups', () => {
    const table: RegionNode = {
      id: 't', kind: 'table', modality: 'table', text: 'table', anchor: { file: 'x.csv' },
      children: ['r0', 'r1', 'r2'].map((id) => ({ id, kind: 'row', modality: 'table', text: id, anchor: { file: 'x.csv' }, children: [] })),
    };
    const scores: Record<string, number> = { t: 0.4, r0: 0.2, r1: 0.6, r2: 0.1 };
    const lookup = projectItem(table, (n) => scores[n.id]!);
    assert.deepEqual(lookup.kept.map((n) => n.id), ['r1']);
    const aggregate = projectItem(table, (n) => scores[n.id]!, { keepTablesWhole: true });
    assert.deepEqual(aggregate.kept.map((n) => n.id), ['t']);
    assert.equal(aggregate.verdicts[0]!.rule, 'aggregate-table');
  });
});
