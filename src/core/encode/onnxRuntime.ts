/**
 * What both ONNX encoders share: opening an onnxruntime-node session with Canopy's defaults,
 * running one batch at a time, ordering windows into length-sorted batches, and loading a
 * Hugging Face tokenizer.json. Errors become CanopyErrors that name the file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { combineWindows, type EncoderStats } from './encoder';

export interface SessionOptions {
  /** Threads inside one operator. 1 by default: the machines Canopy targets have 2 cores and the editor needs one. */
  intraOpNumThreads?: number;
}

export async function openSession(modelPath: string, options: SessionOptions & { foldQuantizedWeights?: boolean } = {}): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: options.intraOpNumThreads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // For weight-only int8 models (the built-in one): with QDQ handling on, ORT fuses
      // DequantizeLinear+MatMul into integer kernels that also quantise activations (USE-lite:
      // cosine 0.9994 to the fp32 reference). Turning it off lets constant folding expand the
      // weights to fp32 once at load (cosine 0.9996, same speed). User models keep ORT's default.
      ...(options.foldQuantizedWeights ? { extra: { session: { disable_quant_qdq: '1' } } } : {}),
    });
  } catch (err) {
    throw new CanopyError(ErrorCodes.modelInvalid, `onnxruntime could not load ${modelPath}: ${(err as Error).message}`, { file: modelPath, cause: err });
  }
}

/**
 * Runs one session call at a time. onnxruntime sessions accept concurrent runs, but with one
 * intra-op thread they would only contend; queueing keeps batches in order and memory flat.
 */
export class SerialRunner {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly session: ort.InferenceSession) {}

  run(feeds: Record<string, ort.Tensor>): Promise<Record<string, ort.Tensor>> {
    const next = this.tail.then(() => this.session.run(feeds) as Promise<Record<string, ort.Tensor>>);
    this.tail = next.catch(() => undefined);
    return next.then(
      (r) => r,
      (err: unknown) => {
        throw new CanopyError(ErrorCodes.encoderFailed, `inference failed: ${(err as Error).message}`, { cause: err });
      },
    );
  }
}

/**
 * Orders window indices by length (longest first, stable) and cuts them into batches, so each
 * batch pads to a similar length: padding is wasted compute in every layer.
 */
export function planBatches(lengths: readonly number[], batchSize: number): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => (lengths[b] as number) - (lengths[a] as number) || a - b);
  const batches: number[][] = [];
  for (let i = 0; i < order.length; i += batchSize) batches.push(order.slice(i, i + batchSize));
  return batches;
}

/**
 * Encodes texts through their token windows: every text's windows go to `run` in length-planned
 * batches (cancellable between batches), and each text gets the combination of its windows' vectors.
 */
export async function encodeByWindows(
  texts: readonly string[],
  windowsOf: (text: string) => Iterable<number[]>,
  options: { batchSize: number; dim: number; signal?: AbortSignal | undefined; stats?: EncoderStats | undefined },
  run: (batch: number[][]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  throwIfCancelled(options.signal);
  const stats = options.stats;
  let t = performance.now();
  const owner: number[] = [];
  const windows: number[][] = [];
  texts.forEach((text, t) => {
    for (const w of windowsOf(text)) {
      owner.push(t);
      windows.push(w);
    }
  });
  if (stats) {
    stats.calls++;
    stats.texts += texts.length;
    stats.windows += windows.length;
    stats.tokenizeMs += performance.now() - t;
  }
  const vectors = new Array<Float32Array>(windows.length);
  for (const batch of planBatches(
    windows.map((w) => w.length),
    options.batchSize,
  )) {
    throwIfCancelled(options.signal);
    t = performance.now();
    const out = await run(batch.map((i) => windows[i] as number[]));
    if (stats) stats.inferenceMs += performance.now() - t;
    batch.forEach((w, j) => {
      vectors[w] = out[j] as Float32Array;
    });
  }
  throwIfCancelled(options.signal);
  const perText: Float32Array[][] = texts.map(() => []);
  owner.forEach((t, w) => perText[t]?.push(vectors[w] as Float32Array));
  return perText.map((vs) => combineWindows(vs, options.dim));
}

/** Read and parse tokenizer.json (and tokenizer_config.json when present) from `folder`. */
export async function loadTokenizer(folder: string): Promise<{ tokenizer: Tokenizer; json: Record<string, unknown>; config: Record<string, unknown> }> {
  const path = join(folder, 'tokenizer.json');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CanopyError(ErrorCodes.modelInvalid, `Model folder ${folder} has no readable tokenizer.json (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { file: path, cause: err });
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new CanopyError(ErrorCodes.modelInvalid, `tokenizer.json in ${folder} is not valid JSON: ${(err as Error).message}`, { file: path, cause: err });
  }
  if (typeof json !== 'object' || json === null || typeof json.model !== 'object' || json.model === null) {
    throw new CanopyError(ErrorCodes.modelInvalid, `tokenizer.json in ${folder} has no "model" section; expected a Hugging Face tokenizers file`, { file: path });
  }
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(await readFile(join(folder, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    // tokenizer_config.json is optional; its absence (or damage) only loses model_max_length.
  }
  // tokenizers.js requires these keys to exist, even when null.
  const full = { added_tokens: [], normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, ...json };
  try {
    return { tokenizer: new Tokenizer(full, config), json: full, config };
  } catch (err) {
    throw new CanopyError(ErrorCodes.modelInvalid, `tokenizer.json in ${folder} could not be loaded: ${(err as Error).message}`, { file: path, cause: err });
  }
}
