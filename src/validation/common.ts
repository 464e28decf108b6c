import * as v from 'valibot'

export const MAX_LABELS = 20
export const LABEL_KEY_PATTERN = /^[a-z0-9._-]{1,63}$/
export const MAX_LABEL_VALUE_LENGTH = 255
export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 1000
/** Guards the JSON column and the log lines against absurd input; far above any real use. */
export const MAX_TEXT_LENGTH = 2048

export const uuidSchema = v.pipe(v.string('must be a string'), v.uuid('must be a UUID'))

export const labelsSchema = v.pipe(
  // Counted before each entry is checked: a map of 100,000 labels would otherwise hold the event loop for a second.
  v.custom<Record<string, unknown>>((value) => typeof value !== 'object' || value === null || Object.keys(value).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`),
  v.record(
    v.pipe(v.string(), v.regex(LABEL_KEY_PATTERN, 'label keys are 1-63 characters of a-z, 0-9, ".", "_" or "-"')),
    v.pipe(v.string('label values must be strings'), v.maxLength(MAX_LABEL_VALUE_LENGTH, `label values are at most ${MAX_LABEL_VALUE_LENGTH} characters`)),
    'must be an object of string values',
  ),
  v.check((labels) => Object.keys(labels).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`),
)

/** Epoch milliseconds as a JSON number or a decimal string (the spec's example sends a string). */
export const epochMillisSchema = v.union(
  [
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(8.64e15)),
    v.pipe(v.string(), v.regex(/^\d{1,16}$/), v.transform(Number), v.maxValue(8.64e15)),
  ],
  'must be epoch milliseconds (an integer or a decimal string)',
)

/** Page size from JSON or a query string. */
export const pageSizeSchema = v.union(
  [
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_PAGE_SIZE)),
    v.pipe(v.string(), v.regex(/^\d{1,4}$/), v.transform(Number), v.minValue(1), v.maxValue(MAX_PAGE_SIZE)),
  ],
  `must be an integer from 1 to ${MAX_PAGE_SIZE}`,
)

export const pageTokenSchema = v.pipe(v.string(), v.maxLength(512, 'is not a valid page token'))

export const boundedText = (maxLength = MAX_TEXT_LENGTH) => v.pipe(v.string('must be a string'), v.maxLength(maxLength, `at most ${maxLength} characters`))

/** Labels change by replacing the whole set or by merging into it, never both in one request. */
export const labelUpdateFields = {
  replaceLabels: v.optional(labelsSchema),
  mergeLabels: v.optional(labelsSchema),
}

export function oneLabelUpdateOnly<Input extends { replaceLabels?: unknown; mergeLabels?: unknown }>() {
  return v.forward(
    v.check((input: Input) => !(input.replaceLabels && input.mergeLabels), 'send replaceLabels or mergeLabels, not both'),
    ['mergeLabels'] as never,
  )
}
