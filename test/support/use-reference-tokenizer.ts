/**
 * Universal Sentence Encoder lite's own tokenizer, the reference the converted tokenizer.json
 * (scripts/default-model/use-lite-tokenizer.ts) is checked against. A TypeScript copy of
 * tfjs-models' universal-sentence-encoder/src/tokenizer (index.ts and trie.ts), which
 * @energetic-ai/embeddings ships with the model package's weights; the logic is unchanged,
 * quirks included (an unknown character scores 0; the backward pass steps by UTF-16 length).
 *
 * Copyright 2019 Google LLC. Licensed under the Apache License, Version 2.0
 * (http://www.apache.org/licenses/LICENSE-2.0).
 */

import type { Vocabulary } from '../../scripts/default-model/use-lite-package.js'

const SEPARATOR = '\u2581'
/** The first tokens are reserved for unk, control symbols and user-defined symbols. */
const RESERVED_SYMBOLS_COUNT = 6

/** [symbols, score, index] */
type OutputNode = [string[], number, number]

class TrieNode {
  children: Record<string, TrieNode> = {}
  end = false
  word: OutputNode = [[], 0, 0]
}

class Trie {
  readonly root = new TrieNode()

  insert(word: string, score: number, index: number): void {
    let node = this.root
    const symbols = [...word]
    for (let i = 0; i < symbols.length; i++) {
      const symbol = symbols[i]!
      if (!node.children[symbol]) {
        node.children[symbol] = new TrieNode()
        node.children[symbol].word[0] = node.word[0].concat(symbol)
      }
      node = node.children[symbol]
      if (i === symbols.length - 1) {
        node.end = true
        node.word[1] = score
        node.word[2] = index
      }
    }
  }

  /** Every piece the symbols start with; the first symbol as the unknown piece when none. */
  commonPrefixSearch(symbols: string[]): OutputNode[] {
    const output: OutputNode[] = []
    let node = this.root.children[symbols[0]!]
    for (let i = 0; i < symbols.length && node; i++) {
      if (node.end) output.push(node.word)
      node = node.children[symbols[i + 1]!]
    }
    if (!output.length) output.push([[symbols[0]!], 0, 0])
    return output
  }
}

function processInput(text: string): string {
  const normalized = text.normalize('NFKC')
  return normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized
}

interface Score {
  key: string[]
  score: number
  index: number
}

export class UseReferenceTokenizer {
  readonly #trie = new Trie()

  constructor(private readonly vocabulary: Vocabulary) {
    for (let i = RESERVED_SYMBOLS_COUNT; i < vocabulary.length; i++)
      this.#trie.insert(vocabulary[i]![0], vocabulary[i]![1], i)
  }

  /** SentencePiece's EncodeAsIds: the Viterbi path through the lattice of pieces. */
  encode(input: string): number[] {
    const nodes: Array<Record<number, Score[]>> = []
    const words: number[] = []
    const best: number[] = []
    const symbols = [...processInput(input)]
    for (let i = 0; i <= symbols.length; i++) {
      nodes.push({})
      words.push(0)
      best.push(0)
    }
    for (let i = 0; i < symbols.length; i++) {
      for (const piece of this.#trie.commonPrefixSearch(symbols.slice(i))) {
        const endPos = piece[0].length
        nodes[i + endPos]![i] ??= []
        nodes[i + endPos]![i]!.push({ key: piece[0], score: piece[1], index: piece[2] })
      }
    }
    for (let endPos = 0; endPos <= symbols.length; endPos++) {
      for (const startPos in nodes[endPos]) {
        for (const word of nodes[endPos]![Number(startPos)]!) {
          const score = word.score + best[endPos - word.key.length]!
          if (best[endPos] === 0 || score >= best[endPos]!) {
            best[endPos] = score
            words[endPos] = word.index
          }
        }
      }
    }
    const results: number[] = []
    let iter = words.length - 1
    while (iter > 0) {
      results.push(words[iter]!)
      iter -= this.vocabulary[words[iter]!]![0].length
    }
    // Merge consecutive unknowns.
    const merged: number[] = []
    let isPreviousUnk = false
    for (const id of results) {
      if (!(isPreviousUnk && id === 0)) merged.push(id)
      isPreviousUnk = id === 0
    }
    return merged.reverse()
  }
}
