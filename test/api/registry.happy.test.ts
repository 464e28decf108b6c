import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'
import { HAPPY_CASES } from './registry-cases.js'

describe.each(ENGINES)('embedder, LLM and reranker registry, happy cases (%s)', (engine) => {
  itEachCase(useIdentityFixture(engine), HAPPY_CASES)
})
