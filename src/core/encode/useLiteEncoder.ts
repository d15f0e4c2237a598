/**
 * The built-in encoder: Universal Sentence Encoder lite (512-d, 8k SentencePiece pieces),
 * converted to ONNX at build time by tools/convert-use into `models/use-lite/`, run with
 * onnxruntime-node. Needs no download. The caller passes the models folder, because the CLI
 * bundle, the extension bundle and the tests each live somewhere else
 * (e.g. `path.join(packageRoot, 'models', 'use-lite')`).
 *
 * Pipeline per call: collapse whitespace -> tokenise (tokenizer.json) -> split into windows of
 * at most 128 pieces -> length-sorted batches padded with -1 -> model (which pools and
 * L2-normalises) -> per text, the normalised mean of its windows' vectors.
 *
 * Long regions: a text over 128 pieces is split into ceil(n/128) near-equal windows cut at word
 * starts (pieces beginning with '▁'), each encoded on its own, and its vector is the normalised
 * mean of the window vectors (see encoder.ts). The original model would silently drop
 * everything after piece 128.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { CanopyError, ErrorCodes } from '../errors';
import { type Encoder, newEncoderStats, normalizeText, splitWindows } from './encoder';
import { loadTokenizer, openSession, encodeByWindows, SerialRunner, type SessionOptions } from './onnxRuntime';
import { UnigramTokenizer } from './unigram';

/** Bump when the text -> vector recipe changes (normalisation, windowing): it is part of `id`. */
const RECIPE = 'ws1-win128mean';

export interface UseLiteOptions extends SessionOptions {
  /** Folder holding model.onnx, tokenizer.json and manifest.json (models/use-lite). */
  modelDir: string;
  /** Windows per inference call; 32 by default. */
  batchSize?: number;
}

interface Manifest {
  format: number;
  modelId: string;
  dim: number;
  maxPieces: number;
  input: { name: string; padId: number };
  output: { name: string };
  files: Record<string, { sha256: string }>;
}

async function readManifest(modelDir: string): Promise<Manifest> {
  const path = join(modelDir, 'manifest.json');
  let m: Manifest;
  try {
    m = JSON.parse(await readFile(path, 'utf8')) as Manifest;
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new CanopyError(
      missing ? ErrorCodes.notFound : ErrorCodes.modelInvalid,
      missing
        ? `The built-in encoder is not in ${modelDir} (no manifest.json). Run "npm run build:model" to convert it.`
        : `The built-in encoder's manifest.json in ${modelDir} is unreadable: ${(err as Error).message}`,
      { file: path, cause: err },
    );
  }
  if (m.format !== 1 || typeof m.dim !== 'number' || typeof m.maxPieces !== 'number' || !m.files?.['model.onnx'] || !m.input || !m.output) {
    throw new CanopyError(ErrorCodes.modelInvalid, `The built-in encoder's manifest.json in ${modelDir} has an unknown format`, { file: path });
  }
  return m;
}

export class UseLiteEncoder implements Encoder {
  readonly dim: number;
  readonly maxPieces: number;
  private readonly runner: SerialRunner;
  private disposed = false;
  readonly stats = newEncoderStats();

  private constructor(
    readonly id: string,
    /** The raw session; exposed for `canopy bench encode`, which times it against the full pipeline. */
    readonly session: ort.InferenceSession,
    /** Normalised text -> piece ids. */
    private readonly pieces: (text: string) => number[],
    private readonly wordStart: Uint8Array,
    private readonly manifest: Manifest,
    readonly batchSize: number,
  ) {
    this.dim = manifest.dim;
    this.maxPieces = manifest.maxPieces;
    this.runner = new SerialRunner(session);
  }

  /**
   * The id an encoder created from `modelDir` has, with the model file checked against its
   * manifest — without opening the runtime session (what an unchanged re-index needs: the id to
   * compare with the index's, and no encoder).
   */
  static async idOf(modelDir: string): Promise<string> {
    return (await UseLiteEncoder.verified(modelDir)).id;
  }

  private static async verified(modelDir: string): Promise<{ id: string; manifest: Manifest; modelPath: string }> {
    const manifest = await readManifest(modelDir);
    const modelPath = join(modelDir, 'model.onnx');
    let bytes: Buffer;
    try {
      bytes = await readFile(modelPath);
    } catch (err) {
      throw new CanopyError(ErrorCodes.notFound, `The built-in encoder's model.onnx is missing from ${modelDir}. Run "npm run build:model".`, { file: modelPath, cause: err });
    }
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (sha !== manifest.files['model.onnx']?.sha256) {
      throw new CanopyError(ErrorCodes.modelInvalid, `model.onnx in ${modelDir} does not match its manifest (damaged or half-written). Run "npm run build:model".`, { file: modelPath });
    }
    return { id: `${manifest.modelId}/${RECIPE}@${sha.slice(0, 12)}`, manifest, modelPath };
  }

  static async create(options: UseLiteOptions): Promise<UseLiteEncoder> {
    const { modelDir } = options;
    const { id, manifest, modelPath } = await UseLiteEncoder.verified(modelDir);
    const { tokenizer, json } = await loadTokenizer(modelDir);
    // The fast tokeniser gives the same ids as tokenizers.js (tested); fall back if the file has another shape.
    const fast = UnigramTokenizer.fromTokenizerJson(json);
    const pieces = fast ? (t: string) => fast.encode(t) : (t: string) => tokenizer.encode(t, { add_special_tokens: false }).ids;
    const vocab = (json.model as { vocab?: [string, number][] }).vocab ?? [];
    const wordStart = new Uint8Array(vocab.length);
    vocab.forEach(([piece], i) => {
      wordStart[i] = piece.startsWith('\u2581') ? 1 : 0;
    });
    const session = await openSession(modelPath, { ...options, foldQuantizedWeights: true });
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? 32));
    return new UseLiteEncoder(id, session, pieces, wordStart, manifest, batchSize);
  }

  /** Piece ids of `text` after whitespace normalisation, unclipped. */
  tokenize(text: string): number[] {
    const norm = normalizeText(text);
    return norm === '' ? [] : this.pieces(norm);
  }

  countPieces(text: string): number {
    return this.tokenize(text).length;
  }

  /** Windows (piece id runs of at most maxPieces) of one text. An empty text is one empty window. */
  windows(text: string): number[][] {
    const ids = this.tokenize(text);
    return splitWindows(ids, this.maxPieces, (id) => this.wordStart[id] === 1).map(([s, e]) => ids.slice(s, e));
  }

  /** The model input for a batch of windows: [B, T] int32 padded with the pad id (-1). */
  buildFeed(windows: readonly (readonly number[])[]): Record<string, ort.Tensor> {
    // T >= 1: a batch of empty texts still needs a real shape; all -1 rows pool to tanh(bias), as in TF.
    const width = Math.max(1, ...windows.map((w) => w.length));
    const data = new Int32Array(windows.length * width).fill(this.manifest.input.padId);
    windows.forEach((w, row) => data.set(w, row * width));
    return { [this.manifest.input.name]: new ort.Tensor('int32', data, [windows.length, width]) };
  }

  /** Unit vectors for windows, in order (one model call). */
  async encodeWindows(windows: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const out = await this.runner.run(this.buildFeed(windows));
    const data = out[this.manifest.output.name]?.data as Float32Array | undefined;
    if (!data || data.length !== windows.length * this.dim) throw new CanopyError(ErrorCodes.encoderFailed, 'the built-in encoder returned an output of the wrong size');
    return windows.map((_, i) => data.slice(i * this.dim, (i + 1) * this.dim));
  }

  encode(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.encodeBatched(texts, this.batchSize, signal);
  }

  /** `encode` with an explicit batch size (the benchmark compares several on one session). */
  async encodeBatched(texts: readonly string[], batchSize: number, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.disposed) throw new CanopyError(ErrorCodes.encoderFailed, 'the built-in encoder was disposed');
    return encodeByWindows(texts, (text) => this.windows(text), { batchSize, dim: this.dim, signal, stats: this.stats }, (batch) => this.encodeWindows(batch));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.session.release();
  }
}
