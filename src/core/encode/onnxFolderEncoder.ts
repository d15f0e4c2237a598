/**
 * A user-supplied sentence-embedding model: a Hugging Face-style ONNX export folder
 * (`model.onnx`, or `onnx/model.onnx`, plus `tokenizer.json`, optionally
 * `tokenizer_config.json`), e.g. MiniLM or bge-small exported with Optimum.
 *
 * The model must take BERT-family inputs — `input_ids` and `attention_mask`, optionally
 * `token_type_ids` (int64 or int32) — and return either per-token states [batch, tokens, dim]
 * (`last_hidden_state` / `token_embeddings`, else the first output), which are mean-pooled over
 * the attention mask, or an already pooled `sentence_embedding` [batch, dim]. Every vector is
 * L2-normalised, as sentence-transformers models' cards prescribe for cosine similarity.
 *
 * Long regions: texts longer than the model's window are split into near-equal windows of
 * content tokens (cut at word starts for WordPiece/Metaspace vocabularies), each wrapped in the
 * tokenizer's special tokens ([CLS] … [SEP]), and the text's vector is the normalised mean of
 * the windows' vectors — the same strategy as the built-in encoder.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import * as ort from 'onnxruntime-node';
import type { Tokenizer } from '@huggingface/tokenizers';
import { CanopyError, ErrorCodes } from '../errors';
import { type Encoder, l2NormalizeInPlace, newEncoderStats, normalizeText, splitWindows } from './encoder';
import { loadTokenizer, openSession, encodeByWindows, SerialRunner, type SessionOptions } from './onnxRuntime';

const RECIPE = 'ws1-meanpool-winmean';
/** Window used when neither tokenizer_config.json nor tokenizer.json states one (BERT's 512). */
const DEFAULT_MAX_PIECES = 512;
const SUPPORTED_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'];

export interface OnnxFolderOptions extends SessionOptions {
  folder: string;
  /** Windows per inference call; 16 by default (user models are usually larger than USE-lite). */
  batchSize?: number;
  /** Override the window length in tokens, special tokens included. */
  maxPieces?: number;
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => h.update(chunk))
      .on('error', reject)
      .on('end', () => resolvePromise(h.digest('hex')));
  });
}

/** The special tokens the tokenizer puts around a single sequence, found by encoding a probe with and without them. */
function specialTokens(tokenizer: Tokenizer): { prefix: number[]; suffix: number[] } {
  const probe = 'hello';
  const bare = tokenizer.encode(probe, { add_special_tokens: false }).ids;
  const full = tokenizer.encode(probe, { add_special_tokens: true }).ids;
  for (let at = 0; at + bare.length <= full.length; at++) {
    if (bare.every((id, i) => full[at + i] === id)) return { prefix: full.slice(0, at), suffix: full.slice(at + bare.length) };
  }
  return { prefix: [], suffix: [] };
}

function statedMaxPieces(json: Record<string, unknown>, config: Record<string, unknown>): number | undefined {
  const candidates: unknown[] = [config.model_max_length, (json.truncation as { max_length?: unknown } | null)?.max_length];
  // tokenizer_config.json says 1e30 when the limit is "unset"; only believe plausible numbers.
  const plausible = candidates.filter((v): v is number => typeof v === 'number' && Number.isInteger(v) && v > 2 && v <= 65_536);
  return plausible.length > 0 ? Math.min(...plausible) : undefined;
}

/** Which ids start a word, when the vocabulary says so (WordPiece '##' continuations, '▁'-prefixed pieces). */
function wordStartTest(json: Record<string, unknown>, tokenizer: Tokenizer): ((id: number) => boolean) | undefined {
  const model = json.model as { type?: string; continuing_subword_prefix?: string };
  if (model.type === 'WordPiece') {
    const prefix = model.continuing_subword_prefix ?? '##';
    return (id) => !(tokenizer.id_to_token(id) ?? '').startsWith(prefix);
  }
  if ((json.pre_tokenizer as { type?: string } | null)?.type === 'Metaspace') return (id) => (tokenizer.id_to_token(id) ?? '').startsWith('\u2581');
  return undefined;
}

export class OnnxFolderEncoder implements Encoder {
  private readonly runner: SerialRunner;
  private disposed = false;
  readonly stats = newEncoderStats();

  private constructor(
    readonly id: string,
    readonly dim: number,
    readonly maxPieces: number,
    readonly folder: string,
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    private readonly specials: { prefix: number[]; suffix: number[] },
    private readonly wordStart: ((id: number) => boolean) | undefined,
    private readonly io: {
      intType: 'int64' | 'int32';
      hasTokenTypes: boolean;
      output: string;
      pooled: boolean;
      padId: number;
    },
    private readonly batchSize: number,
  ) {
    this.runner = new SerialRunner(session);
  }

  static async create(options: OnnxFolderOptions): Promise<OnnxFolderEncoder> {
    const folder = resolve(options.folder);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      throw new CanopyError(ErrorCodes.notFound, `Model folder not found: ${folder}`, { file: folder });
    }
    const modelPath = [join(folder, 'model.onnx'), join(folder, 'onnx', 'model.onnx')].find((p) => existsSync(p));
    if (!modelPath) {
      throw new CanopyError(
        ErrorCodes.modelInvalid,
        `Model folder ${folder} has no model.onnx (nor onnx/model.onnx); expected a Hugging Face-style ONNX export with model.onnx and tokenizer.json`,
        { file: folder },
      );
    }
    const { tokenizer, json, config } = await loadTokenizer(folder);
    const session = await openSession(modelPath, options);
    try {
      const inputs = session.inputNames;
      for (const required of ['input_ids', 'attention_mask']) {
        if (!inputs.includes(required)) {
          throw new CanopyError(ErrorCodes.modelInvalid, `model.onnx in ${folder} has no "${required}" input (inputs: ${inputs.join(', ')}); Canopy runs BERT-style encoders`, {
            file: modelPath,
          });
        }
      }
      const unknown = inputs.filter((n) => !SUPPORTED_INPUTS.includes(n));
      if (unknown.length > 0) {
        throw new CanopyError(ErrorCodes.modelInvalid, `model.onnx in ${folder} needs inputs Canopy cannot supply: ${unknown.join(', ')} (supported: ${SUPPORTED_INPUTS.join(', ')})`, {
          file: modelPath,
        });
      }
      const idsMeta = session.inputMetadata.find((m) => m.name === 'input_ids');
      const intType = idsMeta?.isTensor && idsMeta.type === 'int32' ? 'int32' : 'int64';
      const outputs = session.outputNames;
      const output = ['sentence_embedding', 'last_hidden_state', 'token_embeddings'].find((n) => outputs.includes(n)) ?? outputs[0];
      if (output === undefined) throw new CanopyError(ErrorCodes.modelInvalid, `model.onnx in ${folder} has no outputs`, { file: modelPath });
      const stated = statedMaxPieces(json, config);
      const maxPieces = Math.floor(options.maxPieces ?? stated ?? DEFAULT_MAX_PIECES);
      const specials = specialTokens(tokenizer);
      if (maxPieces <= specials.prefix.length + specials.suffix.length) {
        throw new CanopyError(ErrorCodes.modelInvalid, `Model folder ${folder}: a window of ${maxPieces} tokens leaves no room for text`, { file: folder });
      }
      const padToken = (json.padding as { pad_id?: unknown } | null)?.pad_id;
      const padId = typeof padToken === 'number' ? padToken : (tokenizer.token_to_id('[PAD]') ?? tokenizer.token_to_id('<pad>') ?? 0);
      const hash = createHash('sha256')
        .update(await sha256File(modelPath))
        .update(await sha256File(join(folder, 'tokenizer.json')))
        .digest('hex');
      const io = { intType, hasTokenTypes: inputs.includes('token_type_ids'), output, pooled: output === 'sentence_embedding', padId } as const;
      const probe = new OnnxFolderEncoder('', 0, maxPieces, folder, session, tokenizer, specials, wordStartTest(json, tokenizer), io, 1);
      // The output width is only certain after a run (exports often leave it symbolic).
      const [vector] = await probe.encodeWindows([[...specials.prefix, ...specials.suffix]], 0);
      const dim = vector?.length ?? 0;
      if (dim === 0) throw new CanopyError(ErrorCodes.modelInvalid, `model.onnx in ${folder} returned an empty embedding`, { file: modelPath });
      const id = `onnx:${basename(folder)}/${RECIPE}/${maxPieces}@${hash.slice(0, 12)}`;
      return new OnnxFolderEncoder(id, dim, maxPieces, folder, session, tokenizer, specials, probe.wordStart, io, Math.max(1, Math.floor(options.batchSize ?? 16)));
    } catch (err) {
      await session.release();
      if (err instanceof CanopyError) throw err;
      throw new CanopyError(ErrorCodes.modelInvalid, `model.onnx in ${folder} failed a test run: ${(err as Error).message}`, { file: modelPath, cause: err });
    }
  }

  /** Content token ids of `text` (no special tokens), after whitespace normalisation, unclipped. */
  tokenize(text: string): number[] {
    const norm = normalizeText(text);
    return norm === '' ? [] : this.tokenizer.encode(norm, { add_special_tokens: false }).ids;
  }

  countPieces(text: string): number {
    return this.tokenize(text).length;
  }

  /** Model windows of one text, special tokens included. */
  windows(text: string): number[][] {
    const ids = this.tokenize(text);
    const room = this.maxPieces - this.specials.prefix.length - this.specials.suffix.length;
    return splitWindows(ids, room, this.wordStart).map(([s, e]) => [...this.specials.prefix, ...ids.slice(s, e), ...this.specials.suffix]);
  }

  private async encodeWindows(windows: readonly (readonly number[])[], expectDim: number): Promise<Float32Array[]> {
    const batch = windows.length;
    const width = Math.max(1, ...windows.map((w) => w.length));
    const ids = new Array<number>(batch * width).fill(this.io.padId);
    const mask = new Array<number>(batch * width).fill(0);
    windows.forEach((w, row) => {
      w.forEach((id, j) => {
        ids[row * width + j] = id;
        mask[row * width + j] = 1;
      });
    });
    const tensor = (values: number[]): ort.Tensor =>
      this.io.intType === 'int64' ? new ort.Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), [batch, width]) : new ort.Tensor('int32', Int32Array.from(values), [batch, width]);
    const feeds: Record<string, ort.Tensor> = { input_ids: tensor(ids), attention_mask: tensor(mask) };
    if (this.io.hasTokenTypes) feeds.token_type_ids = tensor(new Array<number>(batch * width).fill(0));
    const result = await this.runner.run(feeds);
    const out = result[this.io.output];
    if (!out || out.type !== 'float32') throw new CanopyError(ErrorCodes.encoderFailed, `${this.folder}: output "${this.io.output}" is not float32`);
    const data = out.data as Float32Array;
    const dims = out.dims;
    const pooled = this.io.pooled || dims.length === 2;
    if (pooled ? dims.length !== 2 || dims[0] !== batch : dims.length !== 3 || dims[0] !== batch || dims[1] !== width) {
      throw new CanopyError(ErrorCodes.encoderFailed, `${this.folder}: output "${this.io.output}" has shape [${dims.join(', ')}], expected [${batch}, ${width}, dim] or [${batch}, dim]`);
    }
    const dim = dims[dims.length - 1] as number;
    if (expectDim > 0 && dim !== expectDim) throw new CanopyError(ErrorCodes.encoderFailed, `${this.folder}: output width changed from ${expectDim} to ${dim}`);
    return windows.map((w, row) => {
      if (pooled) return l2NormalizeInPlace(data.slice(row * dim, (row + 1) * dim));
      // Mean over the attention mask (the window's real tokens, special tokens included, as sentence-transformers pools).
      const v = new Float32Array(dim);
      const base = row * width * dim;
      for (let t = 0; t < w.length; t++) {
        const off = base + t * dim;
        for (let k = 0; k < dim; k++) v[k] = (v[k] as number) + (data[off + k] as number);
      }
      return l2NormalizeInPlace(v);
    });
  }

  async encode(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.disposed) throw new CanopyError(ErrorCodes.encoderFailed, `the encoder for ${this.folder} was disposed`);
    return encodeByWindows(texts, (text) => this.windows(text), { batchSize: this.batchSize, dim: this.dim, signal, stats: this.stats }, (batch) => this.encodeWindows(batch, this.dim));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.session.release();
  }
}
