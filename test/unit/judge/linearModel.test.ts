// The judgment models' file format and arithmetic (src/core/judge/linearModel.ts): a bad file is
// refused naming the file and the reason; the probability is the logistic of the standardised
// weighted sum; contributions add up to the logit and a feature the caller does not give counts
// at its centre.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LinearModel, type JudgeModelFile } from '../../../src/core/judge/linearModel';

const file = (over: Partial<JudgeModelFile> = {}): JudgeModelFile => ({
  schema: 'canopy.judge',
  version: 1,
  id: 'reader-test',
  kind: 'reader',
  features: ['a', 'b', 'c'],
  center: [0, 1, 0],
  scale: [1, 2, 1],
  weights: [2, -1, 0.5],
  bias: -1,
  ...over,
});

describe('LinearModel', () => {
  it('predicts the logistic of bias + Σ weight × (value − centre) / scale', () => {
    const m = LinearModel.from(file(), 'm.json');
    const { logit, probability } = m.predict({ a: 1, b: 3, c: 2 });
    assert.equal(logit, -1 + 2 * 1 - 1 * ((3 - 1) / 2) + 0.5 * 2);
    assert.ok(Math.abs(probability - 1 / (1 + Math.exp(-logit))) < 1e-12);
  });

  it('counts a feature the caller does not give at its centre: no contribution', () => {
    const m = LinearModel.from(file(), 'm.json');
    assert.equal(m.predict({ a: 1 }).logit, -1 + 2);
    const j = m.explain({ a: 1 });
    assert.deepEqual(
      j.contributions.map((c) => c.feature),
      ['a'],
    );
  });

  it('explains: contributions sum to the logit less the bias, largest magnitude first, with the threshold when the model has one', () => {
    const m = LinearModel.from(file({ threshold: 0.4 }), 'm.json');
    const values = { a: 0.5, b: -3, c: 4 };
    const j = m.explain(values);
    assert.equal(j.model, 'reader-test');
    assert.equal(j.threshold, 0.4);
    const sum = j.contributions.reduce((s, c) => s + c.contribution, 0);
    assert.ok(Math.abs(sum + (j.bias ?? 0) - m.predict(values).logit) < 1e-3);
    const magnitudes = j.contributions.map((c) => Math.abs(c.contribution));
    assert.deepEqual(magnitudes, [...magnitudes].sort((x, y) => y - x));
    assert.equal(j.contributions.find((c) => c.feature === 'b')!.value, -3);
  });

  it('refuses a malformed file, naming it and what is wrong', () => {
    assert.throws(() => LinearModel.from({ ...file(), schema: 'x' }, 'bad.json'), /bad\.json: .*schema must be "canopy\.judge"/);
    assert.throws(() => LinearModel.from({ ...file(), weights: [1, 2] }, 'bad.json'), /weights must be 3 finite numbers/);
    assert.throws(() => LinearModel.from({ ...file(), scale: [1, 0, 1] }, 'bad.json'), /every scale must be positive/);
    assert.throws(() => LinearModel.from({ ...file(), features: ['a', 'a', 'c'] }, 'bad.json'), /distinct names/);
    assert.throws(() => LinearModel.from({ ...file(), threshold: 2 }, 'bad.json'), /threshold/);
    assert.throws(() => LinearModel.from(null, 'bad.json'), (err: Error & { code?: string }) => err.code === 'E_MODEL_INVALID');
  });
});
