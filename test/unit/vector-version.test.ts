// Which pgvector versions memories run on (src/db/vector-storage.ts tooOldVectorReason):
// every index holds halfvec, which 0.7 added.

import { describe, expect, it } from 'vitest'
import { tooOldVectorReason } from '../../src/db/vector-storage.js'

describe('the pgvector versions memories run on', () => {
  it.each(['0.7.0', '0.8.0', '0.8.6', '1.0.0'])('%s is enough', (version) => {
    expect(tooOldVectorReason(version)).toBeUndefined()
  })

  it.each(['0.5.1', '0.6.2'])('%s is refused with what to do', (version) => {
    expect(tooOldVectorReason(version)).toMatch(
      new RegExp(
        `^pgvector ${version.replace(/\./g, '\\.')} is installed .* 0\\.8 or newer .*ALTER EXTENSION vector UPDATE`,
      ),
    )
  })
})
