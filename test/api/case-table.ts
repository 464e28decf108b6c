import { afterAll, beforeAll, describe, it } from 'vitest'
import { TRANSPORTS } from '../support/api-client.js'
import type { Engine } from '../support/databases.js'
import { type IdentityFixture, startIdentityFixture } from '../support/identity-fixture.js'
import { type ApiCase, runCase } from './identity-cases.js'

/** Starts one fixture for the enclosing describe block and returns a getter for it. */
export function useFixture<Fixture extends { stop(): Promise<void> }>(start: () => Promise<Fixture>): () => Fixture {
  let fixture: Fixture | undefined
  beforeAll(async () => {
    fixture = await start()
  }, 240_000)
  afterAll(async () => {
    await fixture?.stop()
  })
  return () => {
    if (!fixture) throw new Error('the fixture has not started')
    return fixture
  }
}

export const useIdentityFixture = (engine: Engine): (() => IdentityFixture) =>
  useFixture(() => startIdentityFixture(engine))

/** One `it` per case and transport: the same table over REST and over gRPC. */
export function itEachCase(fixture: () => IdentityFixture, cases: ApiCase[]): void {
  describe.each(TRANSPORTS)('over %s', (transport) => {
    for (const testCase of cases.filter((entry) => !entry.only || entry.only === transport)) {
      it(testCase.name, () => runCase(fixture(), transport, testCase))
    }
  })
}
