// Registers every client command (everything but `serve`) on the top-level parser.
import type { Argv } from 'yargs'
import { apiKeyCommand } from './apikey.js'
import { documentCommand } from './document.js'
import { embedderCommand } from './embedder.js'
import { initCommand } from './init.js'
import { llmCommand } from './llm.js'
import { memoryCommand } from './memory.js'
import { modelCommand } from './model.js'
import { rerankerCommand } from './reranker.js'
import { spaceCommand } from './space.js'
import { systemCommand } from './system.js'
import { upgradeCommand } from './upgrade.js'
import { userCommand } from './user.js'
import { versionCommand } from './version.js'

const COMMANDS = [
  initCommand,
  apiKeyCommand,
  embedderCommand,
  llmCommand,
  rerankerCommand,
  spaceCommand,
  memoryCommand,
  modelCommand,
  documentCommand,
  userCommand,
  systemCommand,
  upgradeCommand,
  versionCommand,
]

export function registerClientCommands(yargs: Argv): Argv {
  return COMMANDS.reduce((built, register) => register(built), yargs)
}

/** For the top-level --help: the options every client command takes. */
export const CLIENT_EPILOG = [
  'Client commands talk gRPC to the server. Their global options:',
  '  --server URL     https://host:port (TLS; default https://localhost:9090), http://host:port',
  '                   (plaintext) or host:port (TLS) [env SERVICE_SERVER]',
  '  --api-key KEY    [env SERVICE_API_KEY]; default: the key "memsvc init" saved',
  '  --output FORMAT  table or json',
  '  --insecure       skip TLS certificate verification',
  'A flag beats the environment, which beats the config file ($XDG_CONFIG_HOME/memsvc/config.json).',
].join('\n')
