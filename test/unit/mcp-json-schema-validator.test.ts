// The JSON Schema validator memsvc gives the MCP SDK in place of Ajv (src/transport/mcp/json-schema-validator.ts).
import { describe, expect, it } from 'vitest'
import { ZodJsonSchemaValidator } from '../../src/transport/mcp/json-schema-validator.js'

/** The shape of schema the SDK validates with it: an elicitation's requestedSchema. */
const REQUESTED_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 1, maximum: 10 },
    colour: { type: 'string', enum: ['red', 'green'] },
  },
  required: ['name'],
} as const

describe('ZodJsonSchemaValidator', () => {
  const validate = new ZodJsonSchemaValidator().getValidator<{ name: string; count?: number }>(REQUESTED_SCHEMA)

  it('accepts what the schema allows and hands the data back', () => {
    expect(validate({ name: 'a', count: 3, colour: 'red' })).toEqual({
      valid: true,
      data: { name: 'a', count: 3, colour: 'red' },
      errorMessage: undefined,
    })
    expect(validate({ name: 'b' }).valid).toBe(true)
  })

  it('refuses what it does not, naming the field', () => {
    for (const [input, field] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'a', count: 11 }, 'count'],
      [{ name: 'a', count: 1.5 }, 'count'],
      [{ name: 'a', colour: 'blue' }, 'colour'],
    ] as const) {
      const result = validate(input)
      expect(result.valid, JSON.stringify(input)).toBe(false)
      expect(result.errorMessage, JSON.stringify(input)).toContain(field)
    }
  })
})
