import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')
/** The project's line length for src/ (issue 32); Biome's formatter wraps code, not comments or strings. */
const MAX_LINE_CHARS = 140

describe('src/ line length', () => {
  it(`has no line over ${MAX_LINE_CHARS} characters outside generated code`, () => {
    const over: string[] = []
    for (const file of fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.startsWith('generated')) continue
      const lines = fs.readFileSync(path.join(SRC, file), 'utf8').split('\n')
      lines.forEach((line, index) => {
        if (line.length > MAX_LINE_CHARS) over.push(`src/${file}:${index + 1} (${line.length})`)
      })
    }
    expect(over).toEqual([])
  })
})
