import * as v from 'valibot'
import { DEFAULT_PAGE_SIZE, MAX_LABEL_KEY_LENGTH, MAX_LABEL_VALUE_LENGTH, MAX_LABELS, MAX_PAGE_SIZE } from './limits.js'

/** Defined in limits.ts, which the console shares; the server's code reads them from here as well. */
export { DEFAULT_PAGE_SIZE, MAX_LABEL_VALUE_LENGTH, MAX_LABELS, MAX_PAGE_SIZE }
export const LABEL_KEY_PATTERN = new RegExp(`^[a-z0-9._-]{1,${MAX_LABEL_KEY_LENGTH}}$`)
/** Guards the JSON column and the log lines against absurd input; far above any real use. */
export const MAX_TEXT_LENGTH = 2048

/** A UTF-16 half without its other half: no UTF-8 encoding exists, so PostgreSQL, JSON encoders and HTTP/2 headers reject it. */
export const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
const NUL_OR_LONE_SURROGATE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** True when the text can be stored and sent back: PostgreSQL text and jsonb hold neither NUL nor an unpaired surrogate. */
export const isStorableText = (text: string) => !NUL_OR_LONE_SURROGATE.test(text)

/**
 * Every string the API accepts starts here, so that no field can carry NUL or a lone
 * surrogate to the database (where it would fail as a 500) or into a gRPC trailer.
 */
export const textSchema = (message = 'must be a string') =>
  v.pipe(v.string(message), v.check(isStorableText, 'must not contain NUL characters or unpaired UTF-16 surrogates'))

/** Where a JSON value holds what PostgreSQL's jsonb cannot store as sent, and why. */
interface JsonValueProblem {
  path: string[]
  description: string
}

const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired UTF-16 surrogates'

/**
 * The first thing in a JSON value (metadata) that would not come back as it was sent: NUL or a lone
 * surrogate in a key or a string (jsonb refuses both: a 500 before this), or a number that is not
 * finite (JSON.parse reads 1e999 as Infinity, and JSON.stringify writes it as null). Iterative, so no
 * nesting can exhaust the stack.
 */
export function unstorableJson(value: unknown, maxDepth: number): JsonValueProblem | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: item, path } = next
    if (typeof item === 'string') {
      if (!isStorableText(item)) return { path, description: UNSTORABLE_TEXT }
    } else if (typeof item === 'number') {
      if (!Number.isFinite(item)) return { path, description: 'must be a finite number' }
    } else if (item !== null && typeof item === 'object' && path.length >= maxDepth) {
      return { path, description: `is nested more than ${maxDepth} levels deep` }
    } else if (Array.isArray(item)) {
      for (const [index, element] of item.entries()) pending.push({ value: element, path: [...path, String(index)] })
    } else if (item !== null && typeof item === 'object') {
      for (const [key, member] of Object.entries(item)) {
        if (!isStorableText(key)) return { path: [...path, key], description: `keys ${UNSTORABLE_TEXT}` }
        pending.push({ value: member, path: [...path, key] })
      }
    }
  }
  return undefined
}

/** A JSON value that is stored as sent and nested at most `maxDepth` levels, or a 400 naming the member at fault (`metadata.a.0`). */
export const storableJson = <Value>(maxDepth: number) =>
  v.rawCheck<Value>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const problem = unstorableJson(dataset.value, maxDepth)
    if (!problem) return
    const [first, ...rest] = problem.path.map(
      (key): v.ObjectPathItem => ({ type: 'object', origin: 'value', input: {}, key, value: undefined }),
    )
    addIssue({ message: problem.description, ...(first ? { path: [first, ...rest] } : {}) })
  })

/**
 * A list of at most `max` items. The length is checked before any item is: valibot checks every
 * item first and makes an issue for each bad one, so ten million elements made ten million issues
 * (2 GB for a 4 MB body) before a maxLength after the items could refuse them.
 */
export const listOf = <const Item extends v.GenericSchema>(item: Item, max: number, tooMany: string) =>
  v.pipe(
    v.custom<unknown[]>((value) => !Array.isArray(value) || value.length <= max, tooMany),
    v.array(item, 'must be a list'),
  )

export const uuidSchema = v.pipe(textSchema(), v.uuid('must be a UUID'))

export const labelsSchema = v.pipe(
  // Counted before each entry is checked: a map of 100,000 labels would otherwise hold the event loop for a second.
  v.custom<Record<string, unknown>>(
    (value) => typeof value !== 'object' || value === null || Object.keys(value).length <= MAX_LABELS,
    `at most ${MAX_LABELS} labels`,
  ),
  v.record(
    v.pipe(
      textSchema(),
      v.regex(LABEL_KEY_PATTERN, `label keys are 1-${MAX_LABEL_KEY_LENGTH} characters of a-z, 0-9, ".", "_" or "-"`),
    ),
    v.pipe(
      textSchema('label values must be strings'),
      v.maxLength(MAX_LABEL_VALUE_LENGTH, `label values are at most ${MAX_LABEL_VALUE_LENGTH} characters`),
    ),
    'must be an object of string values',
  ),
  v.check((labels) => Object.keys(labels).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`),
)

/**
 * The last millisecond of year 9999. ISO 8601 and PostgreSQL's timestamptz both stop about
 * there (JavaScript's Date reaches 8.64e15, PostgreSQL does not), and no key needs to outlive it.
 */
export const MAX_EPOCH_MILLIS = 253_402_300_799_999
const EPOCH_RANGE_MESSAGE = 'must be a time from 1970 to the end of year 9999 (epoch milliseconds)'

/** Epoch milliseconds as a JSON number or a decimal string (the spec's example sends a string). */
export const epochMillisSchema = v.union(
  [
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_EPOCH_MILLIS, EPOCH_RANGE_MESSAGE)),
    v.pipe(textSchema(), v.regex(/^\d{1,16}$/), v.transform(Number), v.maxValue(MAX_EPOCH_MILLIS, EPOCH_RANGE_MESSAGE)),
  ],
  'must be epoch milliseconds (an integer or a decimal string)',
)

/** Page size from JSON or a query string. */
export const pageSizeSchema = v.union(
  [
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_PAGE_SIZE)),
    v.pipe(textSchema(), v.regex(/^\d{1,4}$/), v.transform(Number), v.minValue(1), v.maxValue(MAX_PAGE_SIZE)),
  ],
  `must be an integer from 1 to ${MAX_PAGE_SIZE}`,
)

export const pageTokenSchema = v.pipe(textSchema(), v.maxLength(512, 'is not a valid page token'))

/** The paging fields of every list request. */
export const pageFields = {
  maxResults: v.optional(pageSizeSchema),
  nextToken: v.optional(pageTokenSchema),
}

export const boundedText = (maxLength = MAX_TEXT_LENGTH) =>
  v.pipe(textSchema(), v.maxLength(maxLength, `at most ${maxLength} characters`))

/** Labels change by replacing the whole set or by merging into it, never both in one request. */
export const labelUpdateFields = {
  replaceLabels: v.optional(labelsSchema),
  mergeLabels: v.optional(labelsSchema),
}

export function oneLabelUpdateOnly<Input extends { replaceLabels?: unknown; mergeLabels?: unknown }>() {
  return v.forward(
    v.check(
      (input: Input) => !(input.replaceLabels && input.mergeLabels),
      'send replaceLabels or mergeLabels, not both',
    ),
    ['mergeLabels'] as never,
  )
}

/** A metadata filter expression; its grammar, length and depth are checked when the domain parses it (src/domain/filters). */
export const filterTextSchema = textSchema()

export const numberFrom = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.minValue(min, `must be from ${min} to ${max}`),
    v.maxValue(max, `must be from ${min} to ${max}`),
  )

export const integerFrom = (min: number, max: number) => v.pipe(numberFrom(min, max), v.integer('must be an integer'))

/** As integerFrom, but a fraction is refused before the range is checked, and as "a whole number" (memories, exports). */
export const wholeNumberFrom = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be from ${min} to ${max}`),
    v.maxValue(max, `must be from ${min} to ${max}`),
  )

export const choiceOf = <const T extends readonly string[]>(values: T) =>
  v.picklist(values, `must be one of ${values.join(', ')}`)
