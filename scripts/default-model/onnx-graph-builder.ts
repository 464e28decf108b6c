// Collects the nodes and initializers of an ONNX graph as a converter emits them, naming
// the intermediate values it makes up. Names come from a counter, never from a clock or a
// random source, so the same input gives the same graph, byte for byte.
import type { OnnxGraph, OnnxNode, OnnxTensor, OnnxValue } from './onnx-writer.js'

export type NodeAttributes = Pick<OnnxNode, 'intAttributes' | 'intListAttributes' | 'tensorAttributes'>

export class OnnxGraphBuilder {
  readonly #nodes: OnnxNode[] = []
  readonly #initializers = new Map<string, OnnxTensor>()
  /** int64 constants by shape and values: an axis list used by twenty nodes is stored once. */
  readonly #int64Constants = new Map<string, string>()
  #lastId = 0

  /** A new value name. "#" cannot occur in a TF node name, so it never meets one of the graph's own names. */
  fresh(base: string): string {
    return `${base}#${++this.#lastId}`
  }

  /** Adds a weight (once per name); returns its name. */
  initializer(tensor: OnnxTensor): string {
    if (!this.#initializers.has(tensor.name)) this.#initializers.set(tensor.name, tensor)
    return tensor.name
  }

  /** An int64 constant: ONNX takes shapes, axes and indices as int64 where TF.js had int32. */
  int64(values: number[], dims: number[] = [values.length]): string {
    const key = `${dims.join('x')}:${values.join(',')}`
    let name = this.#int64Constants.get(key)
    if (!name) {
      name = this.initializer({
        name: this.fresh('int64'),
        dims,
        values: BigInt64Array.from(values, (value) => BigInt(value)),
      })
      this.#int64Constants.set(key, name)
    }
    return name
  }

  node(opType: string, inputs: string[], outputs: string[], attributes: NodeAttributes = {}): void {
    this.#nodes.push({ opType, inputs, outputs, ...attributes })
  }

  /** A node with one output of a new name; returns that name. */
  temporary(opType: string, inputs: string[], attributes: NodeAttributes = {}): string {
    const output = this.fresh(opType)
    this.node(opType, inputs, [output], attributes)
    return output
  }

  /**
   * The graph, with only the initializers some node reads: a converter may leave weights
   * behind (a 4-D kernel it stored again as a matrix, an int32 shape it stored as int64).
   */
  graph(name: string, inputs: OnnxValue[], outputs: OnnxValue[]): OnnxGraph {
    const read = new Set(this.#nodes.flatMap((node) => node.inputs))
    return {
      name,
      nodes: this.#nodes,
      initializers: [...this.#initializers.values()].filter((tensor) => read.has(tensor.name)),
      inputs,
      outputs,
    }
  }
}
