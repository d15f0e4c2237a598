/**
 * Rebuilds the Universal Sentence Encoder lite forward pass as an ONNX graph from the TF.js
 * weights (instead of translating its 317 TF nodes one by one).
 *
 * The TF graph takes a ragged batch (`indices` [N,2] = (row, position), `values` [N] = piece
 * ids), scatters it into a dense [B,T] id matrix padded with -1, and from then on works on that
 * dense layout (gathering/scattering real positions around the FFN). This ONNX graph takes the
 * dense matrix directly:
 *
 *   input_ids  int32 [batch, seq]   piece ids, padded with -1 (id 0 is the real <unk> piece)
 *   embeddings float [batch, 512]   L2-normalised sentence vectors
 *
 * Forward pass, as read from the TF graph (names in brackets are its scopes):
 *   x0  = emb + (emb + timing)        [Layer_0/add: the graph adds the scattered embeddings to the
 *                                       scattered "embeddings + timing signal", so emb counts twice]
 *   layer 0 (width 256 -> 512):
 *     res = x0 · Wd + bd               [AdjustResidualInput: residual projected 256 -> 512]
 *     y   = MHA(LN(x0)) + res          [4 heads x 64, q scaled by 1/8, padding bias -1e9]
 *     x1  = FFN(LN(y)) + y             [512 -> 1536 relu -> 512]
 *   layer 1 (width 512): y = MHA(LN(x1)) + x1 (4 heads x 128); x2 = FFN(LN(y)) + y
 *   pooled = sum(x2 · mask) / max(len, 1); out = l2normalize(tanh(pooled · Wt + bt))
 * Positions beyond the mask only ever reach real positions through attention keys, which the
 * -1e9 bias zeroes exactly, and the pooling mask; so computing every dense position (instead
 * of gathering the real ones) gives the same numbers.
 *
 * Weights: 2-D matrices with >= 65,536 elements are stored int8 with a per-channel scale (per
 * row for the embedding table, per output column for dense layers); everything else is fp32.
 */
import { type GraphBuilder } from './onnxGraph';
import { type TfModel, type TfWeight } from './tfjsWeights';

export const USE_LITE_DIM = 512;
export const USE_LITE_MAX_PIECES = 128;
/** Matrices at least this large are stored int8. */
export const QUANTIZE_MIN_ELEMENTS = 65_536;

const ENC = 'module_apply_default/Encoder_en/KonaTransformer/';
const STACK = `${ENC}Encode/TransformerStack/`;

function weight(model: TfModel, name: string): TfWeight {
  const w = model.weights.get(name);
  if (!w) throw new Error(`USE-lite weights: missing ${name}`);
  return w;
}

function floats(model: TfModel, name: string, shape: number[]): Float32Array {
  const w = weight(model, name);
  if (w.dtype !== 'float32' || w.shape.join(',') !== shape.join(',')) {
    throw new Error(`USE-lite weights: ${name} is ${w.dtype}[${w.shape}], expected float32[${shape}]`);
  }
  return w.data as Float32Array;
}

function scalar(model: TfModel, name: string): number {
  const w = weight(model, name);
  if (w.data.length !== 1) throw new Error(`USE-lite weights: ${name} is not a scalar`);
  return w.data[0] as number;
}

function ints(model: TfModel, name: string): number[] {
  return Array.from(weight(model, name).data);
}

/** The graph constants this rebuild relies on, read from the weights and checked. */
export function readHyperParameters(model: TfModel): { epsilon: number; scales: [number, number]; heads: number; maxPieces: number } {
  const epsilon = scalar(model, `${STACK}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`);
  const scale0 = scalar(model, `${STACK}Layer_0/TransformerLayer/MultiheadAttention/mul/y`);
  const scale1 = scalar(model, `${STACK}Layer_1/TransformerLayer/MultiheadAttention/mul/y`);
  const heads = scalar(model, `${STACK}Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2`);
  const d0 = scalar(model, `${STACK}Layer_0/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3`);
  const d1 = scalar(model, `${STACK}Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3`);
  const maxPieces = scalar(model, `${ENC}ClipToMaxLength/Less/y`);
  const padValue = scalar(model, `${ENC}Encode/SparseToDense/default_value`);
  const bias = scalar(model, `${STACK}Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y`);
  const split0 = ints(model, `${STACK}Layer_0/TransformerLayer/MultiheadAttention/Const`);
  const split1 = ints(model, `${STACK}Layer_1/TransformerLayer/MultiheadAttention/Const`);
  const expect = (ok: boolean, what: string): void => {
    if (!ok) throw new Error(`USE-lite graph differs from what the converter was written for: ${what}`);
  };
  expect(heads === 4 && d0 === 64 && d1 === 128, `heads ${heads}, head dims ${d0}/${d1}`);
  expect(split0.join() === '256,256,256' && split1.join() === '512,512,512', 'QKV split sizes');
  expect(maxPieces === USE_LITE_MAX_PIECES, `max pieces ${maxPieces}`);
  expect(padValue === -1, `padding value ${padValue}`);
  expect(bias === -1e9, `attention padding bias ${bias}`);
  // The TF graph contains the op pattern this rebuild mirrors: emb + (emb + timing).
  const add = model.nodes.find((n) => n.name === `${STACK}Layer_0/add`);
  expect(
    add?.op === 'Add' && add.input?.[0] === `${ENC}Encode/Scatter/ScatterNd` && add.input?.[1] === `${STACK}Layer_0/AddTimingSignal/Scatter/ScatterNd`,
    'Layer_0/add inputs',
  );
  return { epsilon, scales: [scale0, scale1], heads, maxPieces };
}

/**
 * The timing signal for positions 0..maxPieces-1, computed exactly as TF.js does on the CPU:
 * float32 product position * inv_timescale, then sin/cos rounded to float32 (`[sin | cos]`).
 */
export function timingTable(invTimescales: Float32Array, maxPieces: number): Float32Array {
  const half = invTimescales.length;
  const out = new Float32Array(maxPieces * half * 2);
  for (let p = 0; p < maxPieces; p++) {
    for (let j = 0; j < half; j++) {
      const angle = Math.fround(p * (invTimescales[j] as number));
      out[p * 2 * half + j] = Math.fround(Math.sin(angle));
      out[p * 2 * half + half + j] = Math.fround(Math.cos(angle));
    }
  }
  return out;
}

interface Dense {
  w: string;
  b: string;
}

export interface UseLiteGraphOptions {
  /** false keeps every weight fp32 (28 MB); used by the tests to check the graph against the oracle to ~1e-6. */
  quantize: boolean;
}

export function buildUseLiteGraph(g: GraphBuilder, model: TfModel, options: UseLiteGraphOptions = { quantize: true }): { input: string; output: string } {
  const hp = readHyperParameters(model);
  const big = (rows: number, cols: number): boolean => options.quantize && rows * cols >= QUANTIZE_MIN_ELEMENTS;

  /** A dense layer's weight, quantised when big enough, and its bias. */
  const dense = (label: string, wName: string, bName: string, inDim: number, outDim: number): Dense => {
    const w = weight(model, wName);
    // 1x1 Conv2D kernels [1,1,in,out] hold the same numbers as a MatMul weight [in,out].
    if (w.data.length !== inDim * outDim) throw new Error(`${wName}: expected ${inDim}x${outDim}`);
    const data = w.data as Float32Array;
    const wOut = big(inDim, outDim) ? g.quantized(`${label}.weight`, [inDim, outDim], data, 1) : g.float(`${label}.weight`, [inDim, outDim], data);
    return { w: wOut, b: g.float(`${label}.bias`, [outDim], floats(model, bName, [outDim])) };
  };
  const apply = (x: string, d: Dense): string => g.op('Add', [g.op('MatMul', [x, d.w]), d.b]);
  const layerNorm = (label: string, x: string, prefix: string, width: number): string => {
    const s = g.float(`${label}.scale`, [width], floats(model, `${prefix}layer_norm_scale/ConcatPartitions/concat`, [width]));
    const b = g.float(`${label}.bias`, [width], floats(model, `${prefix}layer_norm_bias/ConcatPartitions/concat`, [width]));
    return g.op('LayerNormalization', [x, s, b], { axis: -1, epsilon: { float: hp.epsilon } });
  };

  // Inputs, mask and the padding bias shared by both attention blocks.
  const ids = 'input_ids';
  const negOne = g.int32('const.neg_one', [], [-1]);
  const zeroI = g.int32('const.zero_i32', [], [0]);
  const mask = g.op('Greater', [ids, negOne], {}, 'mask');
  const safeIds = g.op('Where', [mask, ids, zeroI], {}, 'safe_ids');
  const maskF = g.op('Cast', [mask], { to: 1 }, 'mask_f');
  const biasScale = g.float('const.neg_1e9', [], [-1e9]);
  const oneF = g.float('const.one', [], [1]);
  const notMaskF = g.op('Sub', [oneF, maskF]);
  const biasUnsq = g.int64('const.axes_1_2', [2], [1, 2]);
  const attnBias = g.op('Unsqueeze', [g.op('Mul', [notMaskF, biasScale]), biasUnsq], {}, 'attention_bias'); // [B,1,1,T]

  // Embedding + timing signal.
  const embTable = floats(model, 'module/Embeddings_en', [8002, 256]);
  const table = big(8002, 256) ? g.quantized('embeddings.weight', [8002, 256], embTable, 0) : g.float('embeddings.weight', [8002, 256], embTable);
  const emb = g.op('Gather', [table, safeIds], { axis: 0 }, 'piece_embeddings');
  const inv = floats(model, `${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`, [1, 128]);
  const timing = g.float('timing_signal', [hp.maxPieces, 256], timingTable(inv, hp.maxPieces));
  const seqLen = g.op('Slice', [g.op('Shape', [ids]), g.int64('const.one_i64', [1], [1]), g.int64('const.two_i64', [1], [2])]);
  const zeroStart = g.int64('const.zero_i64', [1], [0]);
  const timingT = g.op('Slice', [timing, zeroStart, seqLen, zeroStart]);
  const x0 = g.op('Add', [emb, g.op('Add', [emb, timingT])], {}, 'layer0_input');

  const attention = (label: string, x: string, width: number, headDim: number, scale: number, qkv: Dense, out: Dense): string => {
    const qkvOut = g.op('Add', [g.op('MatMul', [x, qkv.w]), qkv.b]);
    const split = g.int64(`${label}.split`, [3], [width, width, width]);
    const [q, k, v] = g.opN('Split', [qkvOut, split], [g.fresh(`${label}.q`), g.fresh(`${label}.k`), g.fresh(`${label}.v`)], { axis: 2 }) as [
      string,
      string,
      string,
    ];
    const headShape = g.int64(`${label}.head_shape`, [4], [0, 0, hp.heads, headDim]);
    const heads = (t: string, perm: number[]): string => g.op('Transpose', [g.op('Reshape', [t, headShape])], { perm });
    const qh = g.op('Mul', [heads(q, [0, 2, 1, 3]), g.float(`${label}.q_scale`, [], [scale])]);
    const kT = heads(k, [0, 2, 3, 1]);
    const vh = heads(v, [0, 2, 1, 3]);
    const logits = g.op('Add', [g.op('MatMul', [qh, kT]), attnBias]);
    const weights = g.op('Softmax', [logits], { axis: -1 });
    const ctx = g.op('Transpose', [g.op('MatMul', [weights, vh])], { perm: [0, 2, 1, 3] });
    const merged = g.op('Reshape', [ctx, g.int64(`${label}.merge_shape`, [3], [0, 0, width])]);
    return apply(merged, out);
  };

  const ffn = (label: string, x: string, l: string): string => {
    const c1 = dense(`${label}.ffn1`, `${STACK}${l}/TransformerLayer/FFN/conv1/Tensordot/Reshape_1`, `${ENC}Encode/${l}/TransformerLayer/FFN/conv1/bias/ConcatPartitions/concat`, 512, 1536);
    const c2 = dense(`${label}.ffn2`, `${STACK}${l}/TransformerLayer/FFN/conv2/Tensordot/Reshape_1`, `${ENC}Encode/${l}/TransformerLayer/FFN/conv2/bias/ConcatPartitions/concat`, 1536, 512);
    return apply(g.op('Relu', [apply(x, c1)]), c2);
  };

  const layer = (index: 0 | 1, x: string, inWidth: number): string => {
    const l = `Layer_${index}`;
    const label = `layer${index}`;
    const p = `${ENC}Encode/${l}/TransformerLayer/`;
    const residual =
      index === 0 ? apply(x, dense(`${label}.residual`, `${p}dense/kernel/ConcatPartitions/concat`, `${p}dense/bias/ConcatPartitions/concat`, inWidth, 512)) : x;
    const h = layerNorm(`${label}.attention_norm`, x, `${p}layer_prepostprocess/layer_norm/`, inWidth);
    const qkv = dense(`${label}.qkv`, `module/Encoder_en/KonaTransformer/Encode/${l}/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0`, `${p}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`, inWidth, 3 * inWidth);
    const out = dense(`${label}.attention_out`, `module/Encoder_en/KonaTransformer/Encode/${l}/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0`, `${p}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`, inWidth, 512);
    const attn = attention(label, h, inWidth, inWidth / hp.heads, hp.scales[index], qkv, out);
    const y = g.op('Add', [attn, residual]);
    const f = ffn(label, layerNorm(`${label}.ffn_norm`, y, `${p}FFN/layer_prepostprocess/layer_norm/`, 512), l);
    return g.op('Add', [f, y], {}, `${label}_output`);
  };

  const x1 = layer(0, x0, 256);
  const x2 = layer(1, x1, 512);

  // Masked mean pooling, dense tanh layer, L2 normalisation (max(sum of squares, 1e-12) as in TF).
  const axis1 = g.int64('const.axis_1', [1], [1]);
  const maskCol = g.op('Unsqueeze', [maskF, g.int64('const.axis_2', [1], [2])]);
  const summed = g.op('ReduceSum', [g.op('Mul', [x2, maskCol]), axis1], { keepdims: 0 });
  const count = g.op('Max', [g.op('ReduceSum', [maskF, axis1], { keepdims: 1 }), oneF]);
  const pooled = g.op('Div', [summed, count], {}, 'pooled');
  const tanhLayer = dense('tanh', 'module/Encoder_en/hidden_layers/tanh_layer_0/weights', 'module/Encoder_en/hidden_layers/tanh_layer_0/bias', 512, 512);
  const t = g.op('Tanh', [apply(pooled, tanhLayer)]);
  const eps = g.float('const.l2_eps', [], [scalar(model, 'module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y')]);
  const sumSq = g.op('ReduceSum', [g.op('Mul', [t, t]), axis1], { keepdims: 1 });
  const norm = g.op('Sqrt', [g.op('Max', [sumSq, eps])]);
  const output = g.op('Div', [t, norm], {}, 'embeddings');
  return { input: ids, output };
}
