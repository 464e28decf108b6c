// memsvc init: initialise a new server (get the root admin's key, once) and set up
// this user's config file; pins a self-signed certificate on first use.
import { type ChannelCredentials, credentials } from '@grpc/grpc-js'
import type { Argv } from 'yargs'
import { type Embedder, Embedder_ProviderType } from '../../generated/memsvc/v1/embedders.js'
import { API_KEY_ENV, type ClientSettings } from '../client-settings.js'
import { type Args, clientHandler, withClientOptions } from '../command.js'
import { backUpConfig, type ClientConfig, writeConfig } from '../config-file.js'
import { Connection } from '../connection.js'
import { CliError, EXIT_FAILED, unreachable } from '../exit-codes.js'
import { note, print } from '../output.js'
import { renderFields } from '../table.js'
import {
  fetchCertificate,
  pinMismatchMessage,
  pinnedCredentials,
  sameFingerprint,
  unverifiedCredentials,
} from '../tls-trust.js'
import { describeTrust } from './system.js'

const INIT_OPTIONS = {
  repin: {
    type: 'boolean',
    describe:
      'Accept and pin the certificate the server presents now, replacing a saved pin (after a certificate change you expected)',
  },
} as const

interface Trust {
  credentials: ChannelCredentials
  /** The fingerprint to save, if the certificate is pinned. */
  pin?: string
  /** A pin made (or replaced) by this run, to announce. */
  newlyPinned: boolean
}

/**
 * Trust on first use: a certificate the system CAs accept needs no pin; any other is
 * pinned now, unless a different pin is already saved for this server, which only
 * --repin may replace.
 */
async function establishTrust(settings: ClientSettings, repin: boolean): Promise<Trust> {
  if (!settings.server.tls) return { credentials: credentials.createInsecure(), newlyPinned: false }
  if (settings.insecure)
    return { credentials: unverifiedCredentials(), pin: repin ? undefined : settings.pin, newlyPinned: false }
  const presented = await fetchCertificate(settings.server)
  if (presented.trusted) return { credentials: credentials.createSsl(), newlyPinned: false }
  if (settings.pin && !sameFingerprint(settings.pin, presented.fingerprint) && !repin) {
    throw unreachable(pinMismatchMessage(settings, presented.fingerprint))
  }
  const newlyPinned = !settings.pin || !sameFingerprint(settings.pin, presented.fingerprint)
  return {
    credentials: pinnedCredentials(presented.pem, presented.fingerprint),
    pin: presented.fingerprint,
    newlyPinned,
  }
}

function announcePin(settings: ClientSettings, trust: Trust): void {
  if (settings.server.tls && settings.insecure && !trust.pin) {
    note(
      'Not pinned (--insecure): later commands need --insecure too, or pin the certificate with "memsvc init --repin"',
    )
  }
  if (!trust.newlyPinned || !trust.pin) return
  note(`Pinned the server's self-signed certificate, SHA-256 ${trust.pin}`)
  note('Compare it with the server: openssl x509 -noout -fingerprint -sha256 -in <data-dir>/tls/server.crt')
}

/** Replaces the config; one that held another key is kept as config.json.previous, so no key is lost. */
function saveConfig(settings: ClientSettings, config: ClientConfig): void {
  if (settings.config.apiKey && settings.config.apiKey !== config.apiKey) {
    const backup = backUpConfig(settings.configPath)
    if (backup)
      note(`The previous settings (for ${settings.config.server ?? 'the default server'}) are kept in ${backup}`)
  }
  writeConfig(config, settings.configPath)
}

/**
 * The LOCAL embedders the server registered at init, one for each model it found (its
 * data directory's models/ and the bundled ones): spaces created without embedders use them.
 */
async function localEmbedders(settings: ClientSettings, trust: Trust, rootApiKey: string): Promise<Embedder[]> {
  const connection = await Connection.openWithKey(settings, trust.credentials, rootApiKey)
  try {
    const page = await connection.run((api) =>
      api.embedders.list({ providerType: Embedder_ProviderType.LOCAL, labelFilter: {} }),
    )
    return page.embedders
  } finally {
    connection.close()
  }
}

const init = clientHandler(async (argv: Args, settings) => {
  const repin = argv.repin === true
  const trust = await establishTrust(settings, repin)
  // Only --api-key itself: a SERVICE_API_KEY exported for other reasons must not replace a saved key.
  const explicitKey = settings.apiKeySource === 'flag' ? settings.apiKey : undefined
  const connection = await Connection.openWithKey(settings, trust.credentials, explicitKey)
  try {
    const response = await connection.run((api) => api.system.initialize({}))
    if (!response.alreadyInitialized && response.rootApiKey) {
      const config: ClientConfig = {
        server: settings.server.url,
        apiKey: response.rootApiKey,
        userId: response.userId,
        initializedAt: new Date().toISOString(),
        pinnedCertificateSha256: trust.pin,
      }
      saveConfig(settings, config)
      announcePin(settings, trust)
      const local = await localEmbedders(settings, trust, response.rootApiKey)
      const localLines = local.map((embedder): [string, string] => [
        'local embedder',
        `${embedder.modelIdentifier}: ${embedder.dimensionality} dimensions, id ${embedder.embedderId}`,
      ])
      print(settings.output, {
        json: {
          ...config,
          alreadyInitialized: false,
          rootApiKey: response.rootApiKey,
          apiKey: undefined,
          configFile: settings.configPath,
          localEmbedders: local.map(({ embedderId, modelIdentifier, dimensionality }) => ({
            embedderId,
            modelIdentifier,
            dimensionality,
          })),
        },
        text: () =>
          `Initialised ${settings.server.url}. This is the root administrator's API key; it is shown only this once:\n\n` +
          `  ${response.rootApiKey}\n\n` +
          renderFields([
            ['user id', response.userId],
            ['connection', describeTrust({ ...settings, pin: trust.pin })],
            ['saved in', `${settings.configPath} (mode 0600)`],
            ...localLines,
          ]) +
          (local.length > 0
            ? '\nSpaces created without --embedder use the local embedder: memsvc space create --name notes\n'
            : '') +
          '\nNext: memsvc apikey create --label purpose=app   (keep the root key for administration)\n',
      })
      return
    }

    // Already initialised: adopt a key the user gave explicitly, or re-pin, or explain.
    if (explicitKey) {
      const me = await connection.run((api) => api.users.me({}))
      const keep = settings.configMatchesServer ? settings.config : {}
      saveConfig(settings, {
        ...keep,
        server: settings.server.url,
        apiKey: explicitKey,
        userId: me.userId,
        pinnedCertificateSha256: trust.pin,
      })
      announcePin(settings, trust)
      print(settings.output, {
        json: {
          server: settings.server.url,
          alreadyInitialized: true,
          userId: me.userId,
          username: me.username,
          pinnedCertificateSha256: trust.pin,
          configFile: settings.configPath,
        },
        text: () =>
          `${settings.server.url} is already initialised; ` +
          `saved your key for user ${me.username} (${me.userId}) in ${settings.configPath}\n`,
      })
      return
    }
    if (repin && settings.configMatchesServer) {
      saveConfig(settings, { ...settings.config, server: settings.server.url, pinnedCertificateSha256: trust.pin })
      announcePin(settings, trust)
      print(settings.output, {
        json: {
          server: settings.server.url,
          alreadyInitialized: true,
          pinnedCertificateSha256: trust.pin,
          configFile: settings.configPath,
        },
        text: () => {
          const pinned = trust.pin
            ? `Re-pinned ${settings.server.url}: SHA-256 ${trust.pin}`
            : `${settings.server.url} needs no pin (its certificate is trusted by the system CAs)`
          return `${pinned}; the saved API key is unchanged\n`
        },
      })
      return
    }
    const saved = settings.configMatchesServer && settings.config.apiKey
    throw new CliError(
      `${settings.server.url} is already initialised; its root key was shown once, to whoever ran init first. ` +
        (saved
          ? `${settings.configPath} already holds a key for it, so there is nothing to do: try "memsvc user me". `
          : `Use an existing key: pass --api-key KEY or set ${API_KEY_ENV}, or save it with "memsvc init --api-key KEY"; ` +
            'an admin can make you one with "memsvc apikey create --owner-id …". ') +
        'Nothing was changed',
      EXIT_FAILED,
    )
  } finally {
    connection.close()
  }
})

export function initCommand(yargs: Argv): Argv {
  return yargs.command(
    'init',
    'Initialise a new server and save its root API key (and certificate pin) in your config file',
    (command: Argv) =>
      withClientOptions(command, {
        epilog: [
          'The config file is $XDG_CONFIG_HOME/memsvc/config.json (default ~/.config/memsvc/config.json),',
          'mode 0600. On an initialised server init changes nothing and exits 1, unless --api-key or',
          '--repin says what to save.',
        ].join('\n'),
      })
        .options(INIT_OPTIONS)
        .example('$0 init', 'the server on https://localhost:9090; pins its self-signed certificate')
        .example('$0 init --server http://10.0.0.5:9090', 'a plaintext server')
        .example(
          '$0 init --server db1:9090 --api-key msk_…',
          'already initialised: save an existing key (and pin) instead',
        )
        .example('$0 init --repin', 'the server got a new certificate and you expected it'),
    init as (argv: unknown) => Promise<void>,
  )
}
