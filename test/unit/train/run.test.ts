// A whole training run over an imported fixture workspace: vectors come through the embedding
// cache (a second run encodes nothing), preferences are counted, the ranking loss drops, the
// same seed gives the same checkpoint, the report compares untrained and trained adapters on
// held-back questions, and an edited-away annotation is reported lost rather than used.
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importGold } from '../../../src/core/annotate/importGold';
import { annotationsPath, AnnotationStore } from '../../../src/core/annotate/store';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { EmbeddingCache } from '../../../src/core/encode/cache';
import type { Encoder } from '../../../src/core/encode/encoder';
import { loadCheckpoint } from '../../../src/core/train/checkpoint';
import { BLEND_WEIGHTS, blendWeights, runTraining, splitKeys, type TrainRunOptions } from '../../../src/core/train/run';
import { hashEmbed } from '../../helpers/hashEmbeddings';

const decodeA = (b64: string) => new Float32Array(new Uint8Array(Buffer.from(b64, 'base64')).buffer);

const DIM = 64;

function countingEncoder(): Encoder & { texts: number } {
  const enc = {
    id: `hash-${DIM}`,
    dim: DIM,
    maxPieces: 128,
    texts: 0,
    encode: async (texts: readonly string[]) => {
      enc.texts += texts.length;
      return texts.map((t) => hashEmbed(t, DIM));
    },
    dispose: async () => undefined,
  };
  return enc;
}

describe('runTraining', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'canopy-train-'));
    // Four small questions: the fixture slice twice over, under different ids.
    const src = await readFile(path.resolve('test/fixtures/annotate/hotpot_slice.jsonl'), 'utf8');
    const more = src
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { _id: string })
      .map((r) => JSON.stringify({ ...r, _id: `${r._id}-b` }))
      .join('\n');
    const dataset = path.join(root, 'slice.jsonl');
    await writeFile(dataset, `${src}${more}\n`);
    const ws = path.join(root, 'ws');
    const imported = await importGold(dataset, ws, { time: 't' });
    await new AnnotationStore(annotationsPath(ws)).add(imported.annotations);
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function run(seed: number, encoder: Encoder, extra: Partial<TrainRunOptions> = {}) {
    const ws = path.join(root, 'ws');
    const cache = await EmbeddingCache.open({ dir: path.join(root, 'cache'), encoder });
    const result = await runTraining({
      root: ws,
      annotationsFile: annotationsPath(ws),
      outDir: path.join(root, 'adapters'),
      embed: (texts, signal) => cache.getOrEncode(texts, encoder, signal),
      encoderId: encoder.id,
      dim: DIM,
      tokens: bpeTokenCounter(),
      holdout: 0.25,
      train: { seed, rank: 4, epochs: 20, learningRate: 0.02, batchSize: 4, patience: 20 },
      ...extra,
    });
    await cache.save();
    return result;
  }

  // The session-1 recipe: exactly the §10 pairs, epoch chosen by validation loss.
  const plain: Partial<TrainRunOptions> = { selection: 'loss', prunePairs: false, balanceRules: false };

  it('trains from cached vectors, lowers the ranking loss and writes a checkpoint', async () => {
    const first = countingEncoder();
    const r = await run(3, first, plain);
    assert.ok(first.texts > 0, 'the first run fills the cache');
    assert.deepEqual(r.questions, { total: 4, train: 2, validation: 1, heldOut: 1 });
    assert.equal(r.annotations.total, 8);
    assert.equal(r.annotations.relocation.unchanged, 8);
    assert.ok(r.preferences.train.pairs > 0);
    assert.equal(r.preferences.train.pairs, r.preferences.train.perRule.refine + r.preferences.train.perRule['keep-whole']);
    assert.ok(r.preferences.train.itemsWithoutGold > 0, 'distractor paragraphs are items without gold');
    assert.ok(r.training.finalTrainLoss < r.training.initialTrainLoss, `${r.training.initialTrainLoss} → ${r.training.finalTrainLoss}`);
    assert.equal(r.report.before.questions, 1);
    assert.ok(r.report.before.goldSpans > 0 && r.report.before.items > 0);
    assert.ok(r.report.before.evidenceTokens > 0 && r.report.before.evidenceTokens <= r.report.before.wholeTokens);
    const ckpt = await loadCheckpoint(r.checkpoint!.file);
    assert.equal(ckpt.baseEncoderId, `hash-${DIM}`);
    assert.equal(ckpt.rank, 4);

    const second = countingEncoder();
    const again = await run(3, second, plain);
    assert.equal(second.texts, 0, 'a second run reads every vector from the cache');
    assert.equal(again.checkpoint!.id, r.checkpoint!.id, 'same seed, same checkpoint');
  });

  it('balances the two rules and selects by recall-guard when asked', async () => {
    const r = await run(3, countingEncoder(), { balanceRules: true, selection: 'recall-guard', prunePairs: false, blend: false });
    assert.equal(r.prunePairs.train, 0, 'opted out');
    assert.equal(r.selection.blend, 1, 'opted out');
    assert.equal(r.training.selectedBy, 'select');
    assert.ok(r.training.epochs.every((e) => e.eligible !== undefined && e.selectScore !== undefined));
    assert.ok(r.training.initialTrainLoss > 0);
  });

  it('the recall-guarded recipe: prune-sibling pairs, three balanced rules, a blend chosen on validation only', async () => {
    const r = await run(3, countingEncoder(), { selection: 'recall-guard' });
    assert.ok(r.prunePairs.train > 0, 'distractor halves of gold paragraphs give prune-sibling pairs');
    assert.equal(r.preferences.train.pairs, r.preferences.train.perRule.refine + r.preferences.train.perRule['keep-whole'], '§10 counts stay §10 counts');
    assert.equal(r.selection.by, 'recall-guard');
    assert.ok(BLEND_WEIGHTS.includes(r.selection.blend));
    const { baseline, chosen } = r.selection;
    assert.ok(baseline && chosen);
    // The guard: the chosen weights never lose validation gold recall or add tokens (the identity qualifies).
    assert.ok(chosen.goldRecall >= baseline.goldRecall && chosen.evidenceTokens <= baseline.evidenceTokens);
    const ckpt = await loadCheckpoint(r.checkpoint!.file);
    assert.deepEqual((ckpt.metrics as { recipe: unknown }).recipe, { prunePairs: true, balanceRules: true, selection: 'recall-guard', blend: r.selection.blend, validation: 0.1, holdout: 0.25 });
    assert.equal(ckpt.trainedOn.pairs, r.preferences.train.pairs + r.prunePairs.train);
    // The blended adapter is what the checkpoint holds: A scaled by the blend.
    const again = await run(3, countingEncoder(), { selection: 'recall-guard' });
    assert.equal(again.checkpoint!.id, r.checkpoint!.id, 'deterministic');
  });

  it('the default recipe: cross-validated over every training question, then a refit for the chosen steps', async () => {
    const r = await run(3, countingEncoder());
    assert.equal(r.selection.by, 'cross-validated');
    assert.ok(r.prunePairs.train > 0, 'prune-sibling pairs are on by default');
    assert.deepEqual(r.questions, { total: 4, train: 3, validation: 0, heldOut: 1 }, 'no validation split: every training question is in a fold');
    const cv = r.selection.crossValidation!;
    assert.equal(cv.folds, 3, 'at most one fold per training question');
    assert.equal(cv.questions, 3);
    assert.equal(cv.baseline.questions, 3, 'the pooled baseline covers every training question');
    assert.ok(cv.epochsRun >= 1 && cv.perEpoch.length === cv.epochsRun);
    const ckpt = await loadCheckpoint(r.checkpoint!.file);
    const recipe = (ckpt.metrics as { recipe: Record<string, unknown> }).recipe;
    assert.deepEqual(recipe, { prunePairs: true, balanceRules: true, selection: 'cross-validated', blend: r.selection.blend, folds: 3, epoch: cv.chosen?.epoch ?? 0, steps: r.training.steps, holdout: 0.25 });
    if (cv.chosen) {
      const c = cv.chosen;
      // The guard, pooled over the folds: higher accuracy, fewer tokens, no lower recall.
      assert.ok(c.eligible && c.metrics.decisionAccuracy > cv.baseline.decisionAccuracy && c.metrics.evidenceTokens < cv.baseline.evidenceTokens && c.metrics.goldRecall >= cv.baseline.goldRecall);
      // The surest recall gain among the eligible epochs' best candidates.
      for (const e of cv.perEpoch.filter((x) => x.eligible)) assert.ok(e.recallGainLowerBound <= c.recallGainLowerBound);
      assert.equal(r.training.selectedBy, 'steps');
      assert.equal(r.training.steps, c.steps, 'the refit took the chosen number of optimizer steps');
      assert.ok(BLEND_WEIGHTS.includes(r.selection.blend));
      assert.deepEqual(r.selection.chosen, c.metrics);
    } else {
      assert.equal(r.training.steps, 0, 'nothing eligible: the identity is kept');
      assert.ok(Array.from(decodeA(ckpt.A)).every((x) => x === 0));
    }
    const again = await run(3, countingEncoder());
    assert.equal(again.checkpoint!.id, r.checkpoint!.id, 'deterministic');
  });

  it("writes no checkpoint when the adapter does not improve the ask's configuration, and says so", async () => {
    // An ask that keeps every item whole: no blend, lexical weight or gate option changes what it
    // keeps, so nothing trained can improve it — the checkpoint must not be written (nor activated).
    const out = path.join(root, 'adapters-ask-none');
    const r = await run(3, countingEncoder(), { ...plain, outDir: out, ask: { compressor: { name: 'none' }, nodeScore: { dense: 1, lexical: 0.5, model: 'coverage' } } });
    assert.ok(r.training.finalTrainLoss < r.training.initialTrainLoss, 'the adapter itself trained');
    assert.ok(r.ask, "the report carries the ask's figures");
    assert.equal(r.ask.adopted, false);
    assert.equal(r.ask.blend, 0);
    assert.match(r.ask.describe.before, /^none; node score 1 × dense \+ 0\.5 × lexical \(coverage\)$/);
    assert.deepEqual(r.ask.heldBack!.after, r.ask.heldBack!.before, 'measured with the ask configuration: nothing moves');
    assert.equal(r.ask.heldBack!.before.tokenShare, 1, 'the ask kept whole items');
    assert.ok(r.ask.heldBack!.plain.before.tokenShare < 1, "the plain rule's figures are given beside");
    assert.equal(r.checkpoint, undefined);
    assert.match(r.checkpointSkipped!, /no checkpoint written/);
    await assert.rejects(readdir(out), { code: 'ENOENT' }, 'nothing was written');
  });

  it("with the ask's default configuration the fit is measured on the held-back questions, and a checkpoint exists exactly when it was adopted with the adapter", async () => {
    const out = path.join(root, 'adapters-ask-default');
    const ask = { compressor: { name: 'canopy' as const, items: 0.3, wholeBelow: 600, minItems: 4, glimpse: 1 }, nodeScore: { dense: 1, lexical: 0.5, model: 'coverage' as const } };
    const r = await run(3, countingEncoder(), { outDir: out, ask });
    assert.ok(r.ask!.tried > 1, 'several configurations were measured on the training questions');
    assert.match(r.ask!.describe.before, /rank gate 0\.3 \(at least 4 items; items ≤ 600 characters whole\), glimpse 1/);
    const h = r.ask!.heldBack!;
    assert.equal(h.before.questions, 1);
    if (r.ask!.adopted) {
      assert.ok(h.after.goldRecall >= h.before.goldRecall && h.after.evidenceTokens <= h.before.evidenceTokens && h.after.decisionAccuracy >= h.before.decisionAccuracy);
    }
    assert.equal(r.checkpoint !== undefined, r.ask!.adopted && r.ask!.blend > 0);
    if (r.checkpoint) assert.equal((await loadCheckpoint(r.checkpoint.file)).metrics.ask !== undefined, true);
  });

  it('cross-validation refuses fewer than 2 training questions', async () => {
    await assert.rejects(run(3, countingEncoder(), { holdout: 0.75 }), /at least 2 training questions/);
  });

  it('blendWeights scales only A', () => {
    const w = { dim: 2, rank: 1, A: Float64Array.from([1, -2]), B: Float64Array.from([3, 4]) };
    assert.deepEqual(Array.from(blendWeights(w, 0.5).A), [0.5, -1]);
    assert.deepEqual(Array.from(blendWeights(w, 0.5).B), [3, 4]);
    assert.equal(blendWeights(w, 1), w);
  });

  it('reports an annotation whose text was edited away as lost and trains without it', async () => {
    const ws = path.join(root, 'ws');
    const { annotations } = await new AnnotationStore(annotationsPath(ws)).read();
    const victim = annotations[0]!;
    const file = path.join(ws, victim.file);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(victim.text, 'Something else entirely was written here instead.'));
    await appendFile(annotationsPath(ws), '{broken line\n');
    try {
      const r = await run(3, countingEncoder());
      assert.equal(r.annotations.relocation.lost, 1);
      assert.equal(r.annotations.corrupt.length, 1);
      assert.equal(r.annotations.corrupt[0]!.line, 9);
    } finally {
      await writeFile(file, text);
    }
  });

  it('splits questions by a seed, never putting one on both sides', () => {
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const a = splitKeys(keys, 0.2, 1);
    assert.equal(a.heldBack.length, 4);
    assert.equal(new Set([...a.heldBack, ...a.kept]).size, 20);
    assert.deepEqual(splitKeys([...keys].reverse(), 0.2, 1), a, 'order of input does not matter');
    assert.notDeepEqual(splitKeys(keys, 0.2, 2).heldBack, a.heldBack);
  });
});
