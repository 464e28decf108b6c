import * as v from 'valibot'
import { boundedText } from './common.js'

export const DEFAULT_DRAIN_TIMEOUT_SEC = 30
const MAX_DRAIN_TIMEOUT_SEC = 3600

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
  reason: v.optional(boundedText(500), 'not given'),
  waitForQuiesce: v.optional(v.boolean('must be true or false'), false),
})
