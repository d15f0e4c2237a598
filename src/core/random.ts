/**
 * Seeded randomness for everything that must be reproducible (bootstrap resamples, training
 * splits and initialisation, k-means seeding, benchmark inputs): Math.random is not seedable.
 */

/** mulberry32: a small, fast, seedable PRNG with uniform output in [0, 1); the same seed gives the same stream everywhere. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
