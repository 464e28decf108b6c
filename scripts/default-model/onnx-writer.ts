import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'

/**
 * Writes ONNX models (the ModelProto of onnx.proto) from TypeScript, for tests: no real
 * embedding weights are reachable from the project's machines, so tests build their own
 * small graphs. The build's converter of the default model (scripts/default-model) writes
 * its graph with it too. Only the messages and fields those graphs use are here, numbered
 * as in onnx/onnx.proto (IR version 8).
 */

/** TensorProto.DataType values the graphs use. */
export const ONNX_FLOAT = 1
export const ONNX_INT32 = 6
export const ONNX_INT64 = 7
export const ONNX_BOOL = 9

/** ONNX IR version 8 and the default-domain opset 17: both well inside what onnxruntime 1.30 loads. */
const IR_VERSION = 8
const OPSET_VERSION = 17
/** IR version 8 covers opsets up to 18 (ONNX 1.13). */
const MAX_OPSET_VERSION = 18

export interface OnnxTensor {
  name: string
  dims: number[]
  /** Values, row-major; written as raw little-endian data of the array's type (float32, int32 or int64). */
  values: Float32Array | Int32Array | BigInt64Array
}

export interface OnnxNode {
  opType: string
  inputs: string[]
  outputs: string[]
  /** Integer attributes (axis, keepdims). */
  intAttributes?: Record<string, number>
  /** Integer list attributes (Transpose's perm). */
  intListAttributes?: Record<string, number[]>
  /** Tensor attributes (ConstantOfShape's value). */
  tensorAttributes?: Record<string, OnnxTensor>
}

export interface OnnxValue {
  name: string
  elementType: typeof ONNX_FLOAT | typeof ONNX_INT64
  /** A number is a fixed dimension, a string a named free one ("batch"). */
  shape: Array<number | string>
}

export interface OnnxGraph {
  name: string
  nodes: OnnxNode[]
  initializers: OnnxTensor[]
  inputs: OnnxValue[]
  outputs: OnnxValue[]
}

export interface OnnxModelOptions {
  /** ModelProto.producer_name. */
  producer?: string
  /** The default-domain opset the nodes are written for; OPSET_VERSION unless a graph needs a later op. */
  opsetVersion?: number
}

/** AttributeProto.AttributeType values. */
const ATTRIBUTE_INT = 2
const ATTRIBUTE_TENSOR = 4
const ATTRIBUTE_INTS = 7

function submessage(writer: BinaryWriter, field: number, write: (inner: BinaryWriter) => void): void {
  writer.tag(field, WireType.LengthDelimited).fork()
  write(writer)
  writer.join()
}

/** The tensor's data type and its values as raw_data: little-endian whatever the machine's byte order. */
function rawData(values: OnnxTensor['values']): { dataType: number; raw: Uint8Array } {
  const raw = new Uint8Array(values.byteLength)
  const view = new DataView(raw.buffer)
  if (values instanceof Float32Array) {
    for (const [index, value] of values.entries()) view.setFloat32(index * 4, value, true)
    return { dataType: ONNX_FLOAT, raw }
  }
  if (values instanceof Int32Array) {
    for (const [index, value] of values.entries()) view.setInt32(index * 4, value, true)
    return { dataType: ONNX_INT32, raw }
  }
  for (const [index, value] of values.entries()) view.setBigInt64(index * 8, value, true)
  return { dataType: ONNX_INT64, raw }
}

function writeTensor(writer: BinaryWriter, tensor: OnnxTensor): void {
  const { dataType, raw } = rawData(tensor.values)
  for (const dim of tensor.dims) writer.tag(1, WireType.Varint).int64(dim)
  writer.tag(2, WireType.Varint).int32(dataType)
  writer.tag(8, WireType.LengthDelimited).string(tensor.name)
  writer.tag(9, WireType.LengthDelimited).bytes(raw)
}

function writeValueInfo(writer: BinaryWriter, value: OnnxValue): void {
  writer.tag(1, WireType.LengthDelimited).string(value.name)
  submessage(writer, 2, (type) =>
    submessage(type, 1, (tensorType) => {
      tensorType.tag(1, WireType.Varint).int32(value.elementType)
      submessage(tensorType, 2, (shape) => {
        for (const dim of value.shape)
          submessage(shape, 1, (dimension) => {
            if (typeof dim === 'number') dimension.tag(1, WireType.Varint).int64(dim)
            else dimension.tag(2, WireType.LengthDelimited).string(dim)
          })
      })
    }),
  )
}

function writeNode(writer: BinaryWriter, node: OnnxNode, index: number): void {
  for (const input of node.inputs) writer.tag(1, WireType.LengthDelimited).string(input)
  for (const output of node.outputs) writer.tag(2, WireType.LengthDelimited).string(output)
  writer.tag(3, WireType.LengthDelimited).string(`${node.opType.toLowerCase()}_${index}`)
  writer.tag(4, WireType.LengthDelimited).string(node.opType)
  for (const [name, value] of Object.entries(node.intAttributes ?? {}))
    submessage(writer, 5, (attribute) => {
      attribute.tag(1, WireType.LengthDelimited).string(name)
      attribute.tag(3, WireType.Varint).int64(value)
      attribute.tag(20, WireType.Varint).int32(ATTRIBUTE_INT)
    })
  for (const [name, values] of Object.entries(node.intListAttributes ?? {}))
    submessage(writer, 5, (attribute) => {
      attribute.tag(1, WireType.LengthDelimited).string(name)
      for (const value of values) attribute.tag(8, WireType.Varint).int64(value)
      attribute.tag(20, WireType.Varint).int32(ATTRIBUTE_INTS)
    })
  for (const [name, tensor] of Object.entries(node.tensorAttributes ?? {}))
    submessage(writer, 5, (attribute) => {
      attribute.tag(1, WireType.LengthDelimited).string(name)
      submessage(attribute, 5, (inner) => writeTensor(inner, tensor))
      attribute.tag(20, WireType.Varint).int32(ATTRIBUTE_TENSOR)
    })
}

/** The serialised ModelProto of `graph`. */
export function onnxModelBytes(graph: OnnxGraph, options: OnnxModelOptions = {}): Uint8Array {
  const opsetVersion = options.opsetVersion ?? OPSET_VERSION
  if (opsetVersion > MAX_OPSET_VERSION)
    throw new Error(`opset ${opsetVersion} needs a later ONNX IR version than ${IR_VERSION}`)
  const writer = new BinaryWriter()
  writer.tag(1, WireType.Varint).int64(IR_VERSION)
  writer.tag(2, WireType.LengthDelimited).string(options.producer ?? 'memsvc tests')
  submessage(writer, 7, (graphWriter) => {
    for (const [index, node] of graph.nodes.entries())
      submessage(graphWriter, 1, (nodeWriter) => writeNode(nodeWriter, node, index))
    graphWriter.tag(2, WireType.LengthDelimited).string(graph.name)
    for (const tensor of graph.initializers) submessage(graphWriter, 5, (inner) => writeTensor(inner, tensor))
    for (const input of graph.inputs) submessage(graphWriter, 11, (inner) => writeValueInfo(inner, input))
    for (const output of graph.outputs) submessage(graphWriter, 12, (inner) => writeValueInfo(inner, output))
  })
  submessage(writer, 8, (opset) => {
    opset.tag(1, WireType.LengthDelimited).string('')
    opset.tag(2, WireType.Varint).int64(opsetVersion)
  })
  return writer.finish()
}
