import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { LIFECYCLE_SECURITY_CASES } from './lifecycle-cases.js'

describe.each(ENGINES)('memory lifecycle, security cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startMemoryFixture(engine)),
    LIFECYCLE_SECURITY_CASES,
  )
})
