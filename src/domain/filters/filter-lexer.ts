import { FilterError } from './filter-tree.js'

/** The tokens of the filter language. Keywords are case-insensitive and come out upper-cased. */
export type Token =
  | { kind: 'word'; text: string; position: number }
  | { kind: 'string'; value: string; position: number }
  | { kind: 'number'; value: number; position: number }
  | { kind: 'symbol'; text: '(' | ')' | ',' | '=' | '!=' | '<' | '<=' | '>' | '>='; position: number }
  | { kind: 'end'; position: number }

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y
const NUMBER = /-?\d+(\.\d+)?([eE][-+]?\d+)?/y
const WHITESPACE = /\s+/y
const SYMBOLS = ['<=', '>=', '!=', '<>', '(', ')', ',', '=', '<', '>'] as const

function matchAt(pattern: RegExp, text: string, index: number): string | undefined {
  pattern.lastIndex = index
  return pattern.exec(text)?.[0]
}

/** Splits the text into tokens; anything else (quotes left open, `;`, `--`, `/*`) is an error at its position. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let index = 0
  while (index < text.length) {
    const space = matchAt(WHITESPACE, text, index)
    if (space) {
      index += space.length
      continue
    }
    const position = index + 1
    const char = text[index]!
    if (char === "'") {
      let value = ''
      let cursor = index + 1
      for (;;) {
        if (cursor >= text.length) throw new FilterError(position, 'the string literal is never closed')
        if (text[cursor] === "'") {
          // SQL style: a doubled quote is one quote inside the string.
          if (text[cursor + 1] === "'") {
            value += "'"
            cursor += 2
            continue
          }
          break
        }
        value += text[cursor]
        cursor++
      }
      tokens.push({ kind: 'string', value, position })
      index = cursor + 1
      continue
    }
    const number = matchAt(NUMBER, text, index)
    if (number) {
      const value = Number(number)
      if (!Number.isFinite(value)) throw new FilterError(position, `the number ${number} is out of range`)
      tokens.push({ kind: 'number', value, position })
      index += number.length
      continue
    }
    const word = matchAt(WORD, text, index)
    if (word) {
      tokens.push({ kind: 'word', text: word.toUpperCase(), position })
      index += word.length
      continue
    }
    const symbol = SYMBOLS.find((candidate) => text.startsWith(candidate, index))
    if (symbol) {
      tokens.push({ kind: 'symbol', text: symbol === '<>' ? '!=' : symbol, position })
      index += symbol.length
      continue
    }
    throw new FilterError(position, `unexpected character ${JSON.stringify(char)}`)
  }
  tokens.push({ kind: 'end', position: text.length + 1 })
  return tokens
}
