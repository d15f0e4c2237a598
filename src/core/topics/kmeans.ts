/**
 * Seeded spherical k-means (cosine k-means) over unit-length chunk embeddings, with k-means++
 * initialisation. Centroids are re-normalised means, so topics live in the encoder's own space:
 * that is what lets the compass compare a query embedding with a topic (design §4). Plain
 * Lloyd iterations: at a few thousand to tens of thousands of chunks and K ≤ 100 a fit is
 * seconds on one core, done once at indexing time.
 */
import { seededRandom } from '../random';
import { dotRow, normalizeInPlace } from './vectorMath';

export interface KMeansOptions {
  k: number;
  seed?: number;
  /** Lloyd iterations at most; default 25. */
  maxIterations?: number;
  /** Stop when fewer than this share of points change cluster; default 0.001. */
  tolerance?: number;
}

export interface KMeansResult {
  /** k × dim, row-major, unit rows. */
  centroids: Float32Array;
  k: number;
  dim: number;
  /** Cluster of each input vector. */
  assignments: Int32Array;
  /** Cosine of each input vector to its centroid. */
  similarity: Float32Array;
  iterations: number;
}

/**
 * Clusters `vectors` (n × dim, row-major, unit rows) into `k` clusters. Deterministic for a
 * given seed. When k ≥ n every point is its own cluster (and the spare centroids copy points).
 */
export function sphericalKMeans(vectors: Float32Array, dim: number, options: KMeansOptions): KMeansResult {
  const n = Math.floor(vectors.length / dim);
  if (n === 0) throw new Error('k-means needs at least one vector');
  const k = Math.max(1, Math.min(options.k, n));
  const random = seededRandom(options.seed ?? 1);
  const centroids = initPlusPlus(vectors, n, dim, k, random);
  const assignments = new Int32Array(n).fill(-1);
  const similarity = new Float32Array(n);
  const maxIterations = options.maxIterations ?? 25;
  const tolerance = options.tolerance ?? 0.001;
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const [best, sim] = nearest(vectors.subarray(i * dim, (i + 1) * dim), centroids, k, dim);
      if (assignments[i] !== best) changed++;
      assignments[i] = best;
      similarity[i] = sim;
    }
    // Update: mean direction of each cluster. An emptied cluster takes the point its centroid
    // fits worst, so K stays K (otherwise a bad init silently loses topics).
    const sums = new Float64Array(k * dim);
    const counts = new Int32Array(k);
    for (let i = 0; i < n; i++) {
      const c = assignments[i] as number;
      counts[c] = (counts[c] as number) + 1;
      const off = i * dim;
      const coff = c * dim;
      for (let j = 0; j < dim; j++) sums[coff + j] = (sums[coff + j] as number) + (vectors[off + j] as number);
    }
    for (let c = 0; c < k; c++) {
      const row = centroids.subarray(c * dim, (c + 1) * dim);
      if (counts[c] === 0) {
        let worst = 0;
        for (let i = 1; i < n; i++) if ((similarity[i] as number) < (similarity[worst] as number)) worst = i;
        row.set(vectors.subarray(worst * dim, (worst + 1) * dim));
        similarity[worst] = 1;
        continue;
      }
      for (let j = 0; j < dim; j++) row[j] = sums[c * dim + j] as number;
      normalizeInPlace(row);
    }
    if (iterations > 0 && changed / n < tolerance) {
      iterations++;
      break;
    }
  }
  // Final assignment against the final centroids.
  for (let i = 0; i < n; i++) {
    const [best, sim] = nearest(vectors.subarray(i * dim, (i + 1) * dim), centroids, k, dim);
    assignments[i] = best;
    similarity[i] = sim;
  }
  return { centroids, k, dim, assignments, similarity, iterations };
}

/** The centroid with the highest cosine to `v`, and that cosine. */
export function nearest(v: ArrayLike<number>, centroids: Float32Array, k: number, dim: number): [number, number] {
  let best = 0;
  let bestSim = -Infinity;
  for (let c = 0; c < k; c++) {
    const s = dotRow(v, centroids, c, dim);
    if (s > bestSim) {
      bestSim = s;
      best = c;
    }
  }
  return [best, bestSim];
}

/** k-means++ with cosine distance 1 − cos: spreads the initial centroids over the data. */
function initPlusPlus(vectors: Float32Array, n: number, dim: number, k: number, random: () => number): Float32Array {
  const centroids = new Float32Array(k * dim);
  const first = Math.floor(random() * n);
  centroids.set(vectors.subarray(first * dim, (first + 1) * dim), 0);
  const dist = new Float64Array(n);
  for (let i = 0; i < n; i++) dist[i] = Math.max(0, 1 - dotRow(vectors.subarray(i * dim, (i + 1) * dim), centroids, 0, dim));
  for (let c = 1; c < k; c++) {
    let total = 0;
    for (let i = 0; i < n; i++) total += (dist[i] as number) ** 2;
    let pick = n - 1;
    if (total > 0) {
      let r = random() * total;
      for (let i = 0; i < n; i++) {
        r -= (dist[i] as number) ** 2;
        if (r <= 0) {
          pick = i;
          break;
        }
      }
    } else {
      pick = Math.floor(random() * n);
    }
    centroids.set(vectors.subarray(pick * dim, (pick + 1) * dim), c * dim);
    for (let i = 0; i < n; i++) {
      const d = Math.max(0, 1 - dotRow(vectors.subarray(i * dim, (i + 1) * dim), centroids, c, dim));
      if (d < (dist[i] as number)) dist[i] = d;
    }
  }
  return centroids;
}
