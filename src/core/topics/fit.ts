/**
 * Fitting and updating the topic model and metadata bank. `fitTopics` runs once at indexing
 * time over every chunk's vector (spherical k-means, c-TF-IDF labels, per-chunk top-M
 * distributions); `updateTopics` folds added and removed chunks into an existing bank by
 * nearest-centroid assignment and says when the model has drifted enough to be refitted, so an
 * incremental index update stays cheap.
 */
import { sphericalKMeans } from './kmeans';
import { labelTopics } from './labels';
import { quantize, TopicBank, type TopicFitStats, type TopicModel } from './bank';
import { dotRow, softmax, topIndices } from './vectorMath';

export interface TopicChunk {
  id: string;
  /** Unit-length vector from the index's encoder. */
  vector: Float32Array;
  /** The chunk's text, for labels. */
  text: string;
}

export interface FitTopicsOptions {
  /** K; default `chooseTopicCount(n)`. */
  k?: number;
  /** Topics kept per chunk (M of the bank); default 10. */
  topicsPerChunk?: number;
  /** Softmax temperature over chunk–centroid cosines; default 0.05. */
  temperature?: number;
  seed?: number;
  maxIterations?: number;
  encoderId?: string;
}

export const topicDefaults = {
  topicsPerChunk: 10,
  temperature: 0.05,
  seed: 1,
  driftThreshold: 0.2,
  similarityDrop: 0.05,
} as const;

/** K ≈ √N clamped to [8, 100] (design §4: 100 for large corpora, fewer for small ones), never above N. */
export function chooseTopicCount(n: number, min = 8, max = 100): number {
  return Math.max(1, Math.min(n, Math.max(min, Math.min(max, Math.round(Math.sqrt(n))))));
}

/** A chunk's topic distribution: softmax(cos(v, centroid) / temperature), top `m` kept, renormalised. */
export function chunkDistribution(vector: ArrayLike<number>, model: TopicModel, m: number): Array<{ topic: number; weight: number }> {
  const sims = new Float64Array(model.k);
  for (let c = 0; c < model.k; c++) sims[c] = dotRow(vector, model.centroids, c, model.dim);
  const p = softmax(sims, model.temperature);
  const top = topIndices(p, m);
  const sum = top.reduce((s, t) => s + (p[t] as number), 0);
  return top.map((t) => ({ topic: t, weight: (p[t] as number) / sum }));
}

export function fitTopics(chunks: readonly TopicChunk[], options: FitTopicsOptions = {}): TopicBank {
  if (chunks.length === 0) throw new Error('fitTopics needs at least one chunk');
  const dim = chunks[0]!.vector.length;
  const n = chunks.length;
  const flat = new Float32Array(n * dim);
  chunks.forEach((c, i) => flat.set(c.vector, i * dim));
  const k = Math.min(options.k ?? chooseTopicCount(n), n);
  const seed = options.seed ?? topicDefaults.seed;
  const km = sphericalKMeans(flat, dim, { k, seed, ...(options.maxIterations ? { maxIterations: options.maxIterations } : {}) });
  const { terms, labels } = labelTopics(
    chunks.map((c) => c.text),
    km.assignments,
    km.k,
  );
  const model: TopicModel = {
    k: km.k,
    dim,
    centroids: km.centroids,
    labels,
    terms,
    temperature: options.temperature ?? topicDefaults.temperature,
    seed,
    encoderId: options.encoderId ?? 'unknown',
  };
  let simSum = 0;
  for (const s of km.similarity) simSum += s;
  const stats: TopicFitStats = { fittedOn: n, meanSimilarity: simSum / n, changedSinceFit: 0, addedSimilaritySum: 0, added: 0 };
  return buildBank(
    model,
    chunks.map((c) => ({ id: c.id, vector: c.vector })),
    options.topicsPerChunk ?? topicDefaults.topicsPerChunk,
    stats,
  );
}

/** Bank entries for `entries` under an existing model. */
export function buildBank(model: TopicModel, entries: ReadonlyArray<{ id: string; vector: ArrayLike<number> }>, m: number, stats: TopicFitStats): TopicBank {
  const n = entries.length;
  const mm = Math.min(m, model.k);
  const topicIds = new Uint16Array(n * mm);
  const topicWeights = new Float32Array(n * mm);
  const vectors = new Int8Array(n * model.dim);
  const scales = new Float32Array(n);
  entries.forEach((e, i) => {
    chunkDistribution(e.vector, model, mm).forEach((d, t) => {
      topicIds[i * mm + t] = d.topic;
      topicWeights[i * mm + t] = d.weight;
    });
    const { q, scale } = quantize(e.vector);
    vectors.set(q, i * model.dim);
    scales[i] = scale;
  });
  return new TopicBank(model, entries.map((e) => e.id), mm, topicIds, topicWeights, vectors, scales, stats);
}

export interface TopicUpdate {
  bank: TopicBank;
  /** Share of the fitted corpus changed since the fit. */
  drift: number;
  /** Mean nearest-centroid cosine of chunks added since the fit (NaN when none). */
  addedSimilarity: number;
  /** True when the caller should refit (fitTopics over all chunks) — drift or poor fit of new chunks. */
  needsRefit: boolean;
}

/**
 * Adds (or replaces) and removes chunks without refitting: new chunks get distributions under
 * the current centroids. Refit is advised when the changed share passes `driftThreshold`
 * (default 0.2) or new chunks fit the centroids worse than the fitted ones by more than
 * `similarityDrop` (default 0.05) — new subject matter the topics do not cover.
 */
export function updateTopics(
  bank: TopicBank,
  changes: { upsert: ReadonlyArray<{ id: string; vector: Float32Array }>; remove: readonly string[] },
  options: { driftThreshold?: number; similarityDrop?: number } = {},
): TopicUpdate {
  const gone = new Set([...changes.remove, ...changes.upsert.map((u) => u.id)]);
  const kept: Array<{ id: string; vector: ArrayLike<number> }> = [];
  for (let i = 0; i < bank.size; i++) if (!gone.has(bank.ids[i]!)) kept.push({ id: bank.ids[i]!, vector: bank.vector(i) });
  const removed = bank.size - kept.length;
  let simSum = bank.stats.addedSimilaritySum;
  for (const u of changes.upsert) {
    let best = -Infinity;
    for (let c = 0; c < bank.model.k; c++) best = Math.max(best, dotRow(u.vector, bank.model.centroids, c, bank.model.dim));
    simSum += best;
  }
  const stats: TopicFitStats = {
    fittedOn: bank.stats.fittedOn,
    meanSimilarity: bank.stats.meanSimilarity,
    // A replaced chunk counts once (as changed), a new one once, a removed one once.
    changedSinceFit: bank.stats.changedSinceFit + changes.upsert.length + Math.max(0, removed - changes.upsert.filter((u) => bank.indexOf(u.id) !== undefined).length),
    addedSimilaritySum: simSum,
    added: bank.stats.added + changes.upsert.length,
  };
  // Re-quantising kept vectors is lossless enough (int8 of an int8-dequantised vector is the same grid).
  const next = buildBank(bank.model, [...kept, ...changes.upsert], bank.m, stats);
  const drift = stats.changedSinceFit / Math.max(1, stats.fittedOn);
  const addedSimilarity = stats.added > 0 ? stats.addedSimilaritySum / stats.added : Number.NaN;
  const poorFit = stats.added > 0 && addedSimilarity < stats.meanSimilarity - (options.similarityDrop ?? topicDefaults.similarityDrop);
  return { bank: next, drift, addedSimilarity, needsRefit: drift > (options.driftThreshold ?? topicDefaults.driftThreshold) || poorFit };
}

/** A chunk with its leaves (sentences, rows): the leaf-mixture fit's input. */
export interface LeafChunk extends TopicChunk {
  /** Unit-length vectors of the chunk's leaves, and their texts (for labels). */
  leaves: ReadonlyArray<{ vector: Float32Array; text: string }>;
}

/**
 * Topics from the chunks' leaves (docs/topics.md, "Leaf mixtures"): k-means over every leaf
 * vector (K by the leaf count), labels from the leaves' texts, and each chunk's distribution the
 * mean of its leaves' distributions (top M kept) — so a coarse chunk that holds several subjects
 * keeps each of them, where its own mean vector blurs them into one. A chunk without leaves falls
 * back to its own vector's distribution. The bank's vectors stay the chunks' own.
 */
export function fitLeafTopics(chunks: readonly LeafChunk[], options: FitTopicsOptions = {}): TopicBank {
  const leaves = chunks.flatMap((c) => c.leaves);
  if (leaves.length === 0) return fitTopics(chunks, options);
  const dim = leaves[0]!.vector.length;
  const flat = new Float32Array(leaves.length * dim);
  leaves.forEach((l, i) => flat.set(l.vector, i * dim));
  const k = Math.min(options.k ?? chooseTopicCount(leaves.length), leaves.length);
  const seed = options.seed ?? topicDefaults.seed;
  const km = sphericalKMeans(flat, dim, { k, seed, ...(options.maxIterations ? { maxIterations: options.maxIterations } : {}) });
  const { terms, labels } = labelTopics(
    leaves.map((l) => l.text),
    km.assignments,
    km.k,
  );
  const model: TopicModel = { k: km.k, dim, centroids: km.centroids, labels, terms, temperature: options.temperature ?? topicDefaults.temperature, seed, encoderId: options.encoderId ?? 'unknown' };
  const m = Math.min(options.topicsPerChunk ?? topicDefaults.topicsPerChunk, model.k);
  const n = chunks.length;
  const topicIds = new Uint16Array(n * m);
  const topicWeights = new Float32Array(n * m);
  const vectors = new Int8Array(n * dim);
  const scales = new Float32Array(n);
  let simSum = 0;
  for (const s of km.similarity) simSum += s;
  chunks.forEach((c, i) => {
    const mix = new Float64Array(model.k);
    const own = c.leaves.length > 0 ? c.leaves.map((l) => l.vector) : [c.vector];
    for (const v of own) for (const d of chunkDistribution(v, model, model.k)) mix[d.topic] = (mix[d.topic] as number) + d.weight / own.length;
    const top = topIndices(mix, m);
    const sum = top.reduce((s, t) => s + (mix[t] as number), 0) || 1;
    top.forEach((t, j) => {
      topicIds[i * m + j] = t;
      topicWeights[i * m + j] = (mix[t] as number) / sum;
    });
    const { q, scale } = quantize(c.vector);
    vectors.set(q, i * dim);
    scales[i] = scale;
  });
  const stats: TopicFitStats = { fittedOn: n, meanSimilarity: simSum / Math.max(1, leaves.length), changedSinceFit: 0, addedSimilaritySum: 0, added: 0 };
  return new TopicBank(model, chunks.map((c) => c.id), m, topicIds, topicWeights, vectors, scales, stats);
}
