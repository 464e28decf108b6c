// What `serve` does with a failure outside any request: a stray rejected promise is logged
// and the process keeps running; an uncaught exception is logged as one line and ends it
// with code 1. Run in a child process, since the guards are process-wide.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const REPO = path.resolve(import.meta.dirname, '../..')
const GUARDS = path.join(REPO, 'src/server/process-guards.ts')

function runWithGuards(body: string): Promise<{ code: number | null; stderr: string }> {
  const script = `
    import { createLogger } from ${JSON.stringify(path.join(REPO, 'src/observability/logger.ts'))}
    import { installProcessGuards } from ${JSON.stringify(GUARDS)}
    installProcessGuards(createLogger('info'))
    ${body}
  `
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: REPO, timeout: 30_000 },
      (error, _stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr })
      },
    )
  })
}

describe('process guards of serve', () => {
  it('an unhandled rejection is logged once (key masked) and the process keeps running', async () => {
    const result = await runWithGuards(`
      Promise.reject(new Error('lost msk_${'A'.repeat(30)}'))
      setTimeout(() => { process.stderr.write('still running\\n'); process.exit(0) }, 200)
    `)
    expect(result.code).toBe(0)
    const lines = result.stderr.split('\n').filter((line) => line.includes('unhandled promise rejection'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('msk_[redacted]')
    expect(result.stderr).toContain('still running')
  })

  it('an uncaught exception is logged as one line and the process exits 1', async () => {
    const result = await runWithGuards(`
      setTimeout(() => { throw new TypeError('boom') }, 10)
      setTimeout(() => process.exit(0), 2_000)
    `)
    expect(result.code).toBe(1)
    expect(result.stderr.split('\n').filter((line) => line.includes('uncaught exception; exiting'))).toHaveLength(1)
    expect(result.stderr).toContain('TypeError: boom')
  })
})
