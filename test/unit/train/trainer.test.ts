// The low-rank adapter and its trainer: identity before training, an analytic gradient that
// matches finite differences, a ranking loss that training lowers, bit-identical results for
// the same seed, cancellation and progress; checkpoints round-trip and refuse another encoder.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { CancelledError } from '../../../src/core/errors';
import { adapterFromCheckpoint, listCheckpoints, loadCheckpoint, makeCheckpoint, saveCheckpoint } from '../../../src/core/train/checkpoint';
import { seededRandom } from '../../../src/core/random';
import { applyLowRank, initLowRank, lossAndGradient, rankingLoss, type TrainPair } from '../../../src/core/train/lowRank';
import { trainLowRank, trainLowRankAsync } from '../../../src/core/train/trainer';

const DIM = 24;

function unit(rand: () => number): Float32Array {
  const v = new Float32Array(DIM);
  let n = 0;
  for (let i = 0; i < DIM; i++) {
    v[i] = rand() * 2 - 1;
    n += v[i]! * v[i]!;
  }
  for (let i = 0; i < DIM; i++) v[i]! /= Math.sqrt(n);
  return v;
}

/**
 * Pairs the identity gets wrong half the time but a linear map can fix: the preferred node
 * carries the query's direction in the first coordinates only after a fixed mixing, which the
 * adapter can learn to undo.
 */
function syntheticPairs(n: number, seed: number): TrainPair[] {
  const rand = seededRandom(seed);
  const pairs: TrainPair[] = [];
  for (let i = 0; i < n; i++) {
    const q = unit(rand);
    const preferred = unit(rand);
    const other = unit(rand);
    // preferred: its second half echoes q's first half (a signal the identity cannot see)
    for (let d = 0; d < DIM / 2; d++) preferred[DIM / 2 + d] = preferred[DIM / 2 + d]! * 0.3 + q[d]! * 0.7;
    pairs.push({ q, preferred, other });
  }
  return pairs;
}

describe('low-rank adapter', () => {
  it('is the identity before training', () => {
    const m = initLowRank(DIM, 4, 7);
    const v = unit(seededRandom(1));
    assert.deepEqual(Array.from(applyLowRank(m, v)), Array.from(v));
  });

  it('weights pairs in the mean loss: weight 2 counts as the pair twice', () => {
    const m = initLowRank(DIM, 3, 3);
    const rand = seededRandom(5);
    for (let i = 0; i < m.A.length; i++) m.A[i] = (rand() - 0.5) * 0.2;
    const [p, q] = syntheticPairs(2, 8);
    const twice = lossAndGradient(m, [p!, p!, q!], 10);
    const weighted = lossAndGradient(m, [{ ...p!, weight: 2 }, q!], 10);
    assert.ok(Math.abs(twice.loss - weighted.loss) < 1e-12);
    assert.ok(Math.abs(rankingLoss(m, [p!, p!, q!], 10) - rankingLoss(m, [{ ...p!, weight: 2 }, q!], 10)) < 1e-12);
    for (let i = 0; i < twice.gA.length; i++) assert.ok(Math.abs(twice.gA[i]! - weighted.gA[i]!) < 1e-12);
  });

  it('has an analytic gradient that matches finite differences', () => {
    const m = initLowRank(DIM, 3, 3);
    const rand = seededRandom(9);
    for (let i = 0; i < m.A.length; i++) m.A[i] = (rand() - 0.5) * 0.2;
    const pairs = syntheticPairs(5, 4);
    const { gA, gB } = lossAndGradient(m, pairs, 10);
    const h = 1e-6;
    for (const [which, g] of [
      ['A', gA],
      ['B', gB],
    ] as const) {
      const p = which === 'A' ? m.A : m.B;
      for (const idx of [0, 7, p.length - 1]) {
        const keep = p[idx]!;
        p[idx] = keep + h;
        const up = rankingLoss(m, pairs, 10);
        p[idx] = keep - h;
        const down = rankingLoss(m, pairs, 10);
        p[idx] = keep;
        const numeric = (up - down) / (2 * h);
        assert.ok(Math.abs(numeric - g[idx]!) < 1e-5 + 1e-3 * Math.abs(numeric), `${which}[${idx}]: ${numeric} vs ${g[idx]}`);
      }
    }
  });
});

describe('trainLowRank', () => {
  const train = syntheticPairs(160, 11);
  const validation = syntheticPairs(40, 12);

  it('lowers the ranking loss on training and validation pairs', () => {
    const r = trainLowRank(DIM, train, validation, { rank: 4, epochs: 15, seed: 5, learningRate: 0.01, batchSize: 16 });
    assert.ok(r.finalTrainLoss < r.initialTrainLoss * 0.9, `${r.initialTrainLoss} → ${r.finalTrainLoss}`);
    assert.ok(r.finalValidationLoss < r.initialValidationLoss, `${r.initialValidationLoss} → ${r.finalValidationLoss}`);
    assert.ok(r.bestEpoch >= 1);
  });

  it('gives the same weights for the same seed and different ones for another seed', () => {
    const opts = { rank: 4, epochs: 3, learningRate: 0.01, batchSize: 16 };
    const a = trainLowRank(DIM, train, validation, { ...opts, seed: 5 });
    const b = trainLowRank(DIM, train, validation, { ...opts, seed: 5 });
    const c = trainLowRank(DIM, train, validation, { ...opts, seed: 6 });
    assert.deepEqual(Array.from(a.weights.A), Array.from(b.weights.A));
    assert.deepEqual(Array.from(a.weights.B), Array.from(b.weights.B));
    assert.notDeepEqual(Array.from(a.weights.B), Array.from(c.weights.B));
    const info = { baseEncoderId: 'enc', trainedOn: { questions: 1, annotations: 1, pairs: 1, validationPairs: 0 }, metrics: {} };
    assert.equal(makeCheckpoint(a.weights, info).id, makeCheckpoint(b.weights, info).id);
    assert.notEqual(makeCheckpoint(a.weights, info).id, makeCheckpoint(c.weights, info).id);
  });

  it('stops early when validation stops improving and keeps the best epoch', () => {
    // Validation pairs that training cannot help: their preference is pure noise.
    const noise = syntheticPairs(40, 99).map((p) => ({ ...p, preferred: p.other, other: p.preferred }));
    const r = trainLowRank(DIM, train, noise, { rank: 4, epochs: 40, seed: 5, learningRate: 0.01, batchSize: 16, patience: 2 });
    assert.ok(r.epochs.length < 40);
    assert.equal(r.finalValidationLoss, Math.min(r.initialValidationLoss, ...r.epochs.map((e) => e.validationLoss)));
  });

  it('selects by a caller-given score among eligible epochs, falling back to the identity', () => {
    const opts = { rank: 4, epochs: 6, seed: 5, learningRate: 0.01, batchSize: 16, patience: 10 };
    let calls = 0;
    const none = trainLowRank(DIM, train, validation, {
      ...opts,
      select: () => {
        calls++;
        return { score: 1, eligible: false };
      },
    });
    assert.equal(calls, 7, 'once before training and once per epoch');
    assert.equal(none.bestEpoch, 0);
    assert.ok(none.weights.A.every((x) => x === 0), 'nothing eligible: the identity is kept');
    assert.equal(none.selectedBy, 'select');
    // Score = minus validation loss, every epoch eligible: the same choice as the loss itself.
    const byScore = trainLowRank(DIM, train, validation, { ...opts, select: (w) => ({ score: -rankingLoss(w, validation, 20), eligible: true }) });
    const byLoss = trainLowRank(DIM, train, validation, opts);
    assert.equal(byScore.bestEpoch, byLoss.bestEpoch);
  });

  it('reports progress per epoch and can be cancelled', () => {
    const seen: number[] = [];
    const abort = new AbortController();
    assert.throws(
      () =>
        trainLowRank(DIM, train, validation, {
          rank: 2,
          epochs: 10,
          seed: 1,
          signal: abort.signal,
          progress: {
            report: ({ done }) => {
              seen.push(done);
              if (done === 2) abort.abort();
            },
          },
        }),
      CancelledError,
    );
    assert.deepEqual(seen, [1, 2]);
  });

  it('stops after a fixed number of optimizer steps, mid-epoch if need be (the cross-validated refit)', () => {
    const train = syntheticPairs(40, 21);
    const o = { rank: 2, epochs: 10, seed: 6, batchSize: 16 }; // 3 batches an epoch
    // Selection that always improves: the weights after the last epoch are returned.
    const always = () => {
      let n = 0;
      return () => ({ score: ++n, eligible: true });
    };
    const twoEpochs = trainLowRank(DIM, train, [], { ...o, epochs: 2, patience: 10, select: always() });
    const sixSteps = trainLowRank(DIM, train, [], { ...o, steps: 6 });
    assert.equal(sixSteps.steps, 6);
    assert.equal(sixSteps.selectedBy, 'steps');
    assert.deepEqual(Array.from(sixSteps.weights.A), Array.from(twoEpochs.weights.A), '6 steps = 2 epochs of 3 batches');
    const four = trainLowRank(DIM, train, [], { ...o, steps: 4 });
    assert.equal(four.steps, 4);
    assert.equal(four.epochs.length, 2, 'stopped one batch into the second epoch');
    assert.notDeepEqual(Array.from(four.weights.A), Array.from(sixSteps.weights.A));
    const none = trainLowRank(DIM, train, [], { ...o, steps: 0 });
    assert.ok(Array.from(none.weights.A).every((x) => x === 0), 'no step: the identity');
    assert.equal(none.finalTrainLoss, none.initialTrainLoss);
  });

  it('the async variant gives the same weights and can be cancelled from outside mid-epoch', async () => {
    const o = { rank: 2, epochs: 3, seed: 4, batchSize: 8 };
    const sync = trainLowRank(DIM, train, validation, o);
    const async_ = await trainLowRankAsync(DIM, train, validation, o);
    assert.deepEqual(Array.from(async_.weights.A), Array.from(sync.weights.A));
    assert.deepEqual(Array.from(async_.weights.B), Array.from(sync.weights.B));
    // A timer (another task of the event loop) cancels it: only possible because it yields.
    const abort = new AbortController();
    let epochs = 0;
    setImmediate(() => abort.abort());
    await assert.rejects(trainLowRankAsync(DIM, train, validation, { ...o, epochs: 50, signal: abort.signal, progress: { report: () => void epochs++ } }), CancelledError);
    assert.ok(epochs < 50, `cancelled before the end (${epochs} epochs)`);
  });
});

describe('checkpoints', () => {
  it('round-trip atomically, list newest first, and load as a NodeAdapter for the same encoder only', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'canopy-ckpt-'));
    try {
      const r = trainLowRank(DIM, syntheticPairs(40, 1), [], { rank: 3, epochs: 2, seed: 2 });
      const info = { baseEncoderId: 'enc-1', trainedOn: { questions: 2, annotations: 3, pairs: 40, validationPairs: 0 }, metrics: { note: 'x' } };
      const older = makeCheckpoint(initLowRank(DIM, 3, 1), { ...info, createdAt: '2026-01-01T00:00:00.000Z' });
      const ckpt = makeCheckpoint(r.weights, { ...info, createdAt: '2026-02-01T00:00:00.000Z' });
      await saveCheckpoint(dir, older);
      const file = await saveCheckpoint(dir, ckpt);
      assert.equal(path.basename(file), `${ckpt.id}.json`);
      const loaded = await loadCheckpoint(file);
      assert.deepEqual(loaded, ckpt);
      assert.equal(JSON.parse(await readFile(file, 'utf8')).version, 1);
      assert.deepEqual(
        (await listCheckpoints(dir)).map((c) => c.checkpoint.id),
        [ckpt.id, older.id],
      );
      const v = unit(seededRandom(3));
      const out = adapterFromCheckpoint(loaded, 'enc-1')(v);
      const direct = applyLowRank(r.weights, v);
      for (let i = 0; i < DIM; i++) assert.ok(Math.abs(out[i]! - direct[i]!) < 1e-5);
      assert.throws(() => adapterFromCheckpoint(loaded, 'enc-2'), /trained on encoder enc-1/);
      await assert.rejects(loadCheckpoint(path.join(dir, 'missing.json')), /Cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
