// Gives the fault tests a file to append their figures to, and prints the table once
// every test file has finished.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { type FigureRow, formatFigures } from '../support/fault-figures.js'

export default function setup(project: TestProject): () => void {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-faults-')), 'figures.jsonl')
  fs.writeFileSync(file, '')
  project.provide('faultFiguresFile', file)
  return () => {
    const rows = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FigureRow)
    fs.rmSync(path.dirname(file), { recursive: true, force: true })
    if (rows.length === 0) return
    rows.sort((a, b) => a.scenario.localeCompare(b.scenario))
    process.stdout.write(`\nFault suite figures (test/faults):\n${formatFigures(rows)}\n`)
  }
}
