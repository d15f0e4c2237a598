/**
 * The subset of onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto, Apache-2.0)
 * that the converter and the test model generators write, as a protobufjs JSON descriptor, plus
 * `encodeModel()` which turns a plain ModelProto object into bytes.
 *
 * Field numbers and types are copied from onnx.proto; messages and fields we never write are left
 * out (protobuf readers skip nothing they need: absent optional fields take their defaults).
 * protobufjs writes fields in field-number order, so the same object always gives the same bytes.
 */
import * as protobuf from 'protobufjs';

const descriptor = {
  nested: {
    onnx: {
      nested: {
        AttributeProto: {
          fields: {
            name: { type: 'string', id: 1 },
            f: { type: 'float', id: 2 },
            i: { type: 'int64', id: 3 },
            s: { type: 'bytes', id: 4 },
            t: { type: 'TensorProto', id: 5 },
            floats: { rule: 'repeated', type: 'float', id: 7 },
            ints: { rule: 'repeated', type: 'int64', id: 8 },
            type: { type: 'int32', id: 20 },
          },
        },
        ValueInfoProto: {
          fields: {
            name: { type: 'string', id: 1 },
            type: { type: 'TypeProto', id: 2 },
            docString: { type: 'string', id: 3 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: 'repeated', type: 'string', id: 1 },
            output: { rule: 'repeated', type: 'string', id: 2 },
            name: { type: 'string', id: 3 },
            opType: { type: 'string', id: 4 },
            attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 },
            docString: { type: 'string', id: 6 },
            domain: { type: 'string', id: 7 },
          },
        },
        StringStringEntryProto: {
          fields: {
            key: { type: 'string', id: 1 },
            value: { type: 'string', id: 2 },
          },
        },
        ModelProto: {
          fields: {
            irVersion: { type: 'int64', id: 1 },
            producerName: { type: 'string', id: 2 },
            producerVersion: { type: 'string', id: 3 },
            domain: { type: 'string', id: 4 },
            modelVersion: { type: 'int64', id: 5 },
            docString: { type: 'string', id: 6 },
            graph: { type: 'GraphProto', id: 7 },
            opsetImport: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 },
            metadataProps: { rule: 'repeated', type: 'StringStringEntryProto', id: 14 },
          },
        },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            docString: { type: 'string', id: 10 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: 'repeated', type: 'int64', id: 1 },
            dataType: { type: 'int32', id: 2 },
            name: { type: 'string', id: 8 },
            rawData: { type: 'bytes', id: 9 },
            docString: { type: 'string', id: 12 },
          },
        },
        TensorShapeProto: {
          fields: {
            dim: { rule: 'repeated', type: 'Dimension', id: 1 },
          },
          nested: {
            Dimension: {
              oneofs: { value: { oneof: ['dimValue', 'dimParam'] } },
              fields: {
                dimValue: { type: 'int64', id: 1 },
                dimParam: { type: 'string', id: 2 },
              },
            },
          },
        },
        TypeProto: {
          oneofs: { value: { oneof: ['tensorType'] } },
          fields: {
            tensorType: { type: 'Tensor', id: 1 },
          },
          nested: {
            Tensor: {
              fields: {
                elemType: { type: 'int32', id: 1 },
                shape: { type: 'TensorShapeProto', id: 2 },
              },
            },
          },
        },
        OperatorSetIdProto: {
          fields: {
            domain: { type: 'string', id: 1 },
            version: { type: 'int64', id: 2 },
          },
        },
      },
    },
  },
};

/** TensorProto.DataType values used here. */
export const DataType = {
  float: 1,
  uint8: 2,
  int8: 3,
  int32: 6,
  int64: 7,
  bool: 9,
} as const;

/** AttributeProto.AttributeType values used here. */
export const AttributeType = {
  float: 1,
  int: 2,
  string: 3,
  tensor: 4,
  floats: 6,
  ints: 7,
} as const;

export interface TensorProto {
  name: string;
  dims: number[];
  dataType: number;
  rawData: Uint8Array;
}

export interface AttributeProto {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: TensorProto;
  floats?: number[];
  ints?: number[];
}

export interface NodeProto {
  name: string;
  opType: string;
  input: string[];
  output: string[];
  attribute: AttributeProto[];
  domain?: string;
}

/** A tensor input or output; a string dimension is symbolic (e.g. 'batch'). */
export interface ValueInfo {
  name: string;
  elemType: number;
  shape: (number | string)[];
}

export interface ModelSpec {
  irVersion: number;
  opset: number;
  producerName: string;
  producerVersion: string;
  docString?: string;
  graphName: string;
  nodes: NodeProto[];
  initializers: TensorProto[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  metadata?: Record<string, string>;
}

let root: protobuf.Root | undefined;

function modelType(): protobuf.Type {
  root ??= protobuf.Root.fromJSON(descriptor);
  return root.lookupType('onnx.ModelProto');
}

function valueInfo(v: ValueInfo): object {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: v.elemType,
        shape: { dim: v.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

/** Serialise a model. Metadata keys are written in sorted order so the bytes never depend on insertion order. */
export function encodeModel(spec: ModelSpec): Uint8Array {
  const type = modelType();
  const message = {
    irVersion: spec.irVersion,
    producerName: spec.producerName,
    producerVersion: spec.producerVersion,
    docString: spec.docString ?? '',
    graph: {
      node: spec.nodes,
      name: spec.graphName,
      initializer: spec.initializers,
      input: spec.inputs.map(valueInfo),
      output: spec.outputs.map(valueInfo),
    },
    opsetImport: [{ domain: '', version: spec.opset }],
    metadataProps: Object.keys(spec.metadata ?? {})
      .sort()
      .map((key) => ({ key, value: (spec.metadata ?? {})[key] ?? '' })),
  };
  const err = type.verify(message);
  if (err) throw new Error(`ONNX model does not match the schema: ${err}`);
  return type.encode(type.fromObject(message)).finish();
}

/** Parse model bytes back into plain objects (int64 as numbers, bytes as Uint8Array); for tests and checks. */
export function decodeModel(bytes: Uint8Array): {
  irVersion: number;
  opsetImport: { domain?: string; version: number }[];
  graph: { node: NodeProto[]; initializer: TensorProto[]; input: { name: string }[]; output: { name: string }[] };
  metadataProps?: { key: string; value: string }[];
} {
  const type = modelType();
  return type.toObject(type.decode(bytes), { longs: Number, defaults: true, arrays: true }) as ReturnType<typeof decodeModel>;
}
