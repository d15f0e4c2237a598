// User-supplied Hugging Face-style ONNX folders, tested with a tiny BERT-shaped model that the
// test writes itself (support/tinyBert.ts) and checks against a plain-JS forward pass.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEncoder } from '../../../src/core/encode/createEncoder';
import { combineWindows } from '../../../src/core/encode/encoder';
import { OnnxFolderEncoder } from '../../../src/core/encode/onnxFolderEncoder';
import { CancelledError, CanopyError, ErrorCodes } from '../../../src/core/errors';
import { referenceEmbedding, referenceStates, TINY_HIDDEN, TINY_VOCAB, tinyWeights, writeTinyBertFolder } from './support/tinyBert';

const weights = tinyWeights();
const id = (t: string): number => TINY_VOCAB.indexOf(t);
const CLS = id('[CLS]');
const SEP = id('[SEP]');

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

function expectCanopyError(code: string, ...fragments: string[]): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof CanopyError, `expected CanopyError, got ${String(err)}`);
    assert.equal(err.code, code);
    for (const f of fragments) assert.ok(err.message.includes(f), `"${err.message}" should mention ${f}`);
    return true;
  };
}

describe('ONNX folder encoder (tiny BERT)', () => {
  let tmp: string;
  let folder: string;
  let enc: OnnxFolderEncoder;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'canopy-onnxfolder-'));
    folder = writeTinyBertFolder(join(tmp, 'tiny-bert'), weights);
    enc = await OnnxFolderEncoder.create({ folder });
  });
  after(async () => {
    await enc.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('reads its width from the model and its window from tokenizer_config.json', () => {
    assert.equal(enc.dim, TINY_HIDDEN);
    assert.equal(enc.maxPieces, 16);
    assert.match(enc.id, /^onnx:tiny-bert\/.+@[0-9a-f]{12}$/);
  });

  it('tokenises with the folder tokenizer.json (lower-casing WordPiece, [CLS]/[SEP] around windows)', () => {
    assert.deepEqual(enc.tokenize('The kitten is RESTING.'), ['the', 'kitten', 'is', 'rest', '##ing', '.'].map(id));
    assert.deepEqual(enc.windows('The cat sat.'), [[CLS, id('the'), id('cat'), id('sat'), id('.'), SEP]]);
  });

  it('mean-pools the last hidden state over the attention mask and L2-normalises', async () => {
    const texts = ['The cat sat on the mat.', 'a dog', 'Quarterly revenue grew by ten percent, and then the dogs run.'];
    const vectors = await enc.encode(texts);
    texts.forEach((t, i) => {
      const [window] = enc.windows(t);
      const expected = referenceEmbedding(referenceStates(weights, window as number[]));
      const got = vectors[i] as Float32Array;
      assert.ok(maxAbsDiff(got, expected) < 1e-5, `text ${i}: ${[...got]} vs ${[...expected]}`);
      assert.ok(Math.abs(Math.hypot(...got) - 1) < 1e-5);
    });
  });

  it('gives the same vector alone and in a padded batch', async () => {
    const [alone] = (await enc.encode(['a dog'])) as [Float32Array];
    const [batched] = (await enc.encode(['a dog', 'the cat sat on the mat and then the kitten is resting on a rug'])) as [Float32Array];
    assert.ok(maxAbsDiff(alone, batched) < 1e-6);
  });

  it('encodes a text longer than the window as the normalised mean of its windows', async () => {
    const long = 'the cat sat on the mat and then the kitten is resting on a rug , the dog runs and the cat sat on a mat .';
    const content = enc.tokenize(long);
    assert.ok(content.length > 14);
    const windows = enc.windows(long);
    assert.ok(windows.length >= 2);
    for (const w of windows) {
      assert.ok(w.length <= 16);
      assert.equal(w[0], CLS);
      assert.equal(w.at(-1), SEP);
    }
    assert.deepEqual(
      windows.flatMap((w) => w.slice(1, -1)),
      content,
    );
    const expected = combineWindows(
      windows.map((w) => referenceEmbedding(referenceStates(weights, w))),
      TINY_HIDDEN,
    );
    const [got] = (await enc.encode([long])) as [Float32Array];
    assert.ok(maxAbsDiff(got, expected) < 1e-5);
  });

  it('stops with CancelledError when the signal fires', async () => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(enc.encode(['a dog'], ac.signal), CancelledError);
  });

  it('runs models without token_type_ids', async () => {
    const dir = writeTinyBertFolder(join(tmp, 'no-types'), weights, { tokenTypes: false });
    const e = await OnnxFolderEncoder.create({ folder: dir });
    try {
      const [v] = (await e.encode(['a dog'])) as [Float32Array];
      const [w] = e.windows('a dog');
      assert.ok(maxAbsDiff(v, referenceEmbedding(referenceStates(weights, w as number[], false))) < 1e-5);
    } finally {
      await e.dispose();
    }
  });

  it('is what createEncoder builds for { kind: "onnx-folder" }, relative paths resolved against baseDir', async () => {
    const e = await createEncoder({ kind: 'onnx-folder', path: 'tiny-bert' }, { builtinModelDir: '/nonexistent', baseDir: tmp });
    try {
      assert.equal(e.id, enc.id);
      assert.equal(e.dim, TINY_HIDDEN);
    } finally {
      await e.dispose();
    }
  });
});

describe('ONNX folder encoder errors', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'canopy-onnxfolder-bad-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('names a folder that does not exist', async () => {
    const missing = join(tmp, 'nope');
    await assert.rejects(OnnxFolderEncoder.create({ folder: missing }), expectCanopyError(ErrorCodes.notFound, missing));
  });

  it('names the folder when model.onnx is missing', async () => {
    const dir = writeTinyBertFolder(join(tmp, 'no-model'), weights);
    unlinkSync(join(dir, 'model.onnx'));
    await assert.rejects(OnnxFolderEncoder.create({ folder: dir }), expectCanopyError(ErrorCodes.modelInvalid, dir, 'model.onnx'));
  });

  it('names the folder when tokenizer.json is missing or not JSON', async () => {
    const dir = writeTinyBertFolder(join(tmp, 'no-tokenizer'), weights);
    unlinkSync(join(dir, 'tokenizer.json'));
    await assert.rejects(OnnxFolderEncoder.create({ folder: dir }), expectCanopyError(ErrorCodes.modelInvalid, dir, 'tokenizer.json'));
    writeFileSync(join(dir, 'tokenizer.json'), '{ not json');
    await assert.rejects(OnnxFolderEncoder.create({ folder: dir }), expectCanopyError(ErrorCodes.modelInvalid, dir, 'not valid JSON'));
    writeFileSync(join(dir, 'tokenizer.json'), '{"version": "1.0"}');
    await assert.rejects(OnnxFolderEncoder.create({ folder: dir }), expectCanopyError(ErrorCodes.modelInvalid, dir, '"model"'));
  });

  it('reports a model.onnx that onnxruntime cannot load', async () => {
    const dir = writeTinyBertFolder(join(tmp, 'garbage'), weights);
    writeFileSync(join(dir, 'model.onnx'), 'this is not a model');
    await assert.rejects(OnnxFolderEncoder.create({ folder: dir }), expectCanopyError(ErrorCodes.modelInvalid, 'model.onnx'));
  });

  it('rejects a model without an attention_mask input', async () => {
    const dir = writeTinyBertFolder(join(tmp, 'no-mask'), weights, { attentionMask: false });
    await assert.rejects(OnnxFolderEncoder.create({ folder: dir }), expectCanopyError(ErrorCodes.modelInvalid, dir, 'attention_mask'));
  });

  it('finds onnx/model.onnx as Optimum exports lay it out', async () => {
    const dir = writeTinyBertFolder(join(tmp, 'optimum'), weights);
    mkdirSync(join(dir, 'onnx'));
    const { renameSync } = await import('node:fs');
    renameSync(join(dir, 'model.onnx'), join(dir, 'onnx', 'model.onnx'));
    const e = await OnnxFolderEncoder.create({ folder: dir });
    await e.dispose();
    assert.equal(e.dim, TINY_HIDDEN);
  });

  it('rejects an empty path in settings', async () => {
    await assert.rejects(createEncoder({ kind: 'onnx-folder', path: ' ' }, { builtinModelDir: tmp }), expectCanopyError(ErrorCodes.badInput));
  });
});
