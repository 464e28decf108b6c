import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startTimeFixture } from '../support/time-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { SECURITY_CASES } from './retrieval-time-cases.js'

describe.each(ENGINES)('time-aware retrieval and listing, security cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startTimeFixture(engine)),
    SECURITY_CASES,
  )
})
