import type {
  JsonSchemaType,
  JsonSchemaValidator,
  JsonSchemaValidatorResult,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js'
import * as z from 'zod/v4'

/**
 * The JSON Schema validator the MCP SDK's Server is given, built on zod, which the SDK
 * already uses for every protocol message. The SDK's default is Ajv: it would be a second
 * schema library in the executable, and each stateless request builds a new Server, which
 * would build (and compile formats into) a new Ajv instance every time. The Server only
 * validates with it what a client answers to an elicitation request.
 */
export class ZodJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const compiled = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0])
    return (input: unknown): JsonSchemaValidatorResult<T> => {
      const result = compiled.safeParse(input)
      if (result.success) return { valid: true, data: result.data as T, errorMessage: undefined }
      return { valid: false, data: undefined, errorMessage: z.prettifyError(result.error) }
    }
  }
}
