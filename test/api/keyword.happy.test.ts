import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startKeywordFixture } from '../support/keyword-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { HAPPY_CASES } from './keyword-cases.js'

describe.each(ENGINES)('keyword search and keyword-only spaces, happy cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startKeywordFixture(engine)),
    HAPPY_CASES,
  )
})
