// The built-in USE-lite encoder against the TF.js oracle (test/fixtures/encoder), plus its
// batching, whitespace, long-region and error behaviour.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as ort from 'onnxruntime-node';
import { combineWindows, cosine } from '../../../src/core/encode/encoder';
import { createEncoder } from '../../../src/core/encode/createEncoder';
import { UseLiteEncoder } from '../../../src/core/encode/useLiteEncoder';
import { CancelledError, CanopyError, ErrorCodes } from '../../../src/core/errors';
import { convertUseLite, resolveSourceDir } from '../../../tools/convert-use/main';
import { builtinModelDir, loadReference } from './support/builtinModel';

const ref = loadReference();

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

describe('built-in USE-lite encoder', () => {
  let enc: UseLiteEncoder;
  let modelDir: string;

  before(async () => {
    modelDir = builtinModelDir();
    enc = await UseLiteEncoder.create({ modelDir });
  });
  after(async () => {
    await enc.dispose();
  });

  it('reports its shape', () => {
    assert.equal(enc.dim, 512);
    assert.equal(enc.maxPieces, 128);
    assert.match(enc.id, /^use-lite\/.+@[0-9a-f]{12}$/);
  });

  it('tokenises every oracle sentence to the same piece ids as the TF.js tokenizer', () => {
    ref.sentences.forEach((s, i) => assert.deepEqual(enc.tokenize(s), ref.tokens[i], s));
  });

  it('matches the TF.js embeddings (cosine >= 0.999 each, int8 weights)', async () => {
    const vs = await enc.encode(ref.sentences);
    vs.forEach((v, i) => {
      const c = cosine(v, Float32Array.from(ref.embeddings[i] as number[]));
      assert.ok(c >= 0.999, `sentence ${i}: cosine ${c}`);
      assert.ok(maxAbsDiff(v, ref.embeddings[i] as number[]) < 0.02, `sentence ${i}: max |diff| too large`);
    });
  });

  it('rebuilds the TF graph exactly: the fp32 variant reproduces the oracle within 1e-5', async () => {
    const src = resolveSourceDir();
    const { files } = convertUseLite(src.dir, src.version, src.license, { quantize: false });
    const session = await ort.InferenceSession.create(files['model.onnx'] as Uint8Array, { intraOpNumThreads: 1 });
    try {
      const width = Math.max(...ref.tokens.map((t) => t.length));
      const ids = new Int32Array(ref.tokens.length * width).fill(-1);
      ref.tokens.forEach((t, row) => ids.set(t, row * width));
      const out = await session.run({ input_ids: new ort.Tensor('int32', ids, [ref.tokens.length, width]) });
      const data = out.embeddings?.data as Float32Array;
      ref.embeddings.forEach((e, i) => {
        const d = maxAbsDiff(data.subarray(i * 512, (i + 1) * 512), e);
        assert.ok(d < 1e-5, `sentence ${i}: max |diff| ${d}`);
      });
    } finally {
      await session.release();
    }
  });

  it('puts the cat near the kitten and both far from revenue', async () => {
    const [cat, kitten, revenue] = (await enc.encode(ref.sentences.slice(0, 3))) as [Float32Array, Float32Array, Float32Array];
    const ck = cosine(cat, kitten);
    const cr = cosine(cat, revenue);
    const kr = cosine(kitten, revenue);
    assert.ok(ck > 0.6, `cos(cat, kitten) = ${ck}`);
    assert.ok(ck - cr > 0.5, `cos(cat, kitten) - cos(cat, revenue) = ${ck - cr}`);
    assert.ok(ck - kr > 0.5, `cos(cat, kitten) - cos(kitten, revenue) = ${ck - kr}`);
    // The same holds for the oracle's own vectors, so this is the model's property, not the conversion's.
    const [rc, rk, rr] = ref.embeddings.slice(0, 3).map((e) => Float32Array.from(e)) as [Float32Array, Float32Array, Float32Array];
    assert.ok(cosine(rc, rk) - Math.max(cosine(rc, rr), cosine(rk, rr)) > 0.5);
  });

  it('returns unit vectors that do not depend on batch composition', async () => {
    const texts = [...ref.sentences, 'short', 'A much longer sentence that will be padded against in the batch with others around it.'];
    const batched = await enc.encode(texts);
    for (const [i, t] of texts.entries()) {
      const [alone] = (await enc.encode([t])) as [Float32Array];
      const v = batched[i] as Float32Array;
      assert.equal(v.length, 512);
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5);
      assert.ok(maxAbsDiff(alone, v) < 1e-5, `text ${i} differs between batch and alone`);
    }
  });

  it('collapses and trims whitespace before tokenising', async () => {
    const messy = '  The cat\n\tsat   on the mat.  ';
    assert.deepEqual(enc.tokenize(messy), ref.tokens[0]);
    const [a, b] = (await enc.encode([messy, ref.sentences[0] as string])) as [Float32Array, Float32Array];
    assert.ok(maxAbsDiff(a, b) < 1e-6);
  });

  it('encodes empty and whitespace-only text to a finite unit vector', async () => {
    const [a, b] = (await enc.encode(['', ' \n '])) as [Float32Array, Float32Array];
    assert.ok(a.every(Number.isFinite));
    assert.ok(Math.abs(Math.hypot(...a) - 1) < 1e-5);
    assert.ok(maxAbsDiff(a, b) < 1e-6);
  });

  it('encodes text over 128 pieces as the normalised mean of its <=128-piece windows', async () => {
    const long = Array.from({ length: 20 }, (_, i) => `${ref.sentences[i % 5]} Paragraph ${i} continues here.`).join(' ');
    const pieces = enc.countPieces(long);
    assert.ok(pieces > 256, `only ${pieces} pieces`);
    const windows = enc.windows(long);
    assert.ok(windows.length >= Math.ceil(pieces / 128) && windows.length <= Math.ceil(pieces / 128) + 1, `${windows.length} windows`);
    assert.equal(windows.flat().length, pieces);
    assert.deepEqual(windows.flat(), enc.tokenize(long));
    for (const w of windows) assert.ok(w.length <= 128 && w.length > 64);
    const [whole] = (await enc.encode([long])) as [Float32Array];
    const parts = await enc.encodeWindows(windows);
    assert.ok(maxAbsDiff(whole, combineWindows(parts, 512)) < 1e-6);
    // ...and it is not just the first window (what the original model's 128-piece clip would give).
    assert.ok(cosine(whole, parts[0] as Float32Array) < 0.999);
  });

  it('stops with CancelledError when the signal fires', async () => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(enc.encode(['anything'], ac.signal), CancelledError);
  });

  it('createEncoder builds it from { kind: "builtin" }', async () => {
    const e = await createEncoder({ kind: 'builtin' }, { builtinModelDir: modelDir });
    try {
      assert.equal(e.id, enc.id);
      const [v] = (await e.encode([ref.sentences[0] as string])) as [Float32Array];
      const [w] = (await enc.encode([ref.sentences[0] as string])) as [Float32Array];
      assert.ok(maxAbsDiff(v, w) < 1e-6);
    } finally {
      await e.dispose();
    }
  });
});

describe('built-in encoder errors', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'canopy-uselite-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('says how to build the model when the folder is empty', async () => {
    await assert.rejects(UseLiteEncoder.create({ modelDir: tmp }), (err: unknown) => {
      assert.ok(err instanceof CanopyError);
      assert.equal(err.code, ErrorCodes.notFound);
      assert.match(err.message, /build:model/);
      assert.ok(err.message.includes(tmp));
      return true;
    });
  });

  it('refuses a model.onnx that does not match its manifest', async () => {
    const copy = join(tmp, 'tampered');
    cpSync(builtinModelDir(), copy, { recursive: true });
    const model = readFileSync(join(copy, 'model.onnx'));
    model[model.length - 1] = (model[model.length - 1] as number) ^ 0xff;
    writeFileSync(join(copy, 'model.onnx'), model);
    await assert.rejects(UseLiteEncoder.create({ modelDir: copy }), (err: unknown) => err instanceof CanopyError && err.code === ErrorCodes.modelInvalid && /manifest/.test(err.message));
  });
});
