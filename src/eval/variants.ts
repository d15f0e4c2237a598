/**
 * Variants measured in the harness (never the product's defaults).
 *
 * Node vectors. The product encodes the leaves and tables and derives every other region's
 * vector from its children's (src/core/encode/nodeVectors.ts). Measured against it:
 *  - `groups=encoded`: every node, groups included, encoded from its own text. Means of several
 *    sentence vectors have a higher cosine with a query than a typical single sentence does, so a
 *    mean-vector group tends to beat its children and the rule stops there; an encoded group is
 *    judged like any other region of that text.
 *  - `nodes=text`: every region encoded from its own whole text (window by window, the encoder's
 *    normalised mean of 128-piece windows), groups the normalised sum of their children — the
 *    recipe before leaf-derived vectors, which encoded a document's text once per level.
 *  - `nodes=prefix`: leaves from their text, every other region from its first window only
 *    (the longest run of whole words within the encoder's window), groups as above.
 *  - `nodes=children`: only leaves encoded; tables derived from their rows like every other
 *    region.
 */
import { l2NormalizeInPlace, normalizeText, type Encoder } from '../core/encode/encoder';
import { deriveInnerVectors, encodedText, type EmbedTexts } from '../core/encode/nodeVectors';
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

/** Real regions from `textOf` (encoded), groups the normalised sum of their direct children. */
async function encodedRegions(root: RegionNode, embed: EmbedTexts, textOf: (n: RegionNode) => string, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const real: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    if (n.kind !== 'group') real.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  const vectors = await embed(real.map(textOf), signal);
  const out = new Map<string, Float32Array>();
  real.forEach((n, i) => out.set(n.id, vectors[i]!));
  const fill = (n: RegionNode): Float32Array => {
    n.children.forEach(fill);
    const have = out.get(n.id);
    if (have) return have;
    const sum = new Float32Array(out.get(n.children[0]!.id)!.length);
    for (const c of n.children) {
      const v = out.get(c.id)!;
      for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + v[i]!;
    }
    l2NormalizeInPlace(sum);
    out.set(n.id, sum);
    return sum;
  };
  fill(root);
  return out;
}

/** `nodes=text`: every region encoded from its own whole text (the recipe before leaf-derived vectors). */
export function nodeVectorsFromText(root: RegionNode, embed: EmbedTexts, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  return encodedRegions(root, embed, encodedText, signal);
}

/** The longest run of whole words at the start of `text` that fits in one encoder window. */
export function prefixWindow(encoder: Pick<Encoder, 'maxPieces' | 'countPieces'>, text: string): string {
  const count = encoder.countPieces;
  if (!count) throw new Error('the prefix-window variant needs an encoder that counts pieces');
  const norm = normalizeText(text);
  if (count.call(encoder, norm) <= encoder.maxPieces) return text;
  const words = norm.split(' ');
  let lo = 1;
  let hi = words.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count.call(encoder, words.slice(0, mid).join(' ')) <= encoder.maxPieces) lo = mid;
    else hi = mid - 1;
  }
  return words.slice(0, lo).join(' ');
}

/**
 * `nodes=children`: only leaves encoded, every other region — tables too — the normalised sum
 * of its children's vectors (groups looked through; groups the sum of their direct children).
 */
export async function nodeVectorsChildren(root: RegionNode, embed: EmbedTexts, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  const leaves: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    if (n.children.length === 0) leaves.push(n);
    n.children.forEach(walk);
  };
  walk(root);
  const vectors = await embed(leaves.map(encodedText), signal);
  const out = new Map<string, Float32Array>();
  leaves.forEach((n, i) => out.set(n.id, vectors[i]!));
  deriveInnerVectors(root, out);
  return out;
}

/** `nodes=prefix`: leaves from their text, other regions from their first window only. */
export function nodeVectorsPrefix(root: RegionNode, embed: EmbedTexts, encoder: Pick<Encoder, 'maxPieces' | 'countPieces'>, signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  return encodedRegions(root, embed, (n) => (n.children.length === 0 ? encodedText(n) : prefixWindow(encoder, encodedText(n))), signal);
}
