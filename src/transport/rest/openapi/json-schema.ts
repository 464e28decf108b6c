// valibot → JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) with @valibot/to-json-schema.
// Checks that JSON Schema cannot say (v.check, v.custom: "names the same space twice") are left
// out; the server still applies them, and answers 400 naming the field.
import { type JsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import { LABEL_KEY_PATTERN, labelsSchema, MAX_LABEL_VALUE_LENGTH, MAX_LABELS } from '../../../validation/common.js'
import {
  fixedTextSearchLanguageSchema,
  MAX_METADATA_PROPERTIES,
  metadataSchema,
  TEXT_SEARCH_LANGUAGE_FIXED,
} from '../../../validation/memory.js'

export type { JsonSchema }

/**
 * Schemas that open with v.custom (checked before their entries), which the converter reads as
 * "anything". They are components of their own, so every use is a `$ref` to the text here.
 */
const WRITTEN_BY_HAND: Record<string, { schema: v.GenericSchema; json: JsonSchema }> = {
  Labels: {
    schema: labelsSchema,
    json: {
      type: 'object',
      maxProperties: MAX_LABELS,
      propertyNames: { pattern: LABEL_KEY_PATTERN.source },
      additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE_LENGTH },
    },
  },
  Metadata: {
    schema: metadataSchema,
    json: {
      type: 'object',
      maxProperties: MAX_METADATA_PROPERTIES,
      description: 'Any JSON object; filters match on it.',
    },
  },
  FixedTextSearchLanguage: {
    schema: fixedTextSearchLanguageSchema,
    json: { not: {}, description: `A space's textSearchLanguage ${TEXT_SEARCH_LANGUAGE_FIXED}: present, it is a 400.` },
  },
}

/**
 * Converts named schemas into components: a schema named here that occurs inside another
 * becomes a `$ref` to `#/components/schemas/<name>`. Requests are described as they are sent
 * (typeMode "input": before any transform), views as they are answered.
 */
export function componentSchemas(
  named: Record<string, v.GenericSchema>,
  typeMode: 'input' | 'output',
): Record<string, JsonSchema> {
  const handWritten = Object.fromEntries(Object.entries(WRITTEN_BY_HAND).map(([name, entry]) => [name, entry.schema]))
  const converted = toJsonSchemaDefs(
    { ...handWritten, ...named },
    { target: 'draft-2020-12', typeMode, errorMode: 'ignore' },
  )
  for (const [name, entry] of Object.entries(WRITTEN_BY_HAND)) converted[name] = entry.json
  return JSON.parse(JSON.stringify(converted).replaceAll('"#/$defs/', '"#/components/schemas/')) as Record<
    string,
    JsonSchema
  >
}
