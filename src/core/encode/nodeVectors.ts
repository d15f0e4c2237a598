/**
 * Vectors for every node of an item's tree — the one definition that indexing, asking, the
 * controller, the document graph, replay and training all use.
 *
 * - A leaf (sentence, row, heading, code chunk, image, segment…) is encoded from its text (a row
 *   with its table header), through the embedding cache, so each is encoded once per model.
 * - A table is encoded from its own text too. Its rows all repeat the table's header, so their
 *   mean is close to every row and CANOPY would stop at the table and drop the rows it needs
 *   (TAT-QA, FeTaQA: 9.5 and 24.7 points of gold recall; docs/evaluation.md, "Node vectors").
 * - Every other region with children (paragraph, list, section, page, document…) is the
 *   normalised sum of its children's vectors, a `group` child counted as the regions it groups:
 *   a paragraph is the normalised mean of its sentences, a page of its headings, blocks and
 *   tables. Grouping therefore never changes a real region's vector.
 * - A `group` node (balanced B-ary grouping) is the normalised sum of its direct children's
 *   vectors (replay relies on this: a group's score is Σ child scores / ‖Σ child vectors‖).
 *
 * So a document's prose is encoded once, at its sentences, whatever the depth of its hierarchy
 * (before, every paragraph, section and page re-encoded its whole text); a region's vector
 * depends only on its own subtree, so a sub-region (a controller element) gets the same vector as
 * inside its item.
 */
import type { RegionNode } from '../../contracts/region';
import { l2NormalizeInPlace } from './encoder';

/** Text → unit vectors, in order; typically the embedding cache in front of the encoder. */
export type EmbedTexts = (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;

/** Names the recipe below; part of what makes stored vectors comparable (pool caches, PARSER_VERSION). */
export const NODE_VECTOR_RECIPE = 'leaves+tables-sum1';

/** The text a node is encoded from: a row carries its table header. */
export function encodedText(n: RegionNode): string {
  return n.header ? `${n.header}\n${n.text}` : n.text;
}

/** Whether a node is encoded from its own text (a leaf or a table) rather than derived from its children. */
export function isEncoded(n: RegionNode): boolean {
  return n.children.length === 0 || n.kind === 'table';
}

/** The nodes of a tree whose text reaches the encoder (leaves and tables), in document order. */
export function encodedNodes(root: RegionNode): RegionNode[] {
  const out: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    if (isEncoded(n)) out.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  return out;
}

/**
 * Fills in the vector of every node that `out` (mutated) does not hold yet from its children's:
 * groups from their direct children, other regions from their children with groups looked
 * through. `out` must hold every leaf.
 */
export function deriveInnerVectors(root: RegionNode, out: Map<string, Float32Array>): void {
  const sumInto = (acc: Float32Array, v: Float32Array) => {
    for (let i = 0; i < acc.length; i++) acc[i] = acc[i]! + v[i]!;
  };
  const fill = (n: RegionNode): Float32Array => {
    if (n.children.length === 0) return out.get(n.id)!;
    const kids = n.children.map(fill);
    const have = out.get(n.id);
    if (have) return have;
    const sum = new Float32Array(kids[0]!.length);
    if (n.kind === 'group') kids.forEach((v) => sumInto(sum, v));
    else {
      // Real children only: a group child contributes the regions it groups, not its own mean.
      const members = (c: RegionNode): RegionNode[] => (c.kind === 'group' ? c.children.flatMap(members) : [c]);
      for (const m of n.children.flatMap(members)) sumInto(sum, out.get(m.id)!);
    }
    l2NormalizeInPlace(sum);
    out.set(n.id, sum);
    return sum;
  };
  fill(root);
}

/** Vectors for every node of a tree, keyed by node id (before any adapter). */
export async function nodeVectors(root: RegionNode, embed: EmbedTexts, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const encoded = encodedNodes(root);
  const vectors = await embed(encoded.map(encodedText), signal);
  const out = new Map<string, Float32Array>();
  encoded.forEach((n, i) => out.set(n.id, vectors[i]!));
  deriveInnerVectors(root, out);
  return out;
}

/** Texts sent to the encoder per call by `nodeVectorsOf`, so progress can be reported between calls. */
const TEXTS_PER_CALL = 256;

/**
 * Vectors for every node of several trees (their leaves and tables encoded in calls of a few
 * hundred, with `onProgress(texts done, texts in all)` after each).
 */
export async function nodeVectorsOf(
  roots: readonly RegionNode[],
  embed: EmbedTexts,
  signal?: AbortSignal,
  onProgress?: (done: number, total: number) => void,
): Promise<Map<string, Float32Array>> {
  const encoded = roots.flatMap(encodedNodes);
  const out = new Map<string, Float32Array>();
  for (let at = 0; at < encoded.length; at += TEXTS_PER_CALL) {
    const batch = encoded.slice(at, at + TEXTS_PER_CALL);
    const vectors = await embed(batch.map(encodedText), signal);
    batch.forEach((n, i) => out.set(n.id, vectors[i]!));
    onProgress?.(at + batch.length, encoded.length);
  }
  for (const r of roots) deriveInnerVectors(r, out);
  return out;
}
