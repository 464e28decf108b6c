import * as v from 'valibot'
import {
  boundedText,
  choiceOf,
  labelsSchema,
  labelUpdateFields,
  listOf,
  numberFrom,
  oneLabelUpdateOnly,
  pageFields,
  textSchema,
  uuidSchema,
} from './common.js'
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_MODEL_IDENTIFIER_LENGTH,
  MAX_PENALTY,
  MAX_STOP_SEQUENCES,
  MAX_TEMPERATURE,
  MAX_TOP_P,
  MAX_VERSION_LENGTH,
} from './limits.js'
import {
  CREDENTIAL_KINDS,
  DISTRIBUTION_TYPES,
  EMBEDDER_PROVIDER_TYPES,
  INT32_MAX,
  LLM_PROVIDER_TYPES,
  LOCAL_API_PATH,
  LOCAL_ENDPOINT_URL,
  LOCAL_PROVIDER_TYPE,
  MODALITIES,
  RERANKER_PROVIDER_TYPES,
} from './registry-values.js'

export * from './registry-values.js'
/** Defined in limits.ts, which the console shares; the server's code reads them from here as well. */
export {
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_MODEL_IDENTIFIER_LENGTH,
  MAX_STOP_SEQUENCES,
  MAX_VERSION_LENGTH,
}
export const MAX_URL_LENGTH = 2048
export const MAX_API_PATH_LENGTH = 512
export const MAX_CLIENT_CONFIG_LENGTH = 65_536
export const MAX_SECRET_LENGTH = 8192
export const MAX_SCOPES = 50
export const MAX_STOP_SEQUENCE_LENGTH = 256

const requiredText = (maxLength: number) =>
  v.pipe(
    textSchema(),
    v.check((text) => text.trim().length > 0, 'must not be empty'),
    v.maxLength(maxLength, `at most ${maxLength} characters`),
  )

const positiveInt32 = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be positive'),
  v.maxValue(INT32_MAX, `must be at most ${INT32_MAX}`),
)

function isHttpUrl(text: string): boolean {
  if (/\s/.test(text)) return false
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** A user name or password in a URL would be stored and returned in the clear: credentials go in `credentials`. */
function hasNoUserInfo(text: string): boolean {
  const url = new URL(text)
  return url.username === '' && url.password === ''
}

const httpUrlSchema = v.pipe(
  textSchema(),
  v.maxLength(MAX_URL_LENGTH, `at most ${MAX_URL_LENGTH} characters`),
  v.check(isHttpUrl, 'must be an http or https URL'),
  v.check(hasNoUserInfo, 'must not carry a user name or password; use credentials'),
)

const apiPathSchema = v.pipe(
  textSchema(),
  v.maxLength(MAX_API_PATH_LENGTH, `at most ${MAX_API_PATH_LENGTH} characters`),
  v.regex(/^\/[\x21-\x7e]*$/, 'must be a path starting with "/", without spaces'),
)

/** Each modality once is all that means anything; repeats are merged, up to this many. */
const MAX_MODALITY_ENTRIES = 16

const modalitiesSchema = v.pipe(
  listOf(choiceOf(MODALITIES), MAX_MODALITY_ENTRIES, `at most ${MAX_MODALITY_ENTRIES} entries`),
  v.minLength(1, 'must name at least one modality'),
  v.transform((items) => [...new Set(items)]),
)

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/

/** Messages here never quote the input: it is a secret. */
const inlineSecretSchema = v.pipe(
  textSchema(),
  v.check((secret) => secret.length > 0, 'must not be empty'),
  v.check((secret) => secret.length <= MAX_SECRET_LENGTH, `at most ${MAX_SECRET_LENGTH} characters`),
  v.check(
    (secret) => !CONTROL_CHARACTERS.test(secret),
    'must not contain control characters or line breaks (it is sent in an HTTP header)',
  ),
)

const headerNameSchema = v.pipe(
  textSchema(),
  v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, 'must be an HTTP header name (1-128 token characters)'),
)

const prefixSchema = v.pipe(
  textSchema(),
  v.maxLength(64, 'at most 64 characters'),
  v.check((prefix) => !CONTROL_CHARACTERS.test(prefix), 'must not contain control characters'),
)

const scopeSchema = v.pipe(textSchema(), v.regex(/^[\x21-\x7e]{1,512}$/, 'must be 1-512 characters without spaces'))

const apiKeyCredentialSchema = (secretRequired: boolean) =>
  v.strictObject({
    inlineSecret: secretRequired ? inlineSecretSchema : v.optional(inlineSecretSchema),
    headerName: v.optional(headerNameSchema),
    prefix: v.optional(prefixSchema),
  })

const cloudAdcCredentialSchema = v.strictObject({
  scopes: v.optional(listOf(scopeSchema, MAX_SCOPES, `at most ${MAX_SCOPES} scopes`)),
  quotaProjectId: v.optional(
    v.pipe(textSchema(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 letters, digits, ".", "_", ":" or "-"')),
  ),
})

/**
 * `{kind, apiKey?, cloudAdc?}`: apiKey goes with API_KEY (and is required there), cloudAdc
 * only with CLOUD_ADC. On update the inline secret may be left out to keep the stored one.
 */
const credentialsSchema = (secretRequired: boolean) =>
  v.pipe(
    v.strictObject({
      kind: choiceOf(CREDENTIAL_KINDS),
      apiKey: v.optional(apiKeyCredentialSchema(secretRequired)),
      cloudAdc: v.optional(cloudAdcCredentialSchema),
    }),
    v.forward(
      v.check(
        (credentials) => credentials.kind !== 'API_KEY' || credentials.apiKey !== undefined,
        'is required with kind API_KEY',
      ),
      ['apiKey'],
    ),
    v.forward(
      v.check(
        (credentials) => credentials.kind === 'API_KEY' || credentials.apiKey === undefined,
        'is allowed only with kind API_KEY',
      ),
      ['apiKey'],
    ),
    v.forward(
      v.check(
        (credentials) => credentials.kind === 'CLOUD_ADC' || credentials.cloudAdc === undefined,
        'is allowed only with kind CLOUD_ADC',
      ),
      ['cloudAdc'],
    ),
  )

export const createCredentialsSchema = credentialsSchema(true)
export const updateCredentialsSchema = credentialsSchema(false)
export type CredentialsInput = v.InferOutput<typeof updateCredentialsSchema>

function isJsonObjectText(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
  } catch {
    return false
  }
}

const clientConfigSchema = v.pipe(
  textSchema('must be a string holding JSON text'),
  v.maxLength(MAX_CLIENT_CONFIG_LENGTH, `at most ${MAX_CLIENT_CONFIG_LENGTH} characters`),
  v.check(isJsonObjectText, 'must be valid JSON text of an object'),
)

/** On update, "" clears an optional field. */
const clearable = <const Schema extends v.GenericSchema<string, string>>(schema: Schema, what: string) =>
  v.union([v.literal(''), schema], `must be ${what}, or "" to clear it`)

export const capabilitiesSchema = v.strictObject({
  supportsChat: v.optional(v.boolean('must be true or false')),
  supportsCompletion: v.optional(v.boolean('must be true or false')),
  supportsFunctionCalling: v.optional(v.boolean('must be true or false')),
  supportsSamplingParameters: v.optional(v.boolean('must be true or false')),
  supportsStreaming: v.optional(v.boolean('must be true or false')),
  supportsSystemMessages: v.optional(v.boolean('must be true or false')),
})

export const samplingParamsSchema = v.strictObject({
  maxTokens: v.optional(positiveInt32),
  temperature: v.optional(numberFrom(0, MAX_TEMPERATURE)),
  topP: v.optional(numberFrom(0, MAX_TOP_P)),
  topK: v.optional(positiveInt32),
  frequencyPenalty: v.optional(numberFrom(-MAX_PENALTY, MAX_PENALTY)),
  presencePenalty: v.optional(numberFrom(-MAX_PENALTY, MAX_PENALTY)),
  stopSequences: v.optional(
    listOf(
      v.pipe(
        textSchema(),
        v.minLength(1, 'must not be empty'),
        v.maxLength(MAX_STOP_SEQUENCE_LENGTH, `at most ${MAX_STOP_SEQUENCE_LENGTH} characters`),
      ),
      MAX_STOP_SEQUENCES,
      `at most ${MAX_STOP_SEQUENCES} stop sequences`,
    ),
  ),
})

export type SamplingParams = v.InferOutput<typeof samplingParamsSchema>
export type CapabilitiesInput = v.InferOutput<typeof capabilitiesSchema>

/**
 * Every field of a registration as create takes it, in the order errors are reported.
 * Update takes the same fields, each optional, except that labels are replaced or merged,
 * "" clears an optional text field, and credentials may keep the stored secret.
 */
function registrationFields<const T extends readonly string[]>(providerTypes: T) {
  return {
    displayName: requiredText(MAX_DISPLAY_NAME_LENGTH),
    description: boundedText(MAX_DESCRIPTION_LENGTH),
    providerType: choiceOf(providerTypes),
    endpointUrl: httpUrlSchema,
    apiPath: apiPathSchema,
    modelIdentifier: requiredText(MAX_MODEL_IDENTIFIER_LENGTH),
  }
}

/** Fields that come after each kind's own fields. */
const trailingRegistrationFields = {
  supportedModalities: modalitiesSchema,
  labels: labelsSchema,
  version: boundedText(MAX_VERSION_LENGTH),
  monitoringEndpoint: httpUrlSchema,
}

/** Fields of a create request that may be left out; every other field is required. */
const OPTIONAL_ON_CREATE = [
  'description',
  'apiPath',
  'supportedModalities',
  'labels',
  'version',
  'monitoringEndpoint',
] as const

const clearableUrl = clearable(httpUrlSchema, 'an http or https URL')

/**
 * Update takes a kind's fields, each optional, except labels (replaced or merged instead); "" clears the
 * monitoring endpoint and the kind's `clearableFields`; credentials may keep the stored secret.
 */
function updateRegistrationSchema<
  const Fields extends typeof trailingRegistrationFields & v.ObjectEntries,
  const Clearable extends v.ObjectEntries = Record<never, never>,
>(fields: v.StrictObjectSchema<Fields, undefined>, clearableFields: Clearable = {} as Clearable) {
  return v.pipe(
    v.strictObject({
      ...v.partial(v.omit(fields, ['labels'])).entries,
      monitoringEndpoint: v.optional(clearableUrl),
      ...clearableFields,
      credentials: v.optional(updateCredentialsSchema),
      ...labelUpdateFields,
    }),
    oneLabelUpdateOnly(),
  )
}

/** An embedder's endpoint: an http(s) URL, or the fixed value a LOCAL embedder answers with (a GET's body sent back). */
const embedderEndpointSchema = v.pipe(
  textSchema(),
  v.maxLength(MAX_URL_LENGTH, `at most ${MAX_URL_LENGTH} characters`),
  v.check((text) => text === LOCAL_ENDPOINT_URL || isHttpUrl(text), 'must be an http or https URL'),
  v.check(
    (text) => text === LOCAL_ENDPOINT_URL || hasNoUserInfo(text),
    'must not carry a user name or password; use credentials',
  ),
)

const embedderFields = v.strictObject({
  ...registrationFields(EMBEDDER_PROVIDER_TYPES),
  endpointUrl: embedderEndpointSchema,
  dimensionality: positiveInt32,
  distributionType: choiceOf(DISTRIBUTION_TYPES),
  maxSequenceLength: positiveInt32,
  ...trailingRegistrationFields,
})

/** What a LOCAL embedder's registration may say about the provider it does not call, and why. */
export const LOCAL_EMBEDDER_RULES = {
  endpointUrl: `a LOCAL embedder runs inside memsvc and calls no endpoint: leave it out (it is answered as ${LOCAL_ENDPOINT_URL})`,
  apiPath: `a LOCAL embedder calls no API path: leave it out (it is answered as ${LOCAL_API_PATH})`,
  credentials: 'a LOCAL embedder calls no provider: leave credentials out, or give kind NONE',
  distributionType: 'a LOCAL embedder returns dense vectors: DENSE or leave it out',
} as const

interface EmbedderProviderFields {
  providerType?: string
  endpointUrl?: string
  apiPath?: string
  credentials?: { kind: string }
  distributionType?: string
}

/** The provider fields of a LOCAL embedder's request that say something other than what a LOCAL embedder is. */
export function localEmbedderConflicts(request: EmbedderProviderFields): Array<keyof typeof LOCAL_EMBEDDER_RULES> {
  const conflicts: Array<keyof typeof LOCAL_EMBEDDER_RULES> = []
  if (request.endpointUrl !== undefined && request.endpointUrl !== LOCAL_ENDPOINT_URL) conflicts.push('endpointUrl')
  if (request.apiPath !== undefined && request.apiPath !== LOCAL_API_PATH) conflicts.push('apiPath')
  if (request.credentials !== undefined && request.credentials.kind !== 'NONE') conflicts.push('credentials')
  if (request.distributionType !== undefined && request.distributionType !== 'DENSE') conflicts.push('distributionType')
  return conflicts
}

const isLocal = (request: EmbedderProviderFields) => request.providerType === LOCAL_PROVIDER_TYPE

const createEmbedderFields = v.strictObject({
  embedderId: v.optional(uuidSchema),
  ownerId: v.optional(uuidSchema),
  ...v.partial(embedderFields, [...OPTIONAL_ON_CREATE, 'maxSequenceLength', 'endpointUrl', 'dimensionality']).entries,
  distributionType: v.optional(choiceOf(DISTRIBUTION_TYPES), 'DENSE'),
  credentials: v.optional(createCredentialsSchema),
})
type CreateEmbedderFields = v.InferOutput<typeof createEmbedderFields>

/** A rule over the whole request whose issue names one field. */
const embedderRule = (
  field: keyof CreateEmbedderFields & string,
  holds: (request: CreateEmbedderFields) => boolean,
  message: string,
) =>
  v.forward<CreateEmbedderFields, v.CheckIssue<CreateEmbedderFields>, [typeof field]>(v.check(holds, message), [field])

const localRule = (field: keyof typeof LOCAL_EMBEDDER_RULES) =>
  embedderRule(
    field,
    (request) => !isLocal(request) || !localEmbedderConflicts(request).includes(field),
    LOCAL_EMBEDDER_RULES[field],
  )

/**
 * An HTTP embedder needs its endpoint and dimensionality. A LOCAL embedder runs a model in
 * memsvc: it has no endpoint, path or credential, and its dimensionality is the model's
 * (filled in from the model when left out; src/domain/local-embedders.ts checks it).
 */
export const createEmbedderSchema = v.pipe(
  createEmbedderFields,
  embedderRule('endpointUrl', (request) => isLocal(request) || request.endpointUrl !== undefined, 'is required'),
  embedderRule(
    'endpointUrl',
    (request) => isLocal(request) || request.endpointUrl !== LOCAL_ENDPOINT_URL,
    'must be an http or https URL',
  ),
  embedderRule('dimensionality', (request) => isLocal(request) || request.dimensionality !== undefined, 'is required'),
  localRule('endpointUrl'),
  localRule('apiPath'),
  localRule('credentials'),
  localRule('distributionType'),
  // The rules above leave an HTTP embedder's endpoint given: only a LOCAL one's is filled in.
  v.transform((request) => ({ ...request, endpointUrl: request.endpointUrl ?? LOCAL_ENDPOINT_URL })),
)

export const updateEmbedderSchema = updateRegistrationSchema(embedderFields)

/** Paging, label filter, provider filter and (admins) owner: the same for every registry. */
function listRegistrationsSchema<const T extends readonly string[]>(providerTypes: T) {
  return v.strictObject({
    ...pageFields,
    ownerId: v.optional(uuidSchema),
    providerType: v.optional(choiceOf(providerTypes)),
    labelFilter: v.optional(labelsSchema),
  })
}

export const listEmbeddersSchema = listRegistrationsSchema(EMBEDDER_PROVIDER_TYPES)

const llmFields = v.strictObject({
  ...registrationFields(LLM_PROVIDER_TYPES),
  ...trailingRegistrationFields,
  clientConfig: clientConfigSchema,
  maxContextLength: positiveInt32,
  capabilities: capabilitiesSchema,
  defaultSamplingParams: samplingParamsSchema,
})

export const createLlmSchema = v.strictObject({
  llmId: v.optional(uuidSchema),
  ownerId: v.optional(uuidSchema),
  ...v.partial(llmFields, [
    ...OPTIONAL_ON_CREATE,
    'clientConfig',
    'maxContextLength',
    'capabilities',
    'defaultSamplingParams',
  ]).entries,
  credentials: v.optional(createCredentialsSchema),
})

export const updateLlmSchema = updateRegistrationSchema(llmFields, {
  clientConfig: v.optional(clearable(clientConfigSchema, 'valid JSON text of an object')),
})

export const listLlmsSchema = listRegistrationsSchema(LLM_PROVIDER_TYPES)

const rerankerFields = v.strictObject({
  ...registrationFields(RERANKER_PROVIDER_TYPES),
  ...trailingRegistrationFields,
})

export const createRerankerSchema = v.strictObject({
  rerankerId: v.optional(uuidSchema),
  ownerId: v.optional(uuidSchema),
  ...v.partial(rerankerFields, [...OPTIONAL_ON_CREATE]).entries,
  credentials: v.optional(createCredentialsSchema),
})

export const updateRerankerSchema = updateRegistrationSchema(rerankerFields)

export const listRerankersSchema = listRegistrationsSchema(RERANKER_PROVIDER_TYPES)
