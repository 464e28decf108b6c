// Which starts replace themselves with the small-host memory settings, and with what
// (src/runtime/small-host-process.ts). The replacement itself is an e2e case (test/e2e/executable.test.ts).

import { describe, expect, it } from 'vitest'
import {
  externalServerEnvironment,
  REEXEC_ORIGIN_ENV,
  reexecOffsetMs,
  servesEmbedded,
  servesExternal,
  smallHostEnvironment,
} from '../../src/runtime/small-host-process.js'

describe('which starts are embedded servers', () => {
  it.each([
    [['serve'], {}],
    [['serve', '--data-dir', '/var/lib/memsvc'], {}],
    [['-Dservice.metrics.secret=x', 'serve'], {}],
  ])('%j is one', (args, env) => {
    expect(servesEmbedded(args, env)).toBe(true)
  })

  it.each([
    [['serve', '--db-url', 'jdbc:postgresql://db/memsvc'], {}],
    [['serve', '--db-url=jdbc:postgresql://db/memsvc'], {}],
    [['serve', '--dbUrl', 'x'], {}],
    [['serve'], { DB_URL: 'jdbc:postgresql://db/memsvc' }],
    [['serve', '--help'], {}],
    [['apikey', 'list'], {}],
    [[], {}],
  ])('%j with %j is not', (args, env) => {
    expect(servesEmbedded(args, env)).toBe(false)
  })
})

describe('which starts are servers on PostgreSQL', () => {
  it.each([
    [['serve', '--db-url', 'jdbc:postgresql://db/memsvc'], {}],
    [['serve', '--db-url=jdbc:postgresql://db/memsvc'], {}],
    [['serve'], { DB_URL: 'jdbc:postgresql://db/memsvc' }],
  ])('%j with %j is one', (args, env) => {
    expect(servesExternal(args, env)).toBe(true)
  })

  it.each([
    [['serve'], {}],
    [['serve', '--db-url', 'x', '--help'], {}],
    [['apikey', 'list', '--db-url', 'x'], {}],
  ])('%j with %j is not', (args, env) => {
    expect(servesExternal(args, env)).toBe(false)
  })
})

describe("the server on PostgreSQL's replacement environment", () => {
  it('adds only the young generation size, after any NODE_OPTIONS, and the first start time', () => {
    expect(externalServerEnvironment({ PATH: '/bin', NODE_OPTIONS: '--enable-source-maps' }, 1_000)).toEqual({
      PATH: '/bin',
      NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=16',
      [REEXEC_ORIGIN_ENV]: '1000',
    })
  })

  it("keeps the operator's own young generation size, and never replaces a replacement", () => {
    expect(externalServerEnvironment({ NODE_OPTIONS: '--max-semi-space-size=64' }, 1_000)).toBeUndefined()
    expect(externalServerEnvironment({ [REEXEC_ORIGIN_ENV]: '1000' }, 2_000)).toBeUndefined()
  })
})

describe('the replacement environment', () => {
  it('adds the malloc threshold, the semi-space after any NODE_OPTIONS, and the first start time', () => {
    expect(smallHostEnvironment({ PATH: '/bin', NODE_OPTIONS: '--enable-source-maps' }, 1_000)).toEqual({
      PATH: '/bin',
      MALLOC_MMAP_THRESHOLD_: '131072',
      NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=1',
      [REEXEC_ORIGIN_ENV]: '1000',
    })
  })

  it("keeps the operator's own values", () => {
    expect(
      smallHostEnvironment({ MALLOC_MMAP_THRESHOLD_: '65536', NODE_OPTIONS: '--max-semi-space-size=4' }, 1_000),
    ).toBeUndefined()
    expect(smallHostEnvironment({ MALLOC_MMAP_THRESHOLD_: '65536' }, 1_000)).toMatchObject({
      MALLOC_MMAP_THRESHOLD_: '65536',
      NODE_OPTIONS: '--max-semi-space-size=1',
    })
  })

  it('never replaces a replacement', () => {
    expect(smallHostEnvironment({ [REEXEC_ORIGIN_ENV]: '1000' }, 2_000)).toBeUndefined()
  })

  it('counts start-up from the first process when there was one', () => {
    expect(reexecOffsetMs({})).toBe(0)
    expect(reexecOffsetMs({ [REEXEC_ORIGIN_ENV]: 'not a time' })).toBe(0)
    const offset = reexecOffsetMs({ [REEXEC_ORIGIN_ENV]: String(performance.timeOrigin - 40) })
    expect(offset).toBeGreaterThanOrEqual(39)
    expect(offset).toBeLessThanOrEqual(41)
  })
})
