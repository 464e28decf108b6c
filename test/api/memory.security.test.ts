import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { SECURITY_CASES } from './memory-cases.js'

describe.each(ENGINES)('spaces and memories, security cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startMemoryFixture(engine)),
    SECURITY_CASES,
  )
})
