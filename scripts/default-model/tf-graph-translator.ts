// Translates a TF.js graph model, node by node, into ONNX nodes (opset 18): the TF ops
// Universal Sentence Encoder lite uses, each onto the ONNX ops that compute the same. An op
// not listed here fails the conversion by name rather than giving a wrong graph.
//
// Integer tensors stay int32, as TF.js holds them (it has no int64: the graph's int64
// placeholders and constants are int32 there). Where ONNX insists on int64 (shapes, axes,
// the indices of GatherND and ScatterND) a constant operand is stored again as int64 and a
// computed one is cast.

import type { NodeAttributes, OnnxGraphBuilder } from './onnx-graph-builder.js'
import { ONNX_BOOL, ONNX_FLOAT, ONNX_INT32, ONNX_INT64 } from './onnx-writer.js'
import type { TfAttribute, TfNode, TfWeight } from './use-lite-package.js'

/** The opset the emitted nodes are written for: 18 is the first whose ReduceMax/Mean/Prod take their axes as an input. */
export const ONNX_OPSET = 18

/** TF DataType enum values (tensorflow/core/framework/types.proto) of the tensors this graph holds. */
const TF_FLOAT = 1
const TF_INT32 = 3
const TF_INT64 = 9
const TF_BOOL = 10

/**
 * "To the end" for ONNX Slice, which clamps ends to the dimension: INT64_MAX itself is not a
 * JavaScript number, and any bound beyond every real dimension does the same.
 */
const UNBOUNDED = 2 ** 62

/** A node the caller translates itself: a placeholder it feeds, or a node whose meaning it changes. */
export type NodeOverride = (node: TfNode, translator: TfGraphTranslator) => void

type Translation = (node: TfNode, translator: TfGraphTranslator) => void

function onnxElementType(tfType: number | undefined, where: string): number {
  switch (tfType) {
    case TF_FLOAT:
      return ONNX_FLOAT
    case TF_INT32:
    case TF_INT64:
      return ONNX_INT32
    case TF_BOOL:
      return ONNX_BOOL
    default:
      throw new Error(`${where}: TF data type ${tfType} is not converted`)
  }
}

const intAttribute = (attribute: TfAttribute | undefined) => Number(attribute?.i ?? 0)
const intListAttribute = (attribute: TfAttribute | undefined) => (attribute?.list?.i ?? []).map(Number)
/** TF.js writes a string attribute as its bytes. */
const stringAttribute = (attribute: TfAttribute | undefined) => Buffer.from(attribute?.s ?? []).toString('latin1')

export class TfGraphTranslator {
  readonly #byName: Map<string, TfNode>

  constructor(
    readonly builder: OnnxGraphBuilder,
    readonly nodes: TfNode[],
    readonly weights: Map<string, TfWeight>,
    readonly overrides: Record<string, NodeOverride> = {},
  ) {
    this.#byName = new Map(nodes.map((node) => [node.name, node]))
  }

  /** Emits every node, in the graph's order (producers first). */
  translate(): void {
    const unknown = Object.keys(this.overrides).filter((name) => !this.#byName.has(name))
    if (unknown.length > 0) throw new Error(`the graph has no node ${unknown.join(', ')} to translate differently`)
    for (const node of this.nodes) {
      const translation = this.overrides[node.name] ?? TRANSLATIONS[node.op]
      if (!translation) throw new Error(`TF op ${node.op} (node ${node.name}) has no ONNX translation`)
      translation(node, this)
    }
  }

  /** The nodes whose value no node reads: the graph's outputs. */
  outputNodes(): TfNode[] {
    const read = new Set(this.nodes.flatMap((node) => this.dataInputs(node).map((input) => input.split(':')[0])))
    return this.nodes.filter((node) => !read.has(node.name) && node.op !== 'Const' && node.op !== 'Placeholder')
  }

  /** Inputs that carry data; "^x" only orders execution, which a dataflow graph does not need. */
  dataInputs(node: TfNode): string[] {
    return (node.input ?? []).filter((input) => !input.startsWith('^'))
  }

  /** The ONNX name of a TF value: output 0 is the node's name, output k "name:k". */
  value(reference: string): string {
    const [name, index] = reference.split(':')
    return index && index !== '0' ? `${name}:${index}` : name!
  }

  /** The `index`th data input of `node`, as an ONNX value name. */
  input(node: TfNode, index: number): string {
    const reference = this.dataInputs(node)[index]
    if (reference === undefined) throw new Error(`${node.op} ${node.name} has no input ${index}`)
    return this.value(reference)
  }

  /** The values of an integer Const, or undefined when the value is computed. */
  constantInts(reference: string): number[] | undefined {
    const producer = this.#byName.get(reference.split(':')[0]!)
    const weight = producer?.op === 'Const' ? this.weights.get(producer.name) : undefined
    return weight?.data instanceof Int32Array ? Array.from(weight.data) : undefined
  }

  /** The values of a Const input that ONNX needs as an attribute or a known shape. */
  requireConstantInts(node: TfNode, index: number, what: string): number[] {
    const values = this.constantInts(this.dataInputs(node)[index] ?? '')
    if (!values) throw new Error(`${node.op} ${node.name}: ${what} is computed; only a constant is converted`)
    return values
  }

  /** An input ONNX takes as int64: a constant stored as int64 (keeping a scalar a scalar), else a Cast. */
  int64Input(node: TfNode, index: number): string {
    const reference = this.dataInputs(node)[index] ?? ''
    const values = this.constantInts(reference)
    if (!values) return this.builder.temporary('Cast', [this.value(reference)], { intAttributes: { to: ONNX_INT64 } })
    const weight = this.weights.get(reference.split(':')[0]!)!
    return this.builder.int64(values, weight.shape)
  }

  /** The rank of a tensor, where the graph fixes it: the output of a Transpose has its permutation's. */
  rankOf(node: TfNode, index: number): number {
    const producer = this.#byName.get((this.dataInputs(node)[index] ?? '').split(':')[0]!)
    if (producer?.op !== 'Transpose')
      throw new Error(`${node.op} ${node.name}: the rank of input ${index} is needed and not known`)
    return this.requireConstantInts(producer, 1, 'the permutation').length
  }

  /** The same op in ONNX, on the same inputs, with the node's name as its output. */
  same(opType: string, node: TfNode, attributes: NodeAttributes = {}): void {
    this.builder.node(
      opType,
      this.dataInputs(node).map((input) => this.value(input)),
      [node.name],
      attributes,
    )
  }
}

/** Swaps the last two axes of a tensor of `rank` axes (BatchMatMul's adj_x / adj_y). */
function transposeLastTwo(translator: TfGraphTranslator, value: string, rank: number): string {
  const perm = [...Array(rank).keys()]
  ;[perm[rank - 2], perm[rank - 1]] = [perm[rank - 1]!, perm[rank - 2]!]
  return translator.builder.temporary('Transpose', [value], { intListAttributes: { perm } })
}

/** TF's StridedSlice as ONNX Slice (+ Squeeze for shrink_axis_mask); the masks are per-axis bits. */
function stridedSlice(node: TfNode, translator: TfGraphTranslator): void {
  const begin = translator.requireConstantInts(node, 1, 'begin')
  const end = translator.requireConstantInts(node, 2, 'end')
  const strides = translator.requireConstantInts(node, 3, 'strides')
  const attr = node.attr ?? {}
  if (intAttribute(attr.ellipsis_mask) || intAttribute(attr.new_axis_mask))
    throw new Error(`StridedSlice ${node.name}: ellipsis and new-axis masks are not converted`)
  const beginMask = intAttribute(attr.begin_mask)
  const endMask = intAttribute(attr.end_mask)
  const shrinkMask = intAttribute(attr.shrink_axis_mask)
  const starts: number[] = []
  const ends: number[] = []
  const squeezed: number[] = []
  for (let axis = 0; axis < begin.length; axis++) {
    const forward = strides[axis]! > 0
    let start = begin[axis]!
    let stop = end[axis]!
    if (beginMask & (1 << axis)) start = forward ? 0 : UNBOUNDED
    if (endMask & (1 << axis)) stop = forward ? UNBOUNDED : -UNBOUNDED
    if (shrinkMask & (1 << axis)) {
      // One element, and the axis goes: [-1] means the last one, up to the end.
      stop = start === -1 ? UNBOUNDED : start + 1
      squeezed.push(axis)
    }
    starts.push(start)
    ends.push(stop)
  }
  const { builder } = translator
  const axes = [...begin.keys()]
  const sliced = builder.temporary('Slice', [
    translator.input(node, 0),
    builder.int64(starts),
    builder.int64(ends),
    builder.int64(axes),
    builder.int64(strides),
  ])
  if (squeezed.length > 0) builder.node('Squeeze', [sliced, builder.int64(squeezed)], [node.name])
  else builder.node('Identity', [sliced], [node.name])
}

/** A 1x1 Conv2D with unit strides over NHWC is a matrix product over the channels: the kernel [1, 1, in, out] as [in, out]. */
function pointwiseConv2D(node: TfNode, translator: TfGraphTranslator): void {
  const attr = node.attr ?? {}
  const kernel = translator.weights.get(translator.dataInputs(node)[1] ?? '')
  const unit = (values: number[]) => values.every((value) => value === 1)
  const format = stringAttribute(attr.data_format) || 'NHWC'
  if (
    kernel?.shape[0] !== 1 ||
    kernel.shape[1] !== 1 ||
    !unit(intListAttribute(attr.strides)) ||
    !unit(intListAttribute(attr.dilations)) ||
    format !== 'NHWC'
  )
    throw new Error(`Conv2D ${node.name}: only a 1x1, stride-1, NHWC convolution by a constant kernel is converted`)
  const matrix = translator.builder.initializer({
    name: `${kernel.name}/matrix`,
    dims: [kernel.shape[2]!, kernel.shape[3]!],
    values: kernel.data as Float32Array,
  })
  translator.builder.node('MatMul', [translator.input(node, 0), matrix], [node.name])
}

/** TF's reductions take their axes as an input and keep_dims as an attribute, as ONNX opset 18 does. */
function reduction(opType: string): Translation {
  return (node, translator) =>
    translator.builder.node(
      opType,
      [translator.input(node, 0), translator.builder.int64(translator.requireConstantInts(node, 1, 'the axes'))],
      [node.name],
      { intAttributes: { keepdims: node.attr?.keep_dims?.b ? 1 : 0 } },
    )
}

const elementwise =
  (opType: string): Translation =>
  (node, translator) =>
    translator.same(opType, node)

const TRANSLATIONS: Record<string, Translation> = {
  // Weights become initializers when a node reads them (OnnxGraphBuilder keeps only those).
  Const: (node, translator) => {
    const weight = translator.weights.get(node.name)
    if (!weight) throw new Error(`Const ${node.name} has no value in the weights manifest`)
    translator.builder.initializer({ name: node.name, dims: weight.shape, values: weight.data })
  },
  Placeholder: (node) => {
    throw new Error(`Placeholder ${node.name}: the caller must say what feeds it`)
  },
  Identity: elementwise('Identity'),
  Add: elementwise('Add'),
  Sub: elementwise('Sub'),
  Mul: elementwise('Mul'),
  Less: elementwise('Less'),
  Greater: elementwise('Greater'),
  Sin: elementwise('Sin'),
  Cos: elementwise('Cos'),
  Tanh: elementwise('Tanh'),
  Relu: elementwise('Relu'),
  // NHWC: the bias is along the last axis, where broadcasting puts it.
  BiasAdd: elementwise('Add'),
  RealDiv: elementwise('Div'),
  Maximum: elementwise('Max'),
  LogicalNot: elementwise('Not'),
  Square: (node, translator) => {
    const x = translator.input(node, 0)
    translator.builder.node('Mul', [x, x], [node.name])
  },
  Rsqrt: (node, translator) =>
    translator.builder.node(
      'Reciprocal',
      [translator.builder.temporary('Sqrt', [translator.input(node, 0)])],
      [node.name],
    ),
  Softmax: (node, translator) => translator.same('Softmax', node, { intAttributes: { axis: -1 } }),
  Cast: (node, translator) =>
    translator.same('Cast', node, {
      intAttributes: { to: onnxElementType(node.attr?.DstT?.type, `Cast ${node.name}`) },
    }),
  // ONNX Shape is int64; TF's out_type here is int32.
  Shape: (node, translator) => {
    const shape = translator.builder.temporary('Shape', [translator.input(node, 0)])
    const to = onnxElementType(node.attr?.out_type?.type ?? TF_INT32, `Shape ${node.name}`)
    translator.builder.node('Cast', [shape], [node.name], { intAttributes: { to } })
  },
  // One-input Where: the coordinates of the true elements, [count, rank], as NonZero gives them transposed.
  Where: (node, translator) => {
    if (translator.dataInputs(node).length !== 1) throw new Error(`Where ${node.name}: only the one-input form`)
    const { builder } = translator
    const coordinates = builder.temporary('Transpose', [builder.temporary('NonZero', [translator.input(node, 0)])], {
      intListAttributes: { perm: [1, 0] },
    })
    builder.node('Cast', [coordinates], [node.name], { intAttributes: { to: ONNX_INT32 } })
  },
  // allowzero: in TF a 0 in the shape is a dimension of size 0, not "copy the input's".
  Reshape: (node, translator) =>
    translator.builder.node('Reshape', [translator.input(node, 0), translator.int64Input(node, 1)], [node.name], {
      intAttributes: { allowzero: 1 },
    }),
  ExpandDims: (node, translator) =>
    translator.builder.node(
      'Unsqueeze',
      [translator.input(node, 0), translator.builder.int64(translator.requireConstantInts(node, 1, 'the axis'))],
      [node.name],
    ),
  Squeeze: (node, translator) => {
    const axes = intListAttribute(node.attr?.squeeze_dims)
    if (axes.length === 0) throw new Error(`Squeeze ${node.name}: squeezing every size-1 axis is not converted`)
    translator.builder.node('Squeeze', [translator.input(node, 0), translator.builder.int64(axes)], [node.name])
  },
  Transpose: (node, translator) =>
    translator.builder.node('Transpose', [translator.input(node, 0)], [node.name], {
      intListAttributes: { perm: translator.requireConstantInts(node, 1, 'the permutation') },
    }),
  GatherV2: (node, translator) => {
    if (intAttribute(node.attr?.batch_dims) !== 0) throw new Error(`GatherV2 ${node.name}: batch_dims is not converted`)
    const [axis] = translator.requireConstantInts(node, 2, 'the axis')
    translator.builder.node('Gather', [translator.input(node, 0), translator.input(node, 1)], [node.name], {
      intAttributes: { axis: axis! },
    })
  },
  GatherNd: (node, translator) =>
    translator.builder.node('GatherND', [translator.input(node, 0), translator.int64Input(node, 1)], [node.name]),
  // A zero tensor of the given shape, then the updates scattered in. ScatterND needs unique
  // indices; here they come from Where, which gives each coordinate once.
  ScatterNd: (node, translator) => {
    const { builder } = translator
    const elementType = onnxElementType(node.attr?.T?.type, `ScatterNd ${node.name}`)
    const zero = {
      name: 'value',
      dims: [1],
      values: elementType === ONNX_FLOAT ? new Float32Array(1) : new Int32Array(1),
    }
    const zeros = builder.temporary('ConstantOfShape', [translator.int64Input(node, 2)], {
      tensorAttributes: { value: zero },
    })
    builder.node('ScatterND', [zeros, translator.int64Input(node, 0), translator.input(node, 1)], [node.name])
  },
  // (indices, output_shape, values, default_value): the default everywhere, then the values scattered in.
  SparseToDense: (node, translator) => {
    const { builder } = translator
    const filled = builder.temporary('Expand', [translator.input(node, 3), translator.int64Input(node, 1)])
    builder.node('ScatterND', [filled, translator.int64Input(node, 0), translator.input(node, 2)], [node.name])
  },
  ConcatV2: (node, translator) => {
    const inputs = translator.dataInputs(node)
    const [axis] = translator.requireConstantInts(node, inputs.length - 1, 'the axis')
    translator.builder.node(
      'Concat',
      inputs.slice(0, -1).map((input) => translator.value(input)),
      [node.name],
      { intAttributes: { axis: axis! } },
    )
  },
  // Pack stacks along a new axis: each input unsqueezed there, then concatenated.
  Pack: (node, translator) => {
    const { builder } = translator
    const axis = intAttribute(node.attr?.axis)
    const unsqueezed = translator
      .dataInputs(node)
      .map((input) => builder.temporary('Unsqueeze', [translator.value(input), builder.int64([axis])]))
    builder.node('Concat', unsqueezed, [node.name], { intAttributes: { axis } })
  },
  SplitV: (node, translator) => {
    const sizes = translator.requireConstantInts(node, 1, 'the sizes')
    const [axis] = translator.requireConstantInts(node, 2, 'the axis')
    if (sizes.some((size) => size < 0)) throw new Error(`SplitV ${node.name}: an inferred size (-1) is not converted`)
    translator.builder.node(
      'Split',
      [translator.input(node, 0), translator.builder.int64(sizes)],
      sizes.map((_, index) => (index === 0 ? node.name : `${node.name}:${index}`)),
      { intAttributes: { axis: axis! } },
    )
  },
  Sum: reduction('ReduceSum'),
  Max: reduction('ReduceMax'),
  Mean: reduction('ReduceMean'),
  Prod: reduction('ReduceProd'),
  MatMul: (node, translator) => {
    const { builder } = translator
    const transposed = (value: string, flag: TfAttribute | undefined) =>
      flag?.b ? builder.temporary('Transpose', [value], { intListAttributes: { perm: [1, 0] } }) : value
    builder.node(
      'MatMul',
      [
        transposed(translator.input(node, 0), node.attr?.transpose_a),
        transposed(translator.input(node, 1), node.attr?.transpose_b),
      ],
      [node.name],
    )
  },
  BatchMatMul: batchMatMul,
  BatchMatMulV2: batchMatMul,
  Conv2D: pointwiseConv2D,
  StridedSlice: stridedSlice,
  // (input, begin, size): size -1 means "to the end".
  Slice: (node, translator) => {
    const { builder } = translator
    const begin = translator.requireConstantInts(node, 1, 'begin')
    const size = translator.requireConstantInts(node, 2, 'size')
    const ends = size.map((length, axis) => (length < 0 ? UNBOUNDED : begin[axis]! + length))
    builder.node(
      'Slice',
      [translator.input(node, 0), builder.int64(begin), builder.int64(ends), builder.int64([...begin.keys()])],
      [node.name],
    )
  },
  Range: elementwise('Range'),
}

/** BatchMatMul's adj_x / adj_y transpose the last two axes of an operand first. */
function batchMatMul(node: TfNode, translator: TfGraphTranslator): void {
  const operand = (index: number, adjoint: TfAttribute | undefined) => {
    const value = translator.input(node, index)
    return adjoint?.b ? transposeLastTwo(translator, value, translator.rankOf(node, index)) : value
  }
  translator.builder.node('MatMul', [operand(0, node.attr?.adj_x), operand(1, node.attr?.adj_y)], [node.name])
}
