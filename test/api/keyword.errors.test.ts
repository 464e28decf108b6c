import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startKeywordFixture } from '../support/keyword-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { ERROR_CASES } from './keyword-cases.js'

describe.each(ENGINES)('keyword search and keyword-only spaces, refused (%s)', (engine) => {
  itEachCase(
    useFixture(() => startKeywordFixture(engine)),
    ERROR_CASES,
  )
})
