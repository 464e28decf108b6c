// Bundled in place of the MCP SDK's validation/ajv-provider.js (MODULE_SUBSTITUTES in
// scripts/build/bundle.ts): the SDK's Server and Client fall back to `new AjvJsonSchemaValidator()`
// when given no validator, and in the executable that fallback is the zod-based one.
export { ZodJsonSchemaValidator as AjvJsonSchemaValidator } from './json-schema-validator.js'
