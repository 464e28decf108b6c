// One gRPC channel per command, shared by the service clients it needs, with the
// credentials chosen by tls-trust.ts and the API key as call metadata. Failures that
// are really "cannot reach / cannot trust the server" are diagnosed into one clear
// line with exit code 3; everything the server answered stays a server error.
import net from 'node:net'
import {
  type CallOptions,
  Channel,
  type ChannelCredentials,
  type Client,
  type ClientOptions,
  type ClientReadableStream,
  type ClientUnaryCall,
  Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js'
import { VERSION } from '../runtime/environment.js'
import { type ClientSettings, requireApiKey } from './client-settings.js'
import { isServiceError } from './error-report.js'
import { CliError, unreachable } from './exit-codes.js'
import { channelCredentials, describeConnectFailure, fetchCertificate, pinMismatchMessage, sameFingerprint, untrustedMessage } from './tls-trust.js'

/** Generous: a CLI call should never hang forever, but drain --wait sets its own. */
const DEFAULT_DEADLINE_MS = 60_000
const TCP_PROBE_TIMEOUT_MS = 5_000
/** Errors grpc-js makes up itself when no HTTP/2 conversation with a server happened. */
const TRANSPORT_FAILURE = /No connection established|Connection dropped|Protocol error|Failed to connect|name resolution|DNS resolution failed|Received HTTP status code|Channel closed before/i

type ClientConstructor<C extends Client> = new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>) => C

/** The request and response types of a generated unary method (its last overload). */
type UnaryMethod<Request, Response> = (
  request: Request,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Response) => void,
) => ClientUnaryCall
type RequestOf<M> = M extends UnaryMethod<infer Request, unknown> ? Request : never
type ResponseOf<M> = M extends UnaryMethod<never, infer Response> ? Response : never
type UnaryMethodName<C> = { [K in keyof C]: C[K] extends UnaryMethod<never, unknown> ? K : never }[keyof C]

export interface OpenOptions {
  /** Sends the API key; fails with exit 2 before connecting when there is none. */
  authenticated: boolean
}

export class Connection {
  readonly #channel: Channel
  readonly #clients = new Map<unknown, Client>()
  readonly #apiKey: string | undefined

  private constructor(
    readonly settings: ClientSettings,
    readonly credentials: ChannelCredentials,
    apiKey: string | undefined,
  ) {
    this.#apiKey = apiKey
    this.#channel = new Channel(settings.server.target, credentials, { 'grpc.primary_user_agent': `memsvc-cli/${VERSION}` })
  }

  static async open(settings: ClientSettings, options: OpenOptions): Promise<Connection> {
    const apiKey = options.authenticated ? requireApiKey(settings) : undefined
    return new Connection(settings, await channelCredentials(settings), apiKey)
  }

  /** With a caller-chosen key (init checks a key before saving it). */
  static async openWithKey(settings: ClientSettings, credentials: ChannelCredentials, apiKey: string | undefined): Promise<Connection> {
    return new Connection(settings, credentials, apiKey)
  }

  client<C extends Client>(Constructor: ClientConstructor<C>): C {
    let client = this.#clients.get(Constructor) as C | undefined
    if (!client) {
      client = new Constructor(this.settings.server.target, this.credentials, { channelOverride: this.#channel })
      this.#clients.set(Constructor, client)
    }
    return client
  }

  /** One unary call; rejects with a CliError (connection/trust) or the ServiceError (server). */
  call<C extends Client, M extends UnaryMethodName<C>>(
    client: C,
    method: M,
    request: RequestOf<C[M]>,
    deadlineMs = DEFAULT_DEADLINE_MS,
  ): Promise<ResponseOf<C[M]>> {
    const metadata = new Metadata()
    if (this.#apiKey) metadata.set('authorization', `Bearer ${this.#apiKey}`)
    const invoke = client[method] as unknown as UnaryMethod<RequestOf<C[M]>, ResponseOf<C[M]>>
    return new Promise<ResponseOf<C[M]>>((resolve, reject) => {
      invoke.call(client, request, metadata, { deadline: new Date(Date.now() + deadlineMs) }, (error, response) => {
        if (error) reject(error)
        else resolve(response)
      })
    }).catch(async (error: unknown) => {
      if (isServiceError(error) && (error.code === status.UNAVAILABLE || error.code === status.DEADLINE_EXCEEDED)) throw await this.diagnose(error)
      throw error
    })
  }

  /**
   * A server-streaming call, read as it arrives. No deadline: the server bounds the work (an
   * LLM answer can take minutes). Fails like `call` when the stream cannot start.
   */
  async *stream<Request, Response>(open: (metadata: Metadata) => ClientReadableStream<Response>): AsyncGenerator<Response> {
    const metadata = new Metadata()
    if (this.#apiKey) metadata.set('authorization', `Bearer ${this.#apiKey}`)
    const call = open(metadata)
    try {
      for await (const message of call) yield message as Response
    } catch (error) {
      if (isServiceError(error) && (error.code === status.UNAVAILABLE || error.code === status.DEADLINE_EXCEEDED)) throw await this.diagnose(error)
      throw error
    } finally {
      // Leaving early (an error while printing, Ctrl-C) cancels the call, which cancels the server's work.
      call.cancel()
    }
  }

  /**
   * After UNAVAILABLE or a deadline: look at the socket level to tell "no server /
   * wrong protocol / untrusted certificate" (exit 3) from a server that answered
   * UNAVAILABLE itself, e.g. while draining (exit 1): that one is returned unchanged.
   */
  async diagnose(error: ServiceError): Promise<CliError | ServiceError> {
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
    if (error.code === status.DEADLINE_EXCEEDED || TRANSPORT_FAILURE.test(error.details)) {
      return unreachable(`cannot talk gRPC to ${server.url}: ${error.details}`)
    }
    return error
  }

  close(): void {
    for (const client of this.#clients.values()) client.close()
    this.#channel.close()
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
export async function withConnection<T>(settings: ClientSettings, options: OpenOptions, use: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await Connection.open(settings, options)
  try {
    return await use(connection)
  } finally {
    connection.close()
  }
}
