/**
 * Vectors for every node of an item's tree.
 *
 * Regions the document itself defines (sections, paragraphs, sentences, rows…) are encoded from
 * their text — through the embedding cache, so each is encoded once per model; `group` nodes,
 * which balanced B-ary grouping inserts, are the normalised mean of their children's vectors.
 * Groups therefore never cost an encoder call, and a replay with another branching factor
 * re-groups the tree without re-embedding anything.
 */
import type { RegionNode } from '../../contracts/region';
import { l2NormalizeInPlace } from './encoder';

/** Text → unit vectors, in order; typically the embedding cache in front of the encoder. */
export type EmbedTexts = (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;

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
