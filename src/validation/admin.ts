import * as v from 'valibot'
import { boundedText } from './common.js'
import { DEFAULT_DRAIN_TIMEOUT_SEC, MAX_DRAIN_REASON_LENGTH, MAX_DRAIN_TIMEOUT_SEC } from './limits.js'

/** Defined in limits.ts, which the console shares; the server's code reads it from here as well. */
export { DEFAULT_DRAIN_TIMEOUT_SEC }

export const drainSchema = v.strictObject({
  timeoutSec: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.integer('must be a whole number of seconds'),
      v.minValue(0),
      v.maxValue(MAX_DRAIN_TIMEOUT_SEC),
    ),
    DEFAULT_DRAIN_TIMEOUT_SEC,
  ),
  reason: v.optional(boundedText(MAX_DRAIN_REASON_LENGTH), 'not given'),
  waitForQuiesce: v.optional(v.boolean('must be true or false'), false),
})
