import { describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { connectMcp } from '../support/mcp-client.js'
import { DAY_SECONDS, HARBOR_TOPIC, startTimeFixture, TWIN_TOPIC } from '../support/time-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { HAPPY_CASES } from './retrieval-time-cases.js'

describe.each(ENGINES)('time-aware retrieval and listing, happy cases (%s)', (engine) => {
  const fixture = useFixture(() => startTimeFixture(engine))
  itEachCase(fixture, HAPPY_CASES)

  it('over MCP, retrieve_memories takes recencyHalfLifeSeconds, recencyWeight, includeExpired and time filters', async () => {
    const { server, alice, twins, expiring, timed } = fixture()
    const mcp = await connectMcp(server.restUrl, alice.apiKey)
    try {
      const recent = await mcp.call('retrieve_memories', {
        message: TWIN_TOPIC,
        spaceIds: [twins.spaceId],
        mode: 'VECTOR',
        recencyHalfLifeSeconds: 7 * DAY_SECONDS,
        recencyWeight: 0.5,
      })
      expect(recent.isError).toBe(false)
      expect(recent.body.chunks.map((chunk: any) => twins.keyOf.get(chunk.memoryId))).toEqual(['newer', 'older'])
      expect(recent.body.chunks[0].scoreParts).toMatchObject({ recencyWeight: 0.5, recency: expect.any(Number) })
      const harbor = { message: HARBOR_TOPIC, spaceIds: [expiring.spaceId] }
      const current = await mcp.call('retrieve_memories', harbor)
      expect(current.body.chunks.map((chunk: any) => expiring.keyOf.get(chunk.memoryId))).not.toContain('expired')
      const all = await mcp.call('retrieve_memories', { ...harbor, includeExpired: true })
      expect(all.body.chunks.map((chunk: any) => expiring.keyOf.get(chunk.memoryId))).toContain('expired')
      const filtered = await mcp.call('retrieve_memories', {
        message: 'lighthouse storm',
        spaceIds: [timed.spaceId],
        filter: "createdAt >= '2026-01-01' AND createdAt < '2026-01-07T12:00:00Z'",
      })
      expect(filtered.body.chunks.map((chunk: any) => timed.keyOf.get(chunk.memoryId))).toEqual(['mid'])
    } finally {
      await mcp.close()
    }
  })
})
