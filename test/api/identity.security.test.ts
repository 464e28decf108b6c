import { describe, expect, it } from 'vitest'
import { hashApiKey } from '../../src/domain/api-key-format.js'
import { TRANSPORTS } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'
import { HAPPY_CASES, runCase, SECURITY_CASES } from './identity-cases.js'

describe.each(ENGINES)('identity API, security cases (%s)', (engine) => {
  const currentFixture = useIdentityFixture(engine)
  itEachCase(currentFixture, SECURITY_CASES)

  it('no raw key or key hash appears in any response but its create response, in the log, or in the database', async () => {
    const fixture = currentFixture()
    // Drive every operation (the happy table) through this fixture so that all of their responses and log lines are scanned.
    for (const transport of TRANSPORTS) {
      for (const testCase of HAPPY_CASES.filter((entry) => !entry.only || entry.only === transport))
        await runCase(fixture, transport, testCase)
      await fixture.call(transport, 'listApiKeys', { maxResults: 1000 }, fixture.root.apiKey)
      await fixture.call(transport, 'listApiKeys', { ownerId: fixture.alice.userId }, fixture.root.apiKey)
      await fixture.call(transport, 'listUsers', {}, fixture.root.apiKey)
      await fixture.call(transport, 'getMe', {}, fixture.alice.apiKey)
    }
    await fixture.server.server.context.authenticator.flushUsage()
    const secrets = [...fixture.rawKeys].flatMap((key) => [
      key,
      hashApiKey(key).toString('hex'),
      hashApiKey(key).toString('base64'),
    ])
    expect(fixture.rawKeys.size).toBeGreaterThan(20)
    const nonCreateResponses = fixture.responses
      .filter((body: any) => body?.rawApiKey === undefined && body?.rootApiKey === undefined)
      .map((body) => JSON.stringify(body) ?? '')
    expect(nonCreateResponses.length).toBeGreaterThan(50)
    for (const secret of secrets) {
      for (const body of nonCreateResponses) expect(body.includes(secret), 'secret in a response').toBe(false)
      for (const line of fixture.server.logs) expect(line.includes(secret), `secret in log line: ${line}`).toBe(false)
    }
    const rows = await fixture.server.server.context.sql`select * from api_keys`
    const stored = JSON.stringify(rows.map((row) => ({ ...row, key_hash: undefined })))
    for (const key of fixture.rawKeys) expect(stored.includes(key)).toBe(false)
    expect(fixture.server.logs.length).toBeGreaterThan(0)
  })
})
