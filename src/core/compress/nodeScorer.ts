/**
 * Scores every node of an item's tree against a query: cosine between the frozen query vector
 * and the node vector (src/core/encode/nodeVectors.ts) after the (optional) trainable adapter
 * (design §3).
 */
import { l2NormalizeInPlace } from '../encode/encoder';

/** A map applied to node vectors only (the query side stays frozen). */
export type NodeAdapter = (v: Float32Array) => Float32Array;

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Cosine scores of every node against the query vector (both unit-length, adapter re-normalised). */
export function scoreNodes(query: Float32Array, vectors: Map<string, Float32Array>, adapter?: NodeAdapter): Map<string, number> {
  const scores = new Map<string, number>();
  for (const [id, v] of vectors) {
    const w = adapter ? l2NormalizeInPlace(Float32Array.from(adapter(v))) : v;
    scores.set(id, dot(query, w));
  }
  return scores;
}
