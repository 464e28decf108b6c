// One SDK client (sdk/, @memsvc/client) per command, over the credentials chosen by
// tls-trust.ts, with the API key as call metadata. Failures that are really "cannot reach /
// cannot trust the server" are diagnosed into one clear line with exit code 3; everything the
// server answered stays a server error (a MemsvcError).
import net from 'node:net'
import { type ChannelCredentials, status } from '@grpc/grpc-js'
import { MemsvcClient, MemsvcError } from '../../sdk/src/index.js'
import { VERSION } from '../runtime/environment.js'
import { type ClientSettings, requireApiKey } from './client-settings.js'
import { CliError, unreachable } from './exit-codes.js'
import {
  channelCredentials,
  describeConnectFailure,
  fetchCertificate,
  pinMismatchMessage,
  sameFingerprint,
  untrustedMessage,
} from './tls-trust.js'

/** Generous: a CLI call should never hang forever, but drain --wait sets its own. */
const DEFAULT_DEADLINE_MS = 60_000
const TCP_PROBE_TIMEOUT_MS = 5_000
/** One attempt per command: a person retries by running it again, and a draining server is reported as such. */
const SINGLE_ATTEMPT = { maxAttempts: 1 }
/** Errors grpc-js makes up itself when no HTTP/2 conversation with a server happened. */
const TRANSPORT_FAILURE = new RegExp(
  [
    'No connection established',
    'Connection dropped',
    'Protocol error',
    'Failed to connect',
    'name resolution',
    'DNS resolution failed',
    'Received HTTP status code',
    'Channel closed before',
  ].join('|'),
  'i',
)

export interface OpenOptions {
  /** Sends the API key; fails with exit 2 before connecting when there is none. */
  authenticated: boolean
}

const needsDiagnosis = (error: unknown): error is MemsvcError =>
  MemsvcError.is(error) && (error.grpcStatus === status.UNAVAILABLE || error.grpcStatus === status.DEADLINE_EXCEEDED)

export class Connection {
  readonly #api: MemsvcClient

  private constructor(
    readonly settings: ClientSettings,
    readonly credentials: ChannelCredentials,
    apiKey: string | undefined,
  ) {
    this.#api = new MemsvcClient({
      address: `${settings.server.tls ? 'https' : 'http'}://${settings.server.target}`,
      apiKey,
      credentials,
      deadlineMs: DEFAULT_DEADLINE_MS,
      retry: SINGLE_ATTEMPT,
      channelOptions: { 'grpc.primary_user_agent': `memsvc-cli/${VERSION}` },
    })
  }

  static async open(settings: ClientSettings, options: OpenOptions): Promise<Connection> {
    const apiKey = options.authenticated ? requireApiKey(settings) : undefined
    return new Connection(settings, await channelCredentials(settings), apiKey)
  }

  /** With a caller-chosen key (init checks a key before saving it). */
  static async openWithKey(
    settings: ClientSettings,
    credentials: ChannelCredentials,
    apiKey: string | undefined,
  ): Promise<Connection> {
    return new Connection(settings, credentials, apiKey)
  }

  /** One call through the SDK; rejects with a CliError (connection/trust) or the MemsvcError (server). */
  async run<T>(call: (api: MemsvcClient) => Promise<T>): Promise<T> {
    try {
      return await call(this.#api)
    } catch (error) {
      if (needsDiagnosis(error)) throw await this.diagnose(error)
      throw error
    }
  }

  /**
   * A server-streaming call, read as it arrives. No deadline: the server bounds the work (an
   * LLM answer can take minutes). Fails like `run` when the stream cannot start. Leaving early
   * (an error while printing, Ctrl-C) cancels the call, which cancels the server's work.
   */
  async *stream<Response>(open: (api: MemsvcClient) => AsyncIterable<Response>): AsyncGenerator<Response> {
    try {
      yield* open(this.#api)
    } catch (error) {
      if (needsDiagnosis(error)) throw await this.diagnose(error)
      throw error
    }
  }

  /**
   * After UNAVAILABLE or a deadline: look at the socket level to tell "no server /
   * wrong protocol / untrusted certificate" (exit 3) from a server that answered
   * UNAVAILABLE itself, e.g. while draining (exit 1): that one is returned unchanged.
   */
  async diagnose(error: MemsvcError): Promise<CliError | MemsvcError> {
    const { server } = this.settings
    try {
      if (server.tls) {
        const presented = await fetchCertificate(server)
        if (!this.settings.insecure) {
          if (this.settings.pin && !sameFingerprint(presented.fingerprint, this.settings.pin)) {
            return unreachable(pinMismatchMessage(this.settings, presented.fingerprint))
          }
          if (!this.settings.pin && !presented.trusted) return unreachable(untrustedMessage(this.settings, presented))
        }
      } else {
        await tcpConnect(server.host, server.port)
        if (await answersTls(server.host, server.port)) {
          return unreachable(`${server.target} answers with TLS, not plaintext; use --server https://${server.target}`)
        }
      }
    } catch (probeError) {
      if (probeError instanceof CliError) return probeError
      return unreachable(describeConnectFailure(server, probeError as NodeJS.ErrnoException))
    }
    if (error.grpcStatus === status.DEADLINE_EXCEEDED || TRANSPORT_FAILURE.test(error.message)) {
      return unreachable(`cannot talk gRPC to ${server.url}: ${error.message}`)
    }
    return error
  }

  close(): void {
    this.#api.close()
  }
}

function tcpConnect(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, timeout: TCP_PROBE_TIMEOUT_MS })
    socket.once('connect', () => {
      socket.destroy()
      resolve()
    })
    socket.once('timeout', () => {
      socket.destroy()
      reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }))
    })
    socket.once('error', reject)
  })
}

/** True when a TLS handshake completes: the plaintext address given points at a TLS server. */
async function answersTls(host: string, port: number): Promise<boolean> {
  try {
    await fetchCertificate({ host, port, tls: true, target: `${host}:${port}`, url: '' }, TCP_PROBE_TIMEOUT_MS)
    return true
  } catch {
    return false
  }
}

/** Opens a connection, runs `use`, and always closes the channel so the process can exit. */
export async function withConnection<T>(
  settings: ClientSettings,
  options: OpenOptions,
  use: (connection: Connection) => Promise<T>,
): Promise<T> {
  const connection = await Connection.open(settings, options)
  try {
    return await use(connection)
  } finally {
    connection.close()
  }
}

/** What most commands do: one call with the API key, on a connection of its own. */
export function runAuthenticated<T>(settings: ClientSettings, call: (api: MemsvcClient) => Promise<T>): Promise<T> {
  return withConnection(settings, { authenticated: true }, (connection) => connection.run(call))
}
