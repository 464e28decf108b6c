import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { BAD_INPUT_CASES } from './bad-input-cases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'

describe.each(ENGINES)('bad input is refused naming the field, never a 500 (%s)', (engine) => {
  itEachCase(useIdentityFixture(engine), BAD_INPUT_CASES)
})
