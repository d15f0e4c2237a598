/**
 * A small builder for ONNX graphs: named nodes, fp32/int initialisers and int8 per-channel
 * quantised weights (stored int8 + scale, expanded by DequantizeLinear at load time). Used by
 * the Universal Sentence Encoder conversion and by the tests' tiny BERT-shaped model.
 *
 * Names are generated from a counter, so building the same graph twice gives the same model.
 */
import { endianness } from 'node:os';
import { AttributeType, type AttributeProto, DataType, type NodeProto, type TensorProto } from './onnxProto';

if (endianness() !== 'LE') {
  // ONNX raw_data is little-endian; typed arrays use the host's byte order.
  throw new Error('The ONNX writer needs a little-endian host.');
}

export type AttrValue = number | number[] | string | { float: number } | { floats: number[] } | TensorProto;

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function toAttribute(name: string, value: AttrValue): AttributeProto {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error(`attribute ${name}: use {float: x} for floats`);
    return { name, type: AttributeType.int, i: value };
  }
  if (typeof value === 'string') return { name, type: AttributeType.string, s: new TextEncoder().encode(value) };
  if (Array.isArray(value)) return { name, type: AttributeType.ints, ints: value };
  if ('float' in value) return { name, type: AttributeType.float, f: value.float };
  if ('floats' in value) return { name, type: AttributeType.floats, floats: value.floats };
  return { name, type: AttributeType.tensor, t: value };
}

export class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  private readonly names = new Set<string>();
  private counter = 0;

  /** A fresh value name with a readable prefix. */
  fresh(prefix: string): string {
    let name: string;
    do name = `${prefix}_${this.counter++}`;
    while (this.names.has(name));
    this.names.add(name);
    return name;
  }

  private claim(name: string): string {
    if (this.names.has(name)) throw new Error(`duplicate value name ${name}`);
    this.names.add(name);
    return name;
  }

  /** Add a node with one output; returns the output name. */
  op(opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, output?: string): string {
    const out = output === undefined ? this.fresh(opType.toLowerCase()) : this.claim(output);
    this.opN(opType, inputs, [out], attrs);
    return out;
  }

  /** Add a node with the given outputs. */
  opN(opType: string, inputs: string[], outputs: string[], attrs: Record<string, AttrValue> = {}): string[] {
    for (const o of outputs) this.names.add(o);
    this.nodes.push({
      name: `n${this.nodes.length}_${opType}`,
      opType,
      input: inputs,
      output: outputs,
      attribute: Object.keys(attrs)
        .sort()
        .map((k) => toAttribute(k, attrs[k] as AttrValue)),
    });
    return outputs;
  }

  private tensor(name: string, dims: number[], dataType: number, data: ArrayBufferView): string {
    const count = dims.reduce((a, b) => a * b, 1);
    const bytesPer = dataType === DataType.int8 || dataType === DataType.uint8 || dataType === DataType.bool ? 1 : dataType === DataType.int64 ? 8 : 4;
    if (data.byteLength !== count * bytesPer) throw new Error(`initialiser ${name}: ${data.byteLength} bytes for dims [${dims}]`);
    this.initializers.push({ name: this.claim(name), dims, dataType, rawData: Uint8Array.from(bytesOf(data)) });
    return name;
  }

  float(name: string, dims: number[], data: Float32Array | number[]): string {
    return this.tensor(name, dims, DataType.float, data instanceof Float32Array ? data : Float32Array.from(data));
  }

  int64(name: string, dims: number[], data: number[]): string {
    return this.tensor(name, dims, DataType.int64, BigInt64Array.from(data.map((v) => BigInt(v))));
  }

  int32(name: string, dims: number[], data: number[]): string {
    return this.tensor(name, dims, DataType.int32, Int32Array.from(data));
  }

  /**
   * A 2-D weight stored as symmetric int8 with one fp32 scale per channel along `axis`
   * (0 = per row, 1 = per column), expanded back to fp32 by DequantizeLinear. Returns the name
   * of the fp32 value. Scale = max|w| / 127 of the channel, so every channel uses the full range.
   */
  quantized(name: string, dims: [number, number], data: Float32Array, axis: 0 | 1): string {
    const [rows, cols] = dims;
    if (data.length !== rows * cols) throw new Error(`weight ${name}: ${data.length} values for [${dims}]`);
    const channels = axis === 0 ? rows : cols;
    const scales = new Float32Array(channels);
    const maxAbs = new Float64Array(channels);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const ch = axis === 0 ? r : c;
        const a = Math.abs(data[r * cols + c] as number);
        if (a > (maxAbs[ch] as number)) maxAbs[ch] = a;
      }
    }
    for (let ch = 0; ch < channels; ch++) {
      const m = maxAbs[ch] as number;
      scales[ch] = m > 0 ? Math.fround(m / 127) : 1;
    }
    const q = new Int8Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const s = scales[axis === 0 ? r : c] as number;
        const v = Math.round((data[r * cols + c] as number) / s);
        q[r * cols + c] = Math.max(-127, Math.min(127, v));
      }
    }
    const qName = this.tensor(`${name}_int8`, dims, DataType.int8, q);
    const sName = this.float(`${name}_scale`, [channels], scales);
    const zName = this.tensor(`${name}_zero`, [channels], DataType.int8, new Int8Array(channels));
    return this.op('DequantizeLinear', [qName, sName, zName], { axis }, name);
  }
}
