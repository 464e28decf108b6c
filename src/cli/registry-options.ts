// The settings of embedders, LLMs and rerankers (the fields their create and update requests take) as option tables: one row per
// setting says its flag, the request field it fills and how its text is parsed. The
// create and update commands, their help and their requests are all built from these
// rows, so a setting is described exactly once.
import fs from 'node:fs'
import type { Options } from 'yargs'
import { type Credentials, Credentials_Kind, type ProbeStatus } from '../generated/memsvc/v1/registry.js'
import { INT32_MAX, MODALITIES } from '../validation/registry-values.js'
import type { Args } from './command.js'
import { repeatable } from './common-options.js'
import { badInput } from './exit-codes.js'
import { asList, lastValue, parseChoice, parseInteger, parseNumber } from './option-parsing.js'
import { formatTime } from './output.js'

export type SettingKind = 'text' | 'int' | 'number' | 'choice' | 'choices' | 'list' | 'json'
/** Kinds whose flag is given once per value (the others take the last value given). */
const REPEATABLE_KINDS: ReadonlySet<SettingKind> = new Set(['choices', 'list'])

export interface Setting {
  flag: string
  /** Field of the request (and of the returned resource). */
  field: string
  kind: SettingKind
  describe: string
  choices?: readonly string[]
  /** Offered by create only (e.g. the id), or by create, update and list alike. */
  on?: 'create' | 'create-update'
  group?: string
}

/** Settings every registry kind shares. */
export const COMMON_SETTINGS: Setting[] = [
  { flag: 'display-name', field: 'displayName', kind: 'text', describe: 'Name shown to people (required on create)' },
  { flag: 'description', field: 'description', kind: 'text', describe: 'Free text ("" clears it on update)' },
  {
    flag: 'endpoint-url',
    field: 'endpointUrl',
    kind: 'text',
    describe: 'Provider base URL, http(s) (required on create, except for a LOCAL embedder)',
  },
  {
    flag: 'model-identifier',
    field: 'modelIdentifier',
    kind: 'text',
    describe: "Model name at the provider, or a LOCAL embedder's model directory name (required on create)",
  },
  // Not --version: that prints memsvc's own version everywhere.
  {
    flag: 'model-version',
    field: 'version',
    kind: 'text',
    describe: 'Free-form model version ("" clears it on update)',
  },
  {
    flag: 'monitoring-endpoint',
    field: 'monitoringEndpoint',
    kind: 'text',
    describe: 'Monitoring URL ("" clears it on update)',
  },
  {
    flag: 'modality',
    field: 'supportedModalities',
    kind: 'choices',
    choices: MODALITIES,
    describe: `Supported modality (repeatable): ${MODALITIES.join(', ')} (default TEXT)`,
  },
]

/** Every kind has an API path under its endpoint; only the default differs. */
export function apiPathSetting(defaultPath: string): Setting {
  return {
    flag: 'api-path',
    field: 'apiPath',
    kind: 'text',
    describe: `Path under the endpoint (default ${defaultPath})`,
  }
}

/** A capability flag: --<flag> sets it true, --no-<flag> false, neither leaves it to the default / stored value. */
export interface Capability {
  flag: string
  field: string
  describe: string
}

const CREDENTIALS_GROUP = 'Credentials (one form; default none):'

export const CREDENTIAL_OPTIONS = {
  'api-key-secret': {
    type: 'string',
    describe:
      'Provider API key, stored encrypted and never shown again (prefer --api-key-secret-file: command lines are visible to other users)',
    group: CREDENTIALS_GROUP,
    requiresArg: true,
  },
  'api-key-secret-file': {
    type: 'string',
    describe: 'Read the provider API key from this file ("-": stdin); a trailing newline is dropped',
    group: CREDENTIALS_GROUP,
    requiresArg: true,
  },
  'credential-header': {
    type: 'string',
    describe: 'Header the provider key is sent in (default Authorization)',
    group: CREDENTIALS_GROUP,
    requiresArg: true,
  },
  'credential-prefix': {
    type: 'string',
    describe: 'Text before the key in that header (default Bearer; "" for none)',
    group: CREDENTIALS_GROUP,
  },
  adc: {
    type: 'boolean',
    describe: 'Cloud application default credentials (also implied by --adc-scope / --adc-quota-project)',
    group: CREDENTIALS_GROUP,
  },
  'adc-scope': repeatable({ describe: 'Additional OAuth scope for cloud ADC (repeatable)', group: CREDENTIALS_GROUP }),
  'adc-quota-project': {
    type: 'string',
    describe: 'Quota project for cloud ADC',
    group: CREDENTIALS_GROUP,
    requiresArg: true,
  },
  'no-credentials': { type: 'boolean', describe: 'No credentials, e.g. a local deployment', group: CREDENTIALS_GROUP },
  // --no-credentials arrives as credentials=false (yargs boolean negation); declared so strict mode knows it.
  credentials: { type: 'boolean', hidden: true },
} as const satisfies Record<string, Options>

const isGiven = (argv: Args, flag: string) => argv[flag] !== undefined

function readSecretFile(file: string): string {
  try {
    return fs.readFileSync(file === '-' ? 0 : file, 'utf8').replace(/\r?\n$/, '')
  } catch (error) {
    throw badInput(`--api-key-secret-file ${file}: ${(error as Error).message}`)
  }
}

/**
 * The credentials message from the credential options, or undefined when none was
 * given. On update, what is not given is taken from `current`, because the server
 * replaces the message as a whole (the stored secret is kept when no new one is sent).
 */
export function credentialsFrom(argv: Args, current?: Credentials): Credentials | undefined {
  if (argv.credentials === true)
    throw badInput('use --no-credentials, --api-key-secret[-file] or --adc / --adc-scope to choose credentials')
  const secretText = lastValue(argv['api-key-secret'])
  const secretFile = lastValue(argv['api-key-secret-file'])
  if (secretText !== undefined && secretFile !== undefined)
    throw badInput('give --api-key-secret or --api-key-secret-file, not both')
  const secret = secretFile !== undefined ? readSecretFile(secretFile) : secretText
  const apiKeyForm = secret !== undefined || isGiven(argv, 'credential-header') || isGiven(argv, 'credential-prefix')
  const scopes = asList(argv['adc-scope'])
  const adcForm = argv.adc === true || scopes.length > 0 || isGiven(argv, 'adc-quota-project')
  const noneForm = argv.credentials === false
  const forms = [apiKeyForm && 'an API key', adcForm && 'cloud ADC', noneForm && '--no-credentials'].filter(Boolean)
  if (forms.length > 1) throw badInput(`choose one credential form, not ${forms.join(' and ')}`)
  if (noneForm) return { kind: Credentials_Kind.NONE }
  if (apiKeyForm) {
    const stored = current?.kind === Credentials_Kind.API_KEY ? current.apiKey : undefined
    return {
      kind: Credentials_Kind.API_KEY,
      apiKey: {
        inlineSecret: secret,
        headerName: lastValue(argv['credential-header']) ?? stored?.headerName,
        prefix: lastValue(argv['credential-prefix']) ?? stored?.prefix,
      },
    }
  }
  if (adcForm) {
    const stored = current?.kind === Credentials_Kind.CLOUD_ADC ? current.cloudAdc : undefined
    return {
      kind: Credentials_Kind.CLOUD_ADC,
      cloudAdc: {
        scopes: scopes.length > 0 ? scopes : (stored?.scopes ?? []),
        quotaProjectId: lastValue(argv['adc-quota-project']) ?? stored?.quotaProjectId,
      },
    }
  }
  return undefined
}

/** yargs options for a settings table. */
export function settingOptions(settings: Setting[], command: 'create' | 'update'): Record<string, Options> {
  const options: Record<string, Options> = {}
  for (const setting of settings) {
    if (setting.on === 'create' && command !== 'create') continue
    const common = { describe: setting.describe, ...(setting.group ? { group: setting.group } : {}) }
    // Always strings: numbers and enums are parsed here with messages naming the flag.
    options[setting.flag] = REPEATABLE_KINDS.has(setting.kind)
      ? repeatable(common)
      : { ...common, type: 'string', requiresArg: true }
  }
  return options
}

export function capabilityOptions(capabilities: Capability[], group: string): Record<string, Options> {
  return Object.fromEntries(
    capabilities.map((capability) => [
      capability.flag,
      { type: 'boolean', describe: `${capability.describe} (--no-${capability.flag}: does not)`, group },
    ]),
  )
}

function parseSetting(setting: Setting, value: unknown): unknown {
  switch (setting.kind) {
    case 'text':
      return String(lastValue(value))
    case 'json': {
      const text = String(lastValue(value))
      // @file reads the JSON from a file: config objects are awkward to quote in a shell.
      if (!text.startsWith('@')) return text
      try {
        return fs.readFileSync(text.slice(1), 'utf8')
      } catch (error) {
        throw badInput(`--${setting.flag} ${text}: ${(error as Error).message}`)
      }
    }
    case 'int':
      return parseInteger(lastValue(value), setting.flag, { min: 0, max: INT32_MAX })
    case 'number':
      return parseNumber(lastValue(value), setting.flag)
    case 'choice':
      return parseChoice(lastValue(value), setting.flag, setting.choices!)
    case 'list':
      return asList(value)
    case 'choices':
      return [
        ...new Set(
          asList(value)
            .flatMap((entry) => entry.split(','))
            .map((entry) => parseChoice(entry, setting.flag, setting.choices!)),
        ),
      ]
  }
}

/** The request fields the given options set (only those given). */
export function settingValues(argv: Args, settings: Setting[], command: 'create' | 'update'): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const setting of settings) {
    if (setting.on === 'create' && command !== 'create') continue
    if (argv[setting.flag] === undefined) continue
    values[setting.field] = parseSetting(setting, argv[setting.flag])
  }
  return values
}

/** The capabilities the options set (undefined when none was given). */
export function capabilityValues(argv: Args, capabilities: Capability[]): Record<string, boolean> | undefined {
  const given = capabilities.filter((capability) => typeof argv[capability.flag] === 'boolean')
  if (given.length === 0) return undefined
  return Object.fromEntries(given.map((capability) => [capability.field, argv[capability.flag] as boolean]))
}

/** The last connectivity probe in one line: "OK in 12 ms at …", "FAILED at …: why"; undefined before the first. */
export function describeProbe(probe: ProbeStatus | undefined): string | undefined {
  if (!probe) return undefined
  const latency = probe.latencyMs === undefined ? '' : ` in ${probe.latencyMs} ms`
  return `${probe.status}${latency} at ${formatTime(probe.checkedAt)}${probe.error ? `: ${probe.error}` : ''}`
}

export function describeCredentials(credentials: Credentials | undefined): string {
  if (!credentials) return ''
  switch (credentials.kind) {
    case Credentials_Kind.API_KEY: {
      const key = credentials.apiKey
      const header = `${key?.headerName ?? 'Authorization'}: ${key?.prefix ?? 'Bearer'}${(key?.prefix ?? 'Bearer') ? ' ' : ''}<secret>`
      return `API key (fingerprint ${key?.secretFingerprint ?? '?'}), sent as ${header}`
    }
    case Credentials_Kind.CLOUD_ADC: {
      const adc = credentials.cloudAdc
      const scopes = adc?.scopes.length ? ` scopes ${adc.scopes.join(' ')}` : ''
      return `cloud ADC${scopes}${adc?.quotaProjectId ? ` quota project ${adc.quotaProjectId}` : ''}`
    }
    case Credentials_Kind.NONE:
      return 'none'
    default:
      return String(credentials.kind)
  }
}
