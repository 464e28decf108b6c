import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { ERROR_CASES } from './memory-cases.js'

describe.each(ENGINES)('spaces and memories, errors cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startMemoryFixture(engine)),
    ERROR_CASES,
  )
})
