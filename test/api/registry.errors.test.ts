import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'
import { ERROR_CASES } from './registry-cases.js'

describe.each(ENGINES)('embedder, LLM and reranker registry, errors cases (%s)', (engine) => {
  itEachCase(useIdentityFixture(engine), ERROR_CASES)
})
