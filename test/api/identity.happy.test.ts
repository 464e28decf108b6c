import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'
import { HAPPY_CASES } from './identity-cases.js'

describe.each(ENGINES)('identity API, happy cases (%s)', (engine) => {
  itEachCase(useIdentityFixture(engine), HAPPY_CASES)
})
