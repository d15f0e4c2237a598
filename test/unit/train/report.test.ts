// The before/after report's definitions pinned on a hand-built item with chosen vectors:
// which decisions count, gold recall, evidence tokens and pruned items.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPreferences } from '../../../src/core/annotate/preferences';
import type { TokenCounter } from '../../../src/core/compress/tokens';
import type { Item, RegionNode } from '../../../src/contracts/region';
import { beforeAfter, evaluateSide, type PreparedQuestion } from '../../../src/core/train/report';

const words: TokenCounter = { name: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length };

function leaf(id: string, s: number, e: number, text: string): RegionNode {
  return { id, kind: 'sentence', modality: 'text', text, anchor: { file: 'f.md', charStart: s, charEnd: e }, children: [] };
}
// root → a (gold leaf), b (distractor leaf)
const a = leaf('a', 0, 10, 'gold one two');
const b = leaf('b', 11, 20, 'other three four five');
const root: RegionNode = { id: 'root', kind: 'paragraph', modality: 'text', text: 'gold one two other three four five', anchor: { file: 'f.md', charStart: 0, charEnd: 20 }, children: [a, b] };
const item: Item = { id: 'f.md#0', file: 'f.md', title: 'f', modality: 'text', root };
const v = (x: number, y: number) => {
  const n = Math.hypot(x, y);
  return Float32Array.from([x / n, y / n]);
};

function question(vectors: Record<string, Float32Array>): PreparedQuestion {
  const gold = [{ file: 'f.md', charStart: 0, charEnd: 10 }];
  return { key: 'q', question: 'q?', query: v(1, 0), gold, candidates: [{ item, vectors: new Map(Object.entries(vectors)) }], pairs: buildPreferences([item], gold).pairs };
}

describe('report', () => {
  it('counts a right refinement, full recall, fewer tokens and a pruned item', () => {
    const m = evaluateSide([question({ root: v(1, 1), a: v(1, 0.1), b: v(0, 1) })], words);
    assert.deepEqual(
      { acc: m.decisionAccuracy, decisions: m.decisions, recall: m.goldRecall, tokens: m.evidenceTokens, whole: m.wholeTokens, pruned: m.prunedItemShare },
      { acc: 1, decisions: 1, recall: 1, tokens: 3, whole: 7, pruned: 1 },
    );
  });

  it('counts a wrong keep-whole decision, still recalling gold but at full tokens', () => {
    const m = evaluateSide([question({ root: v(1, 0.2), a: v(1, 1), b: v(0, 1) })], words);
    assert.deepEqual([m.decisionAccuracy, m.decisions, m.goldRecall, m.evidenceTokens, m.prunedItemShare], [0, 1, 1, 7, 0]);
  });

  it('compares an adapter with none', () => {
    // The adapter swaps coordinates: now b wins, a is dropped.
    const q = question({ root: v(1, 1), a: v(1, 0.1), b: v(0, 1) });
    const r = beforeAfter([q], words, (x) => Float32Array.from([x[1]!, x[0]!]));
    assert.equal(r.before.goldRecall, 1);
    assert.equal(r.after.goldRecall, 0);
    assert.equal(r.delta.goldRecall, -1);
    assert.equal(r.before.decisionAccuracy - r.after.decisionAccuracy, 1);
  });
});
