// Topic compass: k-means, labels, the metadata bank, selection/abstraction, scorer training and
// the re-ranking retriever with its trace. Synthetic vectors only: no model, no /work/shared.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Item } from '../../../src/contracts/region';
import type { Retrieval, Retriever } from '../../../src/core/retrieve/retriever';
import { TopicBank } from '../../../src/core/topics/bank';
import { baseFeatureCount, candidateFeatures, featureNames, selectQueryTopics, defaultCompassOptions } from '../../../src/core/topics/compass';
import { chooseTopicCount, fitTopics, updateTopics, type TopicChunk } from '../../../src/core/topics/fit';
import { sphericalKMeans } from '../../../src/core/topics/kmeans';
import { labelTopics } from '../../../src/core/topics/labels';
import { rememberLastQuery, TopicCompassRetriever } from '../../../src/core/topics/retriever';
import { scorerGroups, splitByQuery, syntheticQueries, trainTopicScorer, type LabelledCandidates } from '../../../src/core/topics/training';
import { seededRandom } from '../../../src/core/random';
import { normalizeInPlace, topIndices } from '../../../src/core/topics/vectorMath';

const DIM = 16;

/** `clusters` well-separated directions, `perCluster` noisy unit vectors around each. */
function clustered(clusters: number, perCluster: number, seed = 7, noise = 0.15): { vectors: Float32Array[]; truth: number[] } {
  const random = seededRandom(seed);
  const centres = Array.from({ length: clusters }, (_, c) => {
    const v = new Float32Array(DIM);
    v[c % DIM] = 1;
    v[(c + 5) % DIM] = 0.3;
    return normalizeInPlace(v);
  });
  const vectors: Float32Array[] = [];
  const truth: number[] = [];
  for (let c = 0; c < clusters; c++)
    for (let i = 0; i < perCluster; i++) {
      const v = new Float32Array(DIM);
      for (let j = 0; j < DIM; j++) v[j] = (centres[c]![j] as number) + (random() * 2 - 1) * noise;
      vectors.push(normalizeInPlace(v));
      truth.push(c);
    }
  return { vectors, truth };
}

const flat = (vs: Float32Array[]): Float32Array => {
  const out = new Float32Array(vs.length * DIM);
  vs.forEach((v, i) => out.set(v, i * DIM));
  return out;
};

const words = [
  ['glacier', 'ice', 'meltwater'],
  ['volcano', 'lava', 'magma'],
  ['insulin', 'glucose', 'pancreas'],
  ['violin', 'orchestra', 'symphony'],
];

function corpus(): TopicChunk[] {
  const { vectors, truth } = clustered(4, 12);
  return vectors.map((vector, i) => {
    const w = words[truth[i]!]!;
    return { id: `c${i}`, vector, text: `Notes ${i}. The ${w[0]} and the ${w[1]} near the ${w[2]}; more about ${w[0]}.` };
  });
}

describe('topIndices', () => {
  it('gives the m best indices best first, ties by lower index, the same as sorting everything, few of many or many of few', () => {
    const rand = seededRandom(11);
    for (let t = 0; t < 150; t++) {
      const n = 1 + Math.floor(rand() * 2000);
      const m = Math.floor(rand() * 80);
      // Values on a coarse grid: many ties.
      const v = Float64Array.from({ length: n }, () => Math.round(rand() * 40) / 40);
      const sorted = Array.from({ length: n }, (_, i) => i)
        .sort((a, b) => v[b]! - v[a]! || a - b)
        .slice(0, Math.min(m, n));
      assert.deepEqual(topIndices(v, m), sorted, `n ${n}, m ${m}`);
    }
    assert.deepEqual(topIndices([], 5), []);
    assert.deepEqual(topIndices([0.5, 0.9, 0.5], 0), []);
  });

  it('TopicBank.similarities (the selection scan) gives each entry its similarity', () => {
    const rand = seededRandom(5);
    // 13 dimensions: the unrolled scan's tail is exercised too.
    const chunks: TopicChunk[] = Array.from({ length: 30 }, (_, i) => ({ id: `c${i}`, vector: normalizeInPlace(Float32Array.from({ length: 13 }, () => rand() - 0.5)), text: `chunk ${i}` }));
    const bank = fitTopics(chunks, { k: 4, seed: 1 });
    const q = normalizeInPlace(Float32Array.from({ length: 13 }, () => rand() - 0.5));
    const all = bank.similarities(q);
    assert.equal(all.length, 30);
    for (let i = 0; i < 30; i++) assert.ok(Math.abs(all[i]! - bank.similarity(q, i)) < 1e-9, `entry ${i}`);
    const fromArray = bank.similarities(Array.from(q));
    assert.deepEqual([...fromArray], [...all]);
  });
});

describe('sphericalKMeans', () => {
  it('recovers well-separated clusters and is deterministic per seed', () => {
    const { vectors, truth } = clustered(5, 20);
    const a = sphericalKMeans(flat(vectors), DIM, { k: 5, seed: 3 });
    // Same true cluster ⇔ same found cluster (a perfect partition up to relabelling).
    for (let i = 0; i < truth.length; i++)
      for (let j = i + 1; j < truth.length; j++) assert.equal(a.assignments[i] === a.assignments[j], truth[i] === truth[j], `${i},${j}`);
    for (let c = 0; c < 5; c++) {
      let n = 0;
      for (let j = 0; j < DIM; j++) n += a.centroids[c * DIM + j]! ** 2;
      assert.ok(Math.abs(n - 1) < 1e-4, 'unit centroids');
    }
    const b = sphericalKMeans(flat(vectors), DIM, { k: 5, seed: 3 });
    assert.deepEqual([...b.centroids], [...a.centroids]);
    assert.deepEqual([...b.assignments], [...a.assignments]);
  });

  it('chooses K ≈ √N within [8, 100] and never more than N', () => {
    assert.equal(chooseTopicCount(5183), 72);
    assert.equal(chooseTopicCount(40), 8);
    assert.equal(chooseTopicCount(1_000_000), 100);
    assert.equal(chooseTopicCount(3), 3);
  });
});

describe('labelTopics', () => {
  it('labels each topic by its distinctive terms as readable words', () => {
    const texts = ['Glaciers and ice sheets melt', 'glacier ice retreat', 'Volcano lava flows', 'volcanoes erupt lava', 'the report and the report'];
    const { labels, terms } = labelTopics(texts, [0, 0, 1, 1, 0], 2, { minChunks: 1 });
    assert.ok(terms[0]!.terms.slice(0, 2).includes('ice'), labels[0]);
    assert.ok(terms[1]!.terms.slice(0, 2).includes('lava'), labels[1]);
    assert.ok(!terms[0]!.terms.includes('the'), 'stop words never label');
    assert.match(labels[1]!, /lava/);
  });
});

describe('TopicBank', () => {
  it('fits, keeps top-M distributions that sum to 1, and round-trips through save/load', async () => {
    const chunks = corpus();
    const bank = fitTopics(chunks, { k: 4, topicsPerChunk: 3, seed: 2, encoderId: 'test-enc' });
    assert.equal(bank.size, chunks.length);
    assert.equal(bank.model.k, 4);
    for (let i = 0; i < bank.size; i++) {
      const d = bank.distribution(i);
      assert.ok(d.length <= 3);
      assert.ok(Math.abs(d.reduce((s, x) => s + x.weight, 0) - 1) < 1e-5);
    }
    // Each topic's label names its cluster's words.
    const glacierTopic = bank.distribution(0)[0]!.topic;
    assert.match(bank.model.labels[glacierTopic]!, /glacier|ice|meltwater/);
    // The int8 copy keeps cosines close to the float vectors.
    assert.ok(Math.abs(bank.similarity(chunks[5]!.vector, 5) - 1) < 0.02);

    const dir = await mkdtemp(join(tmpdir(), 'canopy-topics-'));
    try {
      const file = join(dir, 'topics.bin');
      await bank.save(file);
      const back = await TopicBank.load(file);
      assert.deepEqual(back.ids, bank.ids);
      assert.deepEqual(back.model.labels, bank.model.labels);
      assert.equal(back.model.encoderId, 'test-enc');
      assert.deepEqual([...back.model.centroids], [...bank.model.centroids]);
      assert.deepEqual([...back.topicIds], [...bank.topicIds]);
      assert.deepEqual([...back.topicWeights], [...bank.topicWeights]);
      assert.deepEqual([...back.vectors], [...bank.vectors]);
      assert.deepEqual(back.stats, bank.stats);
      // A flipped byte is caught by the checksum.
      const bytes = await readFile(file);
      bytes[bytes.length - 40] = bytes[bytes.length - 40]! ^ 0xff;
      await writeFile(file, bytes);
      await assert.rejects(TopicBank.load(file), /checksum/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('assigns new chunks incrementally and asks for a refit once drift passes the threshold', () => {
    const chunks = corpus();
    const bank = fitTopics(chunks, { k: 4, seed: 2 });
    const small = updateTopics(bank, { upsert: [{ id: 'new1', vector: chunks[0]!.vector }], remove: ['c47'] });
    assert.equal(small.bank.size, bank.size);
    assert.equal(small.bank.indexOf('c47'), undefined);
    assert.equal(small.bank.distribution(small.bank.indexOf('new1')!)[0]!.topic, bank.distribution(0)[0]!.topic);
    assert.equal(small.needsRefit, false);
    // A new direction no centroid covers: poor fit triggers a refit even at low drift.
    const odd = new Float32Array(DIM);
    odd[DIM - 1] = 1;
    odd[DIM - 3] = -1;
    const off = updateTopics(bank, { upsert: [{ id: 'odd', vector: normalizeInPlace(odd) }], remove: [] });
    assert.equal(off.needsRefit, true);
    const many = updateTopics(bank, { upsert: chunks.slice(0, 15).map((c, i) => ({ id: `n${i}`, vector: c.vector })), remove: [] });
    assert.ok(many.drift > 0.2);
    assert.equal(many.needsRefit, true);
  });
});

describe('selection and abstraction', () => {
  it('selects L entries, keeps M topics and a unit query-topic vector; ablations change the shape', () => {
    const chunks = corpus();
    const bank = fitTopics(chunks, { k: 4, topicsPerChunk: 4, seed: 2 });
    const eq = chunks[13]!.vector;
    const qt = selectQueryTopics(bank, eq, { ...defaultCompassOptions, selectEntries: 5, topics: 2 });
    assert.equal(qt.entries.length, 5);
    assert.equal(qt.entryScores.length, 5);
    assert.ok(qt.entryScores.every((s, i) => i === 0 || s <= qt.entryScores[i - 1]!));
    assert.equal(qt.topics.length, 2);
    assert.equal(qt.distribution.length, 4);
    assert.ok(Math.abs(qt.topics.reduce((s, t) => s + t.weight, 0) - 1) < 1e-9);
    assert.ok(Math.abs(qt.gq.reduce((s, x) => s + x * x, 0) - 1) < 1e-4);
    // The heaviest topic is the query's own cluster's.
    assert.equal(qt.topics[0]!.topic, bank.distribution(13)[0]!.topic);
    const raw = selectQueryTopics(bank, eq, { ...defaultCompassOptions, selectEntries: 5, topics: 2, abstraction: 'raw' });
    assert.ok(raw.topics.length >= 2, 'raw keeps every topic present');
    const all = selectQueryTopics(bank, eq, { ...defaultCompassOptions, selectEntries: 5, topics: 2, selection: 'all' });
    assert.equal(all.entries.length, 5, 'the trace still reports L entries');

    const rows = candidateFeatures(bank, eq, qt, [
      { itemId: 'c13', position: 0, bm25: 4, bm25Rank: 0 },
      { itemId: 'not-in-bank', position: 1, dense: 0.4, denseRank: 1 },
    ]);
    assert.equal(rows[0]!.length, featureNames.length);
    assert.ok(rows[0]!.every((x) => Number.isFinite(x)));
    assert.ok(Number.isNaN(rows[1]![baseFeatureCount]!), 'no topic signal for a chunk the bank lacks');
    assert.equal(rows[1]![0], 0.4);
  });
});

/** Labelled candidate sets where topic agreement, not the hybrid rank, marks the positive. */
function topicTask(): { bank: TopicBank; chunks: TopicChunk[]; groups: LabelledCandidates[] } {
  const chunks = corpus();
  const bank = fitTopics(chunks, { k: 4, topicsPerChunk: 4, seed: 2 });
  const random = seededRandom(11);
  const groups: LabelledCandidates[] = [];
  for (let q = 0; q < 40; q++) {
    const target = Math.floor(random() * chunks.length);
    const cluster = Math.floor(target / 12);
    const pool = chunks.filter((_, i) => Math.floor(i / 12) !== cluster).slice(q % 20, (q % 20) + 6);
    // The positive sits at a random hybrid position among off-topic candidates.
    const at = Math.floor(random() * 7);
    const cands = [...pool.slice(0, at), chunks[target]!, ...pool.slice(at)].map((c, rank) => ({ itemId: c.id, scores: { fused: 1 / (61 + rank), bm25: 5 - rank * 0.5, bm25Rank: rank } }));
    const eq = normalizeInPlace(Float32Array.from(chunks[target]!.vector, (x, j) => x + (j === 0 ? 0.05 : 0)));
    groups.push({ eq, candidates: cands, positives: new Set([chunks[target]!.id]) });
  }
  return { bank, chunks, groups };
}

describe('scorer training', () => {
  it('lowers its loss, deterministically, for the linear and the hidden-layer scorer', () => {
    const { bank, groups } = topicTask();
    const data = scorerGroups(bank, groups, defaultCompassOptions);
    for (const hidden of [0, 8]) {
      for (const loss of ['listwise', 'bce'] as const) {
        const a = trainTopicScorer(data, { hidden, loss, epochs: 20, learningRate: 0.05, seed: 4 });
        assert.ok(a.losses.at(-1)! < a.losses[0]! * 0.8, `${hidden}/${loss}: ${a.losses[0]} → ${a.losses.at(-1)}`);
        const b = trainTopicScorer(data, { hidden, loss, epochs: 20, learningRate: 0.05, seed: 4 });
        assert.deepEqual(b.scorer.weights, a.scorer.weights);
      }
    }
  });

  it('splits by query, deterministically and without overlap', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `q${i}`);
    const a = splitByQuery(ids, 0.3, 9);
    assert.equal(a.heldOut.length, 15);
    assert.equal(a.train.length, 35);
    assert.equal(a.train.filter((q) => a.heldOut.includes(q)).length, 0);
    assert.deepEqual(splitByQuery([...ids].reverse(), 0.3, 9), a);
    assert.notDeepEqual(splitByQuery(ids, 0.3, 10).heldOut, a.heldOut);
  });

  it('makes synthetic queries from first sentences or titles', () => {
    const qs = syntheticQueries(
      [
        { id: 'a', title: 'Ash dieback', text: 'Ash dieback spread across the northern plots in spring. Replanting followed.' },
        { id: 'b', title: 'Soil moisture sensors', text: 'Short.' },
        { id: 'c', title: 'x', text: 'tiny' },
      ],
      { count: 5, seed: 1 },
    );
    const byId = new Map(qs.map((q) => [q.positives[0], q.text]));
    assert.equal(byId.get('a'), 'Ash dieback spread across the northern plots in spring.');
    assert.equal(byId.get('b'), 'Soil moisture sensors');
    assert.equal(byId.has('c'), false);
  });
});

describe('TopicCompassRetriever', () => {
  it('re-ranks the inner candidates by the trained scorer and records topics and lift', async () => {
    const { bank, chunks, groups } = topicTask();
    const trained = trainTopicScorer(scorerGroups(bank, groups, defaultCompassOptions), { hidden: 0, epochs: 40, learningRate: 0.05, seed: 4 });
    // An inner retriever that puts the on-topic chunk last among off-topic ones.
    const target = chunks[30]!;
    const order = [chunks[0]!, chunks[1]!, chunks[2]!, chunks[13]!, chunks[14]!, target];
    const inner: Retriever = {
      async retrieve(_q, k): Promise<Retrieval> {
        const cands = order.map((c, rank) => ({ itemId: c.id, scores: { fused: 1 / (61 + rank), bm25: 5 - rank * 0.5, bm25Rank: rank } }));
        return { items: cands.slice(0, k).map((c, rank) => ({ item: itemOf(c.itemId), rank, scores: c.scores })), candidates: cands };
      },
    };
    let embeds = 0;
    const embed = rememberLastQuery(async () => {
      embeds++;
      return target.vector;
    });
    await embed('q');
    const retriever = new TopicCompassRetriever(inner, { item: async (id) => itemOf(id) }, embed, bank, trained.scorer, { selectEntries: 5, topics: 2 });
    const r = await retriever.retrieve('q', 3);
    assert.equal(embeds, 1, 'the query is embedded once');
    assert.equal(r.items.length, 3);
    assert.equal(r.items[0]!.item.id, target.id, 'the on-topic chunk moves to the top');
    assert.ok(r.items[0]!.scores.topic! > 0);
    assert.equal(r.items[0]!.scores.fused, r.topics.lift[0]!.withTopics);
    assert.equal(r.candidates.length, order.length);
    assert.equal(r.topics.k, 4);
    assert.equal(r.topics.selected.length, 2);
    assert.equal(r.topics.selectedEntries, 5);
    assert.ok(r.topics.selected.every((t) => t.label.length > 0 && t.weight > 0));
    assert.match(r.topics.selected[0]!.label, /insulin|glucose|pancreas/);
    const lift = r.topics.lift.find((l) => l.itemId === target.id)!;
    assert.equal(lift.rankAfter, 0);
    assert.ok(lift.withTopics > lift.base);
    assert.equal(r.topics.lift.length, order.length);
  });
});

function itemOf(id: string): Item {
  return { id, file: `${id}.md`, title: id, modality: 'text', root: { id: `${id}/`, kind: 'document', modality: 'text', text: id, anchor: { kind: 'text', start: 0, end: id.length }, children: [] } as unknown as Item['root'] };
}
