import fc from 'fast-check'
import type * as v from 'valibot'
import { drainSchema } from '../../src/validation/admin.js'
import {
  createApiKeySchema,
  createUserSchema,
  listApiKeysSchema,
  listUsersSchema,
  updateApiKeySchema,
} from '../../src/validation/identity.js'
import {
  createEmbedderSchema,
  createLlmSchema,
  createRerankerSchema,
  listEmbeddersSchema,
  listLlmsSchema,
  listRerankersSchema,
  updateEmbedderSchema,
  updateLlmSchema,
  updateRerankerSchema,
} from '../../src/validation/registry.js'
import type { OperationName } from './api-client.js'

/**
 * Generated bad input for every operation: the field names (nested ones too) come from
 * the valibot request schemas, the values from a pool of hostile ones. Half the inputs
 * start from a valid request and spoil a few fields, so that the generator also reaches
 * the code behind validation; the other half are arbitrary objects over the same names.
 */

const ID_FIELD: Partial<Record<OperationName, string>> = {
  getUser: 'userId',
  deleteUser: 'userId',
  updateApiKey: 'apiKeyId',
  deleteApiKey: 'apiKeyId',
  getEmbedder: 'embedderId',
  updateEmbedder: 'embedderId',
  deleteEmbedder: 'embedderId',
  probeEmbedder: 'embedderId',
  getLlm: 'llmId',
  updateLlm: 'llmId',
  deleteLlm: 'llmId',
  probeLlm: 'llmId',
  getReranker: 'rerankerId',
  updateReranker: 'rerankerId',
  deleteReranker: 'rerankerId',
  probeReranker: 'rerankerId',
}

const SCHEMA: Partial<Record<OperationName, v.GenericSchema>> = {
  createUser: createUserSchema,
  listUsers: listUsersSchema,
  createApiKey: createApiKeySchema,
  listApiKeys: listApiKeysSchema,
  updateApiKey: updateApiKeySchema,
  createEmbedder: createEmbedderSchema,
  listEmbedders: listEmbeddersSchema,
  updateEmbedder: updateEmbedderSchema,
  createLlm: createLlmSchema,
  listLlms: listLlmsSchema,
  updateLlm: updateLlmSchema,
  createReranker: createRerankerSchema,
  listRerankers: listRerankersSchema,
  updateReranker: updateRerankerSchema,
  drain: drainSchema,
}

export const idFieldOf = (operation: OperationName) => ID_FIELD[operation]

const pageToken = fc
  .tuple(
    fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constant(8.64e15), fc.string()),
    fc.oneof(fc.uuid(), fc.string(), fc.constant('-'.repeat(36))),
  )
  .map((pair) => Buffer.from(JSON.stringify(pair)).toString('base64url'))

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    'é',
    '💥',
    '..',
    '../../etc/passwd',
    '%00',
    '%ZZ',
    '__proto__',
    'constructor',
    'null',
    '{"a":',
    'javascript:alert(1)',
  ),
  fc.constantFrom(
    'http://127.0.0.1:1',
    'https://example.test/',
    'ftp://x',
    'http://user:pass@h/',
    '/v1',
    'VLLM',
    'TEXT',
    'API_KEY',
    'ACTIVE',
    'ADMIN',
    '{}',
    '{"k":"\\u0000"}',
  ),
  fc.constantFrom('a'.repeat(300), 'b'.repeat(3000), 'c'.repeat(70_000)),
  fc.uuid(),
  pageToken,
)

const hostileNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    0.5,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 63,
    2 ** 64,
    1e308,
    -1e308,
    253_402_300_800_000,
    8.64e15,
    8.64e15 + 1,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
)

const hostileLabels = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostileString), hostileString, {
  maxKeys: 24,
})

const scalar = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null))

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 2, arbitrary: hostileLabels },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 20 }) },
  { weight: 1, arbitrary: fc.object({ maxDepth: 3, maxKeys: 5 }) },
)

/** The object entries of a schema, through optional wrappers and pipes. */
function entriesOf(schema: unknown): Record<string, unknown> | undefined {
  const node = schema as { entries?: Record<string, unknown>; wrapped?: unknown; pipe?: unknown[] }
  if (node.entries) return node.entries
  if (node.wrapped) return entriesOf(node.wrapped)
  if (node.pipe)
    for (const step of node.pipe)
      if (step !== schema) {
        const found = entriesOf(step)
        if (found) return found
      }
  return undefined
}

/** An object over the schema's field names: each present or not, each hostile or (nested objects) recursively built. */
function objectOver(entries: Record<string, unknown>, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, entry] of Object.entries(entries)) {
    const nested = depth < 3 ? entriesOf(entry) : undefined
    fields[name] = nested ? fc.oneof(objectOver(nested, depth + 1), hostileValue) : hostileValue
  }
  return fc.record(fields, { requiredKeys: [] })
}

const unknownField = fc.dictionary(
  fc.constantFrom('colour', '__proto__', 'constructor', 'id', 'user_id', 'owner_id'),
  hostileValue,
  { maxKeys: 2 },
)

/**
 * Arbitrary inputs for one operation, in the REST-shaped form the API client takes for
 * both transports. `valid` is a valid request to spoil; `knownIds` are real ids to aim at.
 */
export function fuzzInputs(
  operation: OperationName,
  valid: Record<string, unknown>,
  knownIds: string[],
): fc.Arbitrary<Record<string, unknown>> {
  const entries = SCHEMA[operation] ? (entriesOf(SCHEMA[operation]) ?? {}) : {}
  const idField = ID_FIELD[operation]
  const id = fc.oneof(fc.uuid(), fc.constantFrom(...knownIds), hostileString)
  const spoiled = objectOver(entries, 0).map((mutation) => ({ ...valid, ...mutation }))
  const arbitrary = fc.tuple(objectOver(entries, 0), unknownField).map(([fields, extra]) => ({ ...fields, ...extra }))
  return fc
    .tuple(fc.oneof(spoiled, arbitrary), id)
    .map(([input, chosenId]) => (idField ? { ...input, [idField]: chosenId } : input))
}

/** Valid protobuf bytes of a request, spoiled: truncated, bits flipped, or random bytes appended or alone. */
export function spoiledBytes(valid: Buffer): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.integer({ min: 0, max: Math.max(0, valid.length - 1) }).map((length) => valid.subarray(0, length)),
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([position, mask]) => {
      const copy = Buffer.from(valid.length > 0 ? valid : [0])
      copy[position % copy.length]! ^= mask
      return copy
    }),
    fc.uint8Array({ maxLength: 64 }).map((tail) => Buffer.concat([valid, tail])),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  )
}
