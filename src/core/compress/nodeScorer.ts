/**
 * Scores every node of an item's tree against a query: cosine between the frozen query vector
 * and the node vector after the (optional) trainable adapter (design §3).
 *
 * Node vectors: regions the document itself defines (sections, paragraphs, sentences, rows…)
 * are encoded from their text — through the embedding cache, so each is encoded once per model;
 * `group` nodes, which balanced B-ary grouping inserts, are the normalised mean of their
 * children's vectors. Groups therefore never cost an encoder call, and a replay with another
 * branching factor re-groups the tree without re-embedding anything.
 */
import { l2NormalizeInPlace } from '../encode/encoder';
import type { RegionNode } from '../model/region';

/** Text → unit vectors, in order; typically the embedding cache in front of the encoder. */
export type EmbedTexts = (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;

/** A map applied to node vectors only (the query side stays frozen). */
export type NodeAdapter = (v: Float32Array) => Float32Array;

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Vectors for every node of a tree, keyed by node id (before any adapter). */
export async function nodeVectors(root: RegionNode, embed: EmbedTexts, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const encoded: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    if (n.kind !== 'group') encoded.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  const vectors = await embed(
    encoded.map((n) => (n.header ? `${n.header}\n${n.text}` : n.text)),
    signal,
  );
  const out = new Map<string, Float32Array>();
  encoded.forEach((n, i) => out.set(n.id, vectors[i]!));
  const fillGroups = (n: RegionNode): Float32Array => {
    n.children.forEach(fillGroups);
    const have = out.get(n.id);
    if (have) return have;
    const first = out.get(n.children[0]!.id)!;
    const mean = new Float32Array(first.length);
    for (const c of n.children) {
      const v = out.get(c.id)!;
      for (let i = 0; i < mean.length; i++) mean[i] = mean[i]! + v[i]!;
    }
    l2NormalizeInPlace(mean);
    out.set(n.id, mean);
    return mean;
  };
  fillGroups(root);
  return out;
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
