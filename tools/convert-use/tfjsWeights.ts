/**
 * Reads the weights of a TensorFlow.js graph model (model.json + binary shards) into named
 * typed arrays, and the graph's node list, so the converter can look weights up by their TF
 * names. Only what the USE-lite package uses is supported: unquantised float32 and int32
 * weights (quantised TF.js weights would carry a `quantization` entry and are rejected).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TfWeight {
  name: string;
  shape: number[];
  dtype: 'float32' | 'int32';
  data: Float32Array | Int32Array;
}

export interface TfNode {
  name: string;
  op: string;
  input?: string[];
}

export interface TfModel {
  weights: Map<string, TfWeight>;
  nodes: TfNode[];
  /** Every file read, in a fixed order, for the staleness hash. */
  files: string[];
}

interface ModelJson {
  modelTopology: { node: TfNode[] };
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: string; quantization?: unknown }[] }[];
}

export function readTfjsModel(dir: string): TfModel {
  const modelPath = join(dir, 'model.json');
  const json = JSON.parse(readFileSync(modelPath, 'utf8')) as ModelJson;
  const weights = new Map<string, TfWeight>();
  const files = [modelPath];
  for (const group of json.weightsManifest) {
    const shardPaths = group.paths.map((p) => join(dir, p));
    files.push(...shardPaths);
    const buf = Buffer.concat(shardPaths.map((p) => readFileSync(p)));
    let offset = 0;
    for (const w of group.weights) {
      if (w.quantization !== undefined) throw new Error(`weight ${w.name}: quantised TF.js weights are not supported`);
      if (w.dtype !== 'float32' && w.dtype !== 'int32') throw new Error(`weight ${w.name}: dtype ${w.dtype} not supported`);
      const count = w.shape.reduce((a, b) => a * b, 1);
      const bytes = buf.subarray(offset, offset + count * 4);
      if (bytes.length !== count * 4) throw new Error(`weight ${w.name}: shards are shorter than the manifest says`);
      // Copy into a fresh, aligned buffer (shard offsets need not be 4-byte aligned in memory).
      const copy = new Uint8Array(bytes).buffer;
      const data = w.dtype === 'float32' ? new Float32Array(copy) : new Int32Array(copy);
      weights.set(w.name, { name: w.name, shape: w.shape, dtype: w.dtype, data });
      offset += count * 4;
    }
    if (offset !== buf.length) throw new Error(`weights group ${group.paths[0]}: ${buf.length - offset} bytes left over`);
  }
  return { weights, nodes: json.modelTopology.node, files };
}
