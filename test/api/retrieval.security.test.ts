import { describe } from 'vitest'
import { ENGINES } from '../support/databases.js'
import { startRetrievalFixture } from '../support/retrieval-fixture.js'
import { itEachCase, useFixture } from './case-table.js'
import { SECURITY_CASES } from './retrieval-cases.js'

describe.each(ENGINES)('retrieval, security cases (%s)', (engine) => {
  itEachCase(
    useFixture(() => startRetrievalFixture(engine)),
    SECURITY_CASES,
  )
})
