// The global options every client command shares, and how they combine with the
// environment and the config file: a flag beats the environment, which beats the
// config file, which beats the default.
import type { Options } from 'yargs'
import { type ClientConfig, readConfig } from './config-file.js'
import { badInput } from './exit-codes.js'
import { DEFAULT_SERVER, parseServerAddress, type ServerAddress } from './server-address.js'

export const API_KEY_ENV = 'SERVICE_API_KEY'
/** Not in the spec; mirrors SERVICE_API_KEY so that a shell can point every command at one server. */
export const SERVER_ENV = 'SERVICE_SERVER'

export type OutputFormat = 'table' | 'json'
const GLOBAL_GROUP = 'Global options:'

/** Options shared by every client command (yargs option table). */
export const CONNECTION_OPTIONS = {
  server: {
    type: 'string',
    describe:
      `gRPC server: https://host:port (TLS), http://host:port (plaintext) or host:port [env ${SERVER_ENV}] ` +
      `(default: the config file's server, else ${DEFAULT_SERVER})`,
    group: GLOBAL_GROUP,
    requiresArg: true,
  },
  'api-key': {
    type: 'string',
    describe: `API key [env ${API_KEY_ENV}] (default: the key saved by "memsvc init")`,
    group: GLOBAL_GROUP,
    requiresArg: true,
  },
  insecure: {
    type: 'boolean',
    describe: "Do not verify the server's TLS certificate (neither system CAs nor the pinned fingerprint)",
    group: GLOBAL_GROUP,
  },
} as const satisfies Record<string, Options>

export const OUTPUT_OPTION = {
  output: {
    type: 'string',
    choices: ['table', 'json'],
    default: 'table',
    describe: 'table for people, json for scripts (exactly one JSON document on stdout)',
    group: GLOBAL_GROUP,
    alias: 'o',
  },
} as const satisfies Record<string, Options>

export interface GlobalArgs {
  server?: string
  apiKey?: string
  insecure?: boolean
  output?: string
}

type Source = 'flag' | 'env' | 'config' | 'default'

export interface ClientSettings {
  server: ServerAddress
  serverSource: Source
  apiKey?: string
  apiKeySource?: Exclude<Source, 'default'>
  insecure: boolean
  /** Pinned certificate fingerprint; only when the config file belongs to this server. */
  pin?: string
  output: OutputFormat
  config: ClientConfig
  configPath: string
  /** True when the config file describes the server in use (its key and pin apply). */
  configMatchesServer: boolean
}

function parseConfigServer(text: string, configPath: string): ServerAddress {
  try {
    return parseServerAddress(text)
  } catch (error) {
    throw badInput(`"server" in ${configPath}: ${(error as Error).message.replace(/^--server /, '')}`)
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

/**
 * The config file's key and pin belong to the server saved beside them: they are
 * used only when that is the server in use, so that `--server other` never sends
 * the saved key to another machine.
 */
export function resolveSettings(argv: GlobalArgs, env: NodeJS.ProcessEnv = process.env): ClientSettings {
  const { path: configPath, config, tooOpen } = readConfig()
  if (tooOpen) process.stderr.write(`warning: ${tooOpen}\n`)
  const configServer = parseConfigServer(config.server ?? DEFAULT_SERVER, configPath)

  const flagServer = nonEmpty(argv.server)
  const envServer = nonEmpty(env[SERVER_ENV])
  const [serverText, serverSource]: [string, Source] = flagServer
    ? [flagServer, 'flag']
    : envServer
      ? [envServer, 'env']
      : config.server
        ? [config.server, 'config']
        : [DEFAULT_SERVER, 'default']
  const server = parseServerAddress(serverText)
  const configMatchesServer = server.url === configServer.url

  if (argv.apiKey !== undefined && nonEmpty(argv.apiKey) === undefined) throw badInput('--api-key is empty')
  const flagKey = nonEmpty(argv.apiKey)
  const envKey = nonEmpty(env[API_KEY_ENV])
  const savedKey = configMatchesServer ? nonEmpty(config.apiKey) : undefined
  const [apiKey, apiKeySource] = flagKey
    ? [flagKey, 'flag' as const]
    : envKey
      ? [envKey, 'env' as const]
      : savedKey
        ? [savedKey, 'config' as const]
        : [undefined, undefined]

  return {
    server,
    serverSource,
    apiKey,
    apiKeySource,
    insecure: argv.insecure === true,
    pin: configMatchesServer ? nonEmpty(config.pinnedCertificateSha256) : undefined,
    output: argv.output === 'json' ? 'json' : 'table',
    config,
    configPath,
    configMatchesServer,
  }
}

/** The key for an authenticated call, or a bad-input error that says where keys come from. */
export function requireApiKey(settings: ClientSettings): string {
  if (settings.apiKey) return settings.apiKey
  const elsewhere =
    settings.config.apiKey && !settings.configMatchesServer
      ? ` (the key in ${settings.configPath} belongs to ${settings.config.server ?? DEFAULT_SERVER}, not ${settings.server.url})`
      : ''
  throw badInput(
    `no API key for ${settings.server.url}${elsewhere}: pass --api-key, set ${API_KEY_ENV}, or run "memsvc init" on a new server`,
  )
}
