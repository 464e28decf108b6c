// When `npm run bench` rebuilds: a fresh checkout has neither dist/memsvc nor the generated
// protobuf code the harness encodes its gRPC request with, and both must be reported.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { GENERATED_CODE, staleReason } from '../../bench/lib/build.js'

const ONE_MINUTE_MS = 60_000
let repoRoot: string

function checkout(files: string[]): string {
  repoRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-build-'))
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(repoRoot, file)), { recursive: true })
    fs.writeFileSync(path.join(repoRoot, file), '')
  }
  return repoRoot
}

/** Sets `file`'s modification time `offsetMs` from now: later than every file just written. */
function touch(file: string, offsetMs: number): void {
  const when = new Date(Date.now() + offsetMs)
  fs.utimesSync(path.join(repoRoot, file), when, when)
}

afterEach(() => fs.rmSync(repoRoot, { recursive: true, force: true }))

describe('bench build check', () => {
  it('reports a missing executable', () => {
    const root = checkout(['src/main.ts'])
    expect(staleReason(root, path.join(root, 'dist/memsvc'))).toBe('dist/memsvc is missing')
  })

  it('reports missing generated code even when the executable exists', () => {
    const root = checkout(['src/main.ts', 'dist/memsvc'])
    expect(staleReason(root, path.join(root, 'dist/memsvc'))).toBe(
      `${GENERATED_CODE} (generated protobuf code) is missing`,
    )
  })

  it('reports sources newer than the executable, by input', () => {
    const root = checkout([
      'src/main.ts',
      `${GENERATED_CODE}/memsvc/v1/apikeys.ts`,
      'proto/memsvc/v1/apikeys.proto',
      'dist/memsvc',
    ])
    touch('dist/memsvc', ONE_MINUTE_MS)
    touch('proto/memsvc/v1/apikeys.proto', 2 * ONE_MINUTE_MS)
    expect(staleReason(root, path.join(root, 'dist/memsvc'))).toBe('proto changed since dist/memsvc was built')
  })

  it('accepts an executable built after everything it is made of', () => {
    const root = checkout(['src/main.ts', `${GENERATED_CODE}/memsvc/v1/apikeys.ts`, 'dist/memsvc'])
    touch('dist/memsvc', ONE_MINUTE_MS)
    expect(staleReason(root, path.join(root, 'dist/memsvc'))).toBeUndefined()
  })
})
