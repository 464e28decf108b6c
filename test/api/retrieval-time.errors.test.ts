import { describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { connectMcp } from '../support/mcp-client.js'
import { startTimeFixture, TWIN_TOPIC } from '../support/time-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { ERROR_CASES } from './retrieval-time-cases.js'

describe.each(ENGINES)('time-aware retrieval and listing, error cases (%s)', (engine) => {
  const fixture = useFixture(() => startTimeFixture(engine))
  itEachCase(fixture, ERROR_CASES)

  it("over MCP, a bad recency argument or time filter is a tool error naming the tool's own field", async () => {
    const { server, alice, twins } = fixture()
    const mcp = await connectMcp(server.restUrl, alice.apiKey)
    try {
      const base = { message: TWIN_TOPIC, spaceIds: [twins.spaceId] }
      for (const [args, field] of [
        [{ recencyHalfLifeSeconds: 3600, recencyWeight: 2 }, 'recencyWeight'],
        [{ recencyHalfLifeSeconds: 0 }, 'recencyHalfLifeSeconds'],
        [{ recencyWeight: 0.5 }, 'recencyHalfLifeSeconds'],
        [{ filter: "updatedAt < 'last week'" }, 'filter'],
      ] as const) {
        const answer = await mcp.call('retrieve_memories', { ...base, ...args })
        expect(answer.isError, JSON.stringify(args)).toBe(true)
        expect(answer.body.error, JSON.stringify(args)).toMatchObject({
          code: 400,
          status: 'INVALID_ARGUMENT',
          details: [{ field }],
        })
      }
    } finally {
      await mcp.close()
    }
  })
})
