import * as v from 'valibot'
import { AppError, type FieldViolation } from '../errors/app-error.js'
import { MAX_ERROR_DETAILS } from './request-limits.js'

/**
 * Field names echo client text (a label key), so they are cut short: a 70,000-character
 * key must not come back as a 70,000-character error, nor as gRPC trailers larger than
 * a client accepts.
 */
const MAX_FIELD_KEY_LENGTH = 80
const shortKey = (key: unknown) => {
  const text = String(key)
  return text.length > MAX_FIELD_KEY_LENGTH ? `${text.slice(0, MAX_FIELD_KEY_LENGTH)}…` : text
}

function fieldName(issue: v.BaseIssue<unknown>, prefix: string): string {
  const path = (issue.path ?? []).map((item) => shortKey(item.key)).join('.')
  return [prefix, path].filter(Boolean).join('.') || prefix || 'body'
}

function describeIssue(issue: v.BaseIssue<unknown>): string {
  // A strict object reports a missing key with received "undefined" and an extra key with its name.
  if (issue.kind === 'schema' && issue.received === 'undefined') return 'is required'
  if (issue.type === 'strict_object') return 'unknown field'
  return issue.message
}

/**
 * Validates input against a schema and returns the typed output, or throws one
 * INVALID_ARGUMENT naming every field at fault. Both transports go through here.
 */
export function parseInput<const Schema extends v.GenericSchema>(
  schema: Schema,
  input: unknown,
  prefix = '',
): v.InferOutput<Schema> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true })
  if (result.success) return result.output
  const details: FieldViolation[] = result.issues.slice(0, MAX_ERROR_DETAILS).map((issue) => ({
    field: fieldName(issue, prefix),
    description: describeIssue(issue),
  }))
  const first = details[0]!
  const others = result.issues.length - 1
  const unlisted = result.issues.length - details.length
  const more = others === 0 ? '' : ` (and ${others} more${unlisted > 0 ? `, ${unlisted} of them not listed` : ''})`
  throw new AppError('INVALID_ARGUMENT', `${first.field}: ${first.description}${more}`, details)
}
