import { describe, expect, it } from 'vitest'
import { createLogger } from '../../src/observability/logger.js'

const RAW_KEY = `msk_${'A1b2C3d4E5'.repeat(4)}zz9XyZ`

function capture(level: 'debug' | 'info' | 'warn' | 'error' = 'debug') {
  const lines: string[] = []
  return { lines, log: createLogger(level, (line) => lines.push(line)) }
}

describe('logger format', () => {
  it('writes one line: time, level, message, key=value fields', () => {
    const { lines, log } = capture()
    log.info('listening', { rest: 'http://127.0.0.1:8080/v1', attempt: 2, tls: 'off' })
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}listening rest=http:\/\/127\.0\.0\.1:8080\/v1 attempt=2 tls=off$/,
    )
  })

  it('quotes values with spaces, quotes or equals signs; skips undefined fields', () => {
    const { lines, log } = capture()
    log.warn('x', { reason: 'two words', eq: 'a=b', gone: undefined })
    expect(lines[0]).toMatch(/ WARN {2}x reason="two words" eq="a=b"$/)
  })

  it('prints an Error field as its message', () => {
    const { lines, log } = capture()
    log.error('failed', { error: new Error('connect ECONNREFUSED 127.0.0.1:5432') })
    expect(lines[0]).toContain('error="connect ECONNREFUSED 127.0.0.1:5432"')
  })

  it('drops lines below the threshold', () => {
    const { lines, log } = capture('warn')
    log.debug('d')
    log.info('i')
    log.warn('w')
    log.error('e')
    expect(lines.map((line) => line.split(' ')[1])).toEqual(['WARN', 'ERROR'])
  })
})

describe('logger redaction', () => {
  it.each([
    'password',
    'dbPassword',
    'apiKey',
    'rawApiKey',
    'secret',
    'metricsSecret',
    'token',
    'nextToken',
    'authorization',
    'keyHash',
    'encryptionKey',
  ])('masks the value of a field named %s', (name) => {
    const { lines, log } = capture()
    log.info('event', { [name]: 'hunter2-value' })
    expect(lines[0]).toContain(`${name}=[redacted]`)
    expect(lines[0]).not.toContain('hunter2-value')
  })

  it.each(['apiKeyId', 'api_key_id', 'keyPrefix', 'key_prefix', 'userId'])(
    'keeps identifiers and prefixes such as %s',
    (name) => {
      const { lines, log } = capture()
      log.info('event', { [name]: 'visible-value' })
      expect(lines[0]).toContain(`${name}=visible-value`)
    },
  )

  it('masks raw msk_ keys in the message and in any field value', () => {
    const { lines, log } = capture()
    log.info(`got key ${RAW_KEY} from client`, {
      detail: `header Bearer ${RAW_KEY}`,
      error: new Error(`bad key ${RAW_KEY}`),
      list: [RAW_KEY],
    })
    expect(lines[0]).not.toContain(RAW_KEY)
    expect(lines[0]).not.toContain(RAW_KEY.slice(4, 24))
    expect(lines[0]).toContain('got key msk_[redacted] from client')
    expect(lines[0]).toContain('detail="header Bearer msk_[redacted]"')
    expect(lines[0]).toContain('error="bad key msk_[redacted]"')
  })

  it('masks secret-named fields nested inside an object field', () => {
    const { lines, log } = capture()
    log.info('config', {
      database: { host: 'db', user: 'app', password: 'nested-pw-value' },
      tls: { keyFile: '/x', secret: 'nested-secret' },
    })
    expect(lines[0]).not.toContain('nested-pw-value')
    expect(lines[0]).not.toContain('nested-secret')
    expect(lines[0]).toContain('database="{\\"host\\":\\"db\\",\\"user\\":\\"app\\",\\"password\\":\\"[redacted]\\"}"')
  })

  it('leaves ordinary text alone', () => {
    const { lines, log } = capture()
    log.info('msk_ alone is not a key', { note: 'msk_short' })
    expect(lines[0]).toContain('msk_ alone is not a key')
    expect(lines[0]).toContain('note=msk_short')
  })
})
