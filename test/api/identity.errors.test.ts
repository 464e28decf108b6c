import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'
import { ERROR_CASES } from './identity-cases.js'

describe.each(ENGINES)('identity API, errors cases (%s)', (engine) => {
  itEachCase(useIdentityFixture(engine), ERROR_CASES)
})
