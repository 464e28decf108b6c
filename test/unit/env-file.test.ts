import { describe, expect, it } from 'vitest'
import { parseEnvFile, renderEnvFile } from '../../src/install/env-file.js'

describe('the service env file', () => {
  it('round-trips a DB_URL with quotes and backslashes through systemd quoting', () => {
    const dbUrl = 'postgres://u:p"a\\ss@db:5432/memsvc?sslmode=require'
    const parsed = parseEnvFile(
      renderEnvFile({
        restPort: 8080,
        grpcPort: 9090,
        shutdownTimeoutSec: 30,
        dbUrl,
        debug: false,
        metricsSecret: 's3cr3t',
      }),
    )
    expect(parsed).toEqual({
      SERVICE_REST_PORT: '8080',
      SERVICE_GRPC_PORT: '9090',
      SERVICE_SHUTDOWN_TIMEOUT_SEC: '30',
      SERVICE_LOG_LEVEL: 'info',
      DB_URL: dbUrl,
      SERVICE_METRICS_SECRET: 's3cr3t',
    })
  })

  it('the example (no secret given) sets no secret and no debug port; a debug install sets the loopback debug port', () => {
    const example = parseEnvFile(
      renderEnvFile({ restPort: 8080, grpcPort: 9090, shutdownTimeoutSec: 30, debug: false }),
    )
    expect(example.SERVICE_METRICS_SECRET).toBeUndefined()
    expect(example.SERVICE_DEBUG_DB_LISTEN).toBeUndefined()
    expect(
      parseEnvFile(renderEnvFile({ restPort: 8080, grpcPort: 9090, shutdownTimeoutSec: 30, debug: true }))
        .SERVICE_DEBUG_DB_LISTEN,
    ).toBe('127.0.0.1:5432')
  })
})
