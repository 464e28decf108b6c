import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { LIFECYCLE_ERROR_CASES } from './lifecycle-cases.js'

describe.each(ENGINES)('memory lifecycle, errors cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startMemoryFixture(engine)),
    LIFECYCLE_ERROR_CASES,
  )
})
