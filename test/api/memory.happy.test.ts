import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { HAPPY_CASES } from './memory-cases.js'

describe.each(ENGINES)('spaces and memories, happy cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startMemoryFixture(engine)),
    HAPPY_CASES,
  )
})
