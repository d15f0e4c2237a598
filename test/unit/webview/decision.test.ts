/**
 * webview/decision.ts: one status per region with the stage that decided it, read from the
 * trace's decision, rule, the item's rank-gate verdict and the controller — so a region is never
 * "dropped by the controller" in one place and "kept by the gate" in another without saying which
 * stage decided; and why a lower-scored sibling was kept.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AskTrace, TraceNode, TraceRetrievedItem } from '../../../src/contracts/trace';
import { decisionOf, regionHolding, siblingNote } from '../../../webview/decision';
import { TraceModel } from '../../../webview/model';

const anchor = { file: 'a.md' };

function node(id: string, decision: TraceNode['decision'], rule: TraceNode['rule'], score: number | undefined, children: TraceNode[] = [], text?: string): TraceNode {
  return { id, kind: children.length > 0 ? 'section' : 'paragraph', modality: 'text', anchor, tokens: 10, decision, rule, ...(score !== undefined ? { score } : {}), children, ...(children.length === 0 ? { text: text ?? `text of ${id}` } : { preview: `preview of ${id}` }) } as TraceNode;
}

function item(itemId: string, tree: TraceNode, kept: string[], extra: Partial<TraceRetrievedItem> = {}): TraceRetrievedItem {
  return { itemId, file: `${itemId}.md`, title: itemId, modality: 'text', rank: 0, scores: { fused: 1 }, repeated: false, tree, keptNodeIds: kept, tokens: { whole: 100, kept: 10 }, ...extra } as TraceRetrievedItem;
}

function model(items: TraceRetrievedItem[], compressor: AskTrace['settings']['compressor'] = { name: 'canopy', items: 0.3, glimpse: 1 }): TraceModel {
  return new TraceModel({ settings: { compressor }, rounds: [{ round: 1, retrieved: items }], answer: { citations: [] } } as unknown as AskTrace);
}

describe('one status per region, with the deciding stage', () => {
  test('kept, kept whole, refined, dropped and inside: each its own code', () => {
    const tree = node('r', 'descend', 'child-ge-parent', 0.5, [
      node('s1', 'keep-whole', 'no-child-ge-parent', 0.6, [node('s1a', 'not-visited', 'ancestor-kept-whole', 0.4)]),
      node('p2', 'keep-whole', 'leaf', 0.55),
      node('s3', 'dropped-sibling', 'below-parent', 0.3, [node('s3a', 'not-visited', 'ancestor-dropped', 0.2)]),
    ]);
    const m = model([item('i', tree, ['s1', 'p2'])]);
    const code = (id: string) => decisionOf(m, m.ref(id)!).code;
    assert.deepEqual(['r', 's1', 's1a', 'p2', 's3', 's3a'].map(code), ['refined', 'whole', 'in kept', 'kept', 'dropped', 'in dropped']);
    assert.equal(decisionOf(m, m.ref('s3')!).stage, 'CANOPY projection');
  });

  test('a glimpse is not a keep, and the rank gate that dropped its item says so', () => {
    // An item outside the rank gate keeping its best leaf per token as a glimpse.
    const tree = node('g', 'descend', 'glimpse', 0.2, [node('g1', 'not-visited', 'ancestor-dropped', 0.1), node('g2', 'keep-whole', 'glimpse', 0.3)]);
    const m = model([item('gi', tree, ['g2'], { gate: { kept: false, why: 'outside the rank gate (rank 7 of 10)' } })]);
    const root = decisionOf(m, m.ref('g')!);
    assert.deepEqual([root.code, root.outcome, root.stage], ['gate', 'dropped', 'rank gate']);
    assert.match(root.why, /outside the rank gate \(rank 7 of 10\)/);
    const glimpse = decisionOf(m, m.ref('g2')!);
    assert.deepEqual([glimpse.code, glimpse.outcome], ['glimpse', 'kept']);
    assert.equal(decisionOf(m, m.ref('g1')!).code, 'in dropped');
  });

  test('the controller decides a PDF’s regions: a gate that kept the item is named as overridden, not as a second status', () => {
    const tree = node('pdf', 'dropped-by-controller', 'controller-not-activated', 0.634, [node('x', 'not-visited', 'controller-not-activated', 0.2)]);
    const m = model([item('pdf', tree, [], { gate: { kept: true, why: 'named by the question' }, controller: {} as TraceRetrievedItem['controller'] })]);
    const d = decisionOf(m, m.ref('pdf')!);
    assert.deepEqual([d.code, d.outcome, d.stage], ['controller', 'dropped', 'MAGE controller']);
    assert.match(d.overridden ?? '', /^the rank gate kept the item \(named by the question\), but .* the controller chose/);
  });

  test('why a kept 0.43 region beats a dropped 0.63 sibling: different stages decided them', () => {
    const tree = node('sec', 'descend', 'controller', 0.5, [node('kept', 'kept-by-controller', 'controller', 0.432), node('left', 'dropped-by-controller', 'controller-not-activated', 0.634)]);
    const m = model([item('doc', tree, ['kept'], { controller: {} as TraceRetrievedItem['controller'] })]);
    const kept = siblingNote(m, m.ref('kept')!)!;
    assert.match(kept, /^Kept at 0\.432 although its sibling paragraph “text of left” scores 0\.634: this region was kept by the MAGE controller/);
    assert.match(kept, /the sibling was left out by the MAGE controller \(its page was activated, but .*\); the controller chooses by page, element and budget, not by this score\.$/);
    assert.match(siblingNote(m, m.ref('left')!)!, /^Dropped at 0\.634 although its sibling paragraph “text of kept” scores only 0\.432/);
    // Siblings decided by score alone (the higher kept) need no note.
    const plain = model([item('p', node('p', 'descend', 'child-ge-parent', 0.5, [node('a', 'keep-whole', 'leaf', 0.7), node('b', 'dropped-sibling', 'below-parent', 0.3)]), ['a'])]);
    assert.equal(siblingNote(plain, plain.ref('a')!), undefined);
  });

  test('a sentence the critic names is found in the smallest kept region holding it', () => {
    const tree = node('r', 'descend', 'child-ge-parent', 0.5, [node('a', 'keep-whole', 'leaf', 0.7, [], 'The gauge peaked at 4.2 metres.\nIt rained.'), node('b', 'dropped-sibling', 'below-parent', 0.3, [], 'The gauge peaked at 4.2 metres.')]);
    const m = model([item('i', tree, ['a'])]);
    assert.equal(regionHolding(m, 'the gauge  peaked at 4.2')?.node.id, 'a', 'kept regions only, whitespace and case folded');
    assert.equal(regionHolding(m, 'not in any region'), undefined);
  });
});
