/**
 * A node-vector variant measured in the harness (never the product's default): group nodes
 * scored from their own encoded text instead of the normalised mean of their children's vectors
 * (`nodeVectors.ts`). Means of several sentence vectors have a higher cosine with a query than a
 * typical single sentence does, so a mean-vector group tends to beat its children and the rule
 * stops there; an encoded group is judged like any other region of that text.
 */
import type { EmbedTexts } from '../core/encode/nodeVectors';
import type { RegionNode } from '../contracts/region';

export async function nodeVectorsEncodedGroups(root: RegionNode, embed: EmbedTexts, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const nodes: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    nodes.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  const vectors = await embed(
    nodes.map((n) => (n.header ? `${n.header}\n${n.text}` : n.text)),
    signal,
  );
  return new Map(nodes.map((n, i) => [n.id, vectors[i]!]));
}
