// Leaf-mixture topics (src/core/topics/fit.ts fitLeafTopics): topics fitted over the chunks'
// leaves, each chunk's distribution the mean of its leaves' — a chunk holding two subjects keeps
// both in proportion, where the distribution of its own (mean) vector keeps mostly one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitLeafTopics, fitTopics, type LeafChunk } from '../../../src/core/topics/fit';

const unit = (xs: number[]) => {
  const n = Math.hypot(...xs);
  return Float32Array.from(xs.map((x) => x / n));
};
// Three subjects, each a direction with a little seeded jitter per leaf.
let s = 7;
const jitter = () => {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  return (s / 2 ** 32 - 0.5) * 0.05;
};
const subject = (d: number) => unit([0, 1, 2, 3].map((j) => (j === d ? 1 : 0) + jitter()));
const mean = (vs: Float32Array[]) => unit([0, 1, 2, 3].map((j) => vs.reduce((a, v) => a + v[j]!, 0)));

function chunk(id: string, subjects: number[]): LeafChunk {
  const leaves = subjects.map((d, i) => ({ vector: subject(d), text: `subject${d} leaf ${i}` }));
  return { id, vector: mean(leaves.map((l) => l.vector)), text: leaves.map((l) => l.text).join(' '), leaves };
}

describe('leaf-mixture topics', () => {
  const chunks = [chunk('mixed', [0, 0, 0, 1]), chunk('two', [1, 1, 1]), chunk('three', [2, 2, 2]), chunk('zero', [0, 0])];

  it('keeps both subjects of a mixed chunk in proportion to its leaves', () => {
    const bank = fitLeafTopics(chunks, { k: 3, seed: 1 });
    assert.equal(bank.model.k, 3);
    assert.equal(bank.size, 4);
    const topicOf = (id: string) => bank.distribution(bank.indexOf(id)!)[0]!.topic;
    const mixed = bank.distribution(bank.indexOf('mixed')!);
    const weight = (t: number) => mixed.find((d) => d.topic === t)?.weight ?? 0;
    assert.ok(Math.abs(weight(topicOf('zero')) - 0.75) < 0.05, JSON.stringify(mixed));
    assert.ok(Math.abs(weight(topicOf('two')) - 0.25) < 0.05, JSON.stringify(mixed));
    // Labels come from the leaves' own texts.
    assert.match(bank.model.labels[topicOf('three')]!, /subject2/);
    // The bank's vectors are the chunks' own.
    const v = bank.vector(bank.indexOf('mixed')!);
    const own = chunks[0]!.vector;
    assert.ok([0, 1, 2, 3].every((j) => Math.abs(v[j]! - own[j]!) < 0.02));
  });

  it('where the chunk-vector fit gives the minor subject of a mixed chunk (almost) nothing', () => {
    const bank = fitTopics(chunks, { k: 3, seed: 1 });
    const topicOf = (id: string) => bank.distribution(bank.indexOf(id)!)[0]!.topic;
    const mixed = bank.distribution(bank.indexOf('mixed')!);
    assert.ok((mixed.find((d) => d.topic === topicOf('two'))?.weight ?? 0) < 0.1, JSON.stringify(mixed));
  });
});
