// The trace's reason for every region of a controlled PDF item: kept, inside a kept region,
// descended into, or left out by the controller (page never activated, …) — never none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RegionNode } from '../../../src/contracts/region';
import { controllerDecisions } from '../../../src/core/engine/controllerStage';

const node = (id: string, page: number, children: RegionNode[] = []): RegionNode => ({ id, kind: children.length ? 'group' : 'sentence', modality: 'text', text: id, anchor: { file: 'r.pdf', page }, children });

test('controller decisions: regions inside a kept one say so; the rest say why they were left out', () => {
  // Page 1 holds a table kept whole (its rows inside it); page 2 was never activated.
  const table = node('t', 1, [node('t/r1', 1), node('t/r2', 1, [node('t/r2/c', 1)])]);
  const root = node('root', 1, [node('p1', 1, [table, node('p1/s', 1)]), node('p2', 2, [node('p2/s', 2)])]);
  const subgraph = { nodes: [{ type: 'page', page: 1, state: 'active' }, { type: 'page', page: 2, state: 'inactive' }] };
  const out = controllerDecisions(root, { subgraph } as never, new Set(['t']));
  const of = (id: string) => { const d = out.get(id); return d && [d.decision, d.rule]; };
  assert.deepEqual(of('t'), undefined, 'the kept region itself is marked kept by the stage');
  assert.deepEqual(of('t/r1'), ['not-visited', 'ancestor-kept-whole']);
  assert.deepEqual(of('t/r2'), ['not-visited', 'ancestor-kept-whole']);
  assert.deepEqual(of('t/r2/c'), ['not-visited', 'ancestor-kept-whole']);
  assert.deepEqual(of('root'), ['descend', 'controller']);
  assert.deepEqual(of('p1'), ['descend', 'controller']);
  assert.deepEqual(of('p1/s'), ['dropped-by-controller', 'controller-not-activated']);
  assert.deepEqual(of('p2'), ['dropped-by-controller', 'controller-page-not-activated']);
  assert.deepEqual(of('p2/s'), ['not-visited', 'controller-page-not-activated']);
});
