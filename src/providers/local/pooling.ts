import type { PoolingMode } from './model-directory.js'

/**
 * How a sentence-transformers model turns its per-token states into one vector per text,
 * as its Pooling and Normalize modules do: pure arithmetic on the graph's output, so it is
 * unit-tested apart from any model.
 */

/** A batch's token states, row-major [texts, tokens, dimensions], and which tokens are real (1) or padding (0). */
export interface TokenStates {
  values: Float32Array
  texts: number
  tokens: number
  dimensions: number
  /** [texts, tokens], row-major. */
  attentionMask: Uint8Array
}

/** One vector per text, written into `into` ([texts, dimensions], row-major). */
export function poolTokenStates(states: TokenStates, mode: PoolingMode, into: Float32Array): void {
  const { values, texts, tokens, dimensions, attentionMask } = states
  for (let text = 0; text < texts; text++) {
    const out = text * dimensions
    const textStart = text * tokens * dimensions
    if (mode === 'cls') {
      into.set(values.subarray(textStart, textStart + dimensions), out)
      continue
    }
    let counted = 0
    if (mode === 'max') into.fill(Number.NEGATIVE_INFINITY, out, out + dimensions)
    else into.fill(0, out, out + dimensions)
    for (let token = 0; token < tokens; token++) {
      if (attentionMask[text * tokens + token] === 0) continue
      counted++
      const tokenStart = textStart + token * dimensions
      for (let dimension = 0; dimension < dimensions; dimension++) {
        const value = values[tokenStart + dimension]!
        if (mode === 'max') {
          if (value > into[out + dimension]!) into[out + dimension] = value
        } else into[out + dimension]! += value
      }
    }
    if (counted === 0) into.fill(0, out, out + dimensions)
    else if (mode === 'mean')
      for (let dimension = 0; dimension < dimensions; dimension++) into[out + dimension]! /= counted
  }
}

/**
 * Scales each row of `vectors` to unit length (a zero row stays zero), as sentence-transformers'
 * Normalize module does: cosine similarity is then a dot product.
 */
export function normaliseRows(vectors: Float32Array, dimensions: number): void {
  for (let start = 0; start < vectors.length; start += dimensions) {
    let squares = 0
    for (let index = start; index < start + dimensions; index++) squares += vectors[index]! * vectors[index]!
    const norm = Math.sqrt(squares)
    if (norm === 0) continue
    for (let index = start; index < start + dimensions; index++) vectors[index]! /= norm
  }
}
