/**
 * A tiny, deterministic feature-hashing embedder for tests of logic that does not depend on
 * semantic quality (incremental indexing, crash safety, the round loop). Each content term
 * (same processing as BM25) adds ±1 to one of `dim` buckets; vectors are unit length. Tests of
 * the real encoder live in test/unit/encode.
 */
import { createHash } from 'node:crypto';
import { contentTerms } from '../../src/core/text/terms';

export function hashEmbed(text: string, dim = 256): Float32Array {
  const v = new Float32Array(dim);
  for (const term of contentTerms(text)) {
    const h = createHash('md5').update(term).digest();
    const bucket = h.readUInt32LE(0) % dim;
    v[bucket]! += h[4]! & 1 ? 1 : -1;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm === 0) v[0] = 1;
  else for (let i = 0; i < dim; i++) v[i]! /= Math.sqrt(norm);
  return v;
}

export function hashEmbeddings(dim = 256) {
  let calls = 0;
  let texts = 0;
  return {
    id: `hash-${dim}`,
    get calls() {
      return calls;
    },
    get texts() {
      return texts;
    },
    embed: async (batch: string[]) => {
      calls++;
      texts += batch.length;
      return batch.map((t) => hashEmbed(t, dim));
    },
    persist: async () => undefined,
  };
}
