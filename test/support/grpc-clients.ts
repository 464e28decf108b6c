import * as grpc from '@grpc/grpc-js'
import {
  type HealthCheckResponse,
  HealthClient,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from '../../src/generated/grpc/health/v1/health.js'
import {
  ServerReflectionClient as ReflectionV1Client,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from '../../src/generated/grpc/reflection/v1/reflection.js'
import { ServerReflectionClient as ReflectionV1AlphaClient } from '../../src/generated/grpc/reflection/v1alpha/reflection.js'

export { ServingStatus }

export interface GrpcTarget {
  address: string
  /** PEM to trust (a self-signed server certificate or a CA); plaintext when absent. */
  ca?: Buffer | string
  /** TLS server name to verify, when the address is not one of the certificate's names. */
  serverName?: string
}

export function credentialsFor(target: GrpcTarget): grpc.ChannelCredentials {
  return target.ca === undefined
    ? grpc.credentials.createInsecure()
    : grpc.credentials.createSsl(Buffer.from(target.ca))
}

function channelOptions(target: GrpcTarget): Partial<grpc.ClientOptions> {
  return target.serverName
    ? { 'grpc.ssl_target_name_override': target.serverName, 'grpc.default_authority': target.serverName }
    : {}
}

const deadlineIn = (ms: number) => new Date(Date.now() + ms)

/** A live Watch stream that records every status it receives. */
export interface HealthWatch {
  statuses: ServingStatus[]
  /** Resolves once `status` has been received after `fromIndex` (default: at any point). */
  waitFor(status: ServingStatus, fromIndex?: number, timeoutMs?: number): Promise<void>
  /** Set if the stream ended with an error other than our own cancel. */
  error(): grpc.ServiceError | undefined
  cancel(): void
}

/** grpc.health.v1 over the generated client. */
export class HealthProbe {
  readonly client: InstanceType<typeof HealthClient>

  constructor(target: GrpcTarget) {
    this.client = new HealthClient(target.address, credentialsFor(target), channelOptions(target))
  }

  check(service = '', timeoutMs = 5_000): Promise<ServingStatus> {
    return new Promise((resolve, reject) => {
      this.client.check({ service }, new grpc.Metadata(), { deadline: deadlineIn(timeoutMs) }, (error, response) =>
        error ? reject(error) : resolve(response.status),
      )
    })
  }

  watch(service = ''): HealthWatch {
    const call = this.client.watch({ service })
    const statuses: ServingStatus[] = []
    let failure: grpc.ServiceError | undefined
    const listeners = new Set<() => void>()
    call.on('data', (response: HealthCheckResponse) => {
      statuses.push(response.status)
      for (const listener of listeners) listener()
    })
    call.on('error', (error: grpc.ServiceError) => {
      if (error.code !== grpc.status.CANCELLED) failure = error
      for (const listener of listeners) listener()
    })
    return {
      statuses,
      error: () => failure,
      cancel: () => call.cancel(),
      waitFor(status, fromIndex = 0, timeoutMs = 20_000) {
        return new Promise<void>((resolve, reject) => {
          const check = () => {
            if (statuses.slice(fromIndex).includes(status)) {
              done()
              resolve()
            } else if (failure) {
              done()
              reject(failure)
            }
          }
          const timer = setTimeout(() => {
            done()
            reject(
              new Error(
                `Watch did not report ${status} within ${timeoutMs} ms; got ${statuses.join(', ') || 'nothing'}`,
              ),
            )
          }, timeoutMs)
          const done = () => {
            clearTimeout(timer)
            listeners.delete(check)
          }
          listeners.add(check)
          check()
        })
      },
    }
  }

  close(): void {
    this.client.close()
  }
}

type ReflectionRequest = ServerReflectionRequest['messageRequest']

/** One request/response exchange over server reflection (v1 or v1alpha) with the generated clients. */
export function reflectionRequest(
  target: GrpcTarget,
  version: 'v1' | 'v1alpha',
  request: ReflectionRequest,
  timeoutMs = 5_000,
): Promise<ServerReflectionResponse> {
  const Client = version === 'v1' ? ReflectionV1Client : ReflectionV1AlphaClient
  const client = new Client(target.address, credentialsFor(target), channelOptions(target))
  return new Promise<ServerReflectionResponse>((resolve, reject) => {
    const stream = client.serverReflectionInfo({ deadline: deadlineIn(timeoutMs) })
    stream.on('data', (response: ServerReflectionResponse) => {
      resolve(response)
      stream.end()
    })
    stream.on('error', reject)
    stream.write({ host: '', messageRequest: request })
  }).finally(() => client.close())
}

/** Lists services over server reflection. */
export async function listServicesByReflection(
  target: GrpcTarget,
  version: 'v1' | 'v1alpha',
  timeoutMs = 5_000,
): Promise<string[]> {
  const answer = (await reflectionRequest(target, version, { $case: 'listServices', value: '*' }, timeoutMs))
    .messageResponse
  if (answer?.$case !== 'listServicesResponse')
    throw new Error(`unexpected reflection answer ${JSON.stringify(answer)}`)
  return answer.value.service.map((entry) => entry.name)
}

/** Asks reflection for the file declaring `symbol`; returns how many descriptors came back. */
export async function fileContainingSymbol(
  target: GrpcTarget,
  version: 'v1' | 'v1alpha',
  symbol: string,
  timeoutMs = 5_000,
): Promise<number> {
  const answer = (await reflectionRequest(target, version, { $case: 'fileContainingSymbol', value: symbol }, timeoutMs))
    .messageResponse
  if (answer?.$case !== 'fileDescriptorResponse')
    throw new Error(`unexpected reflection answer ${JSON.stringify(answer)}`)
  return answer.value.fileDescriptorProto.length
}

/**
 * A unary call with a raw request payload, for size-limit tests against any method
 * without building a typed request.
 */
export function rawUnaryCall(
  target: GrpcTarget,
  path: string,
  payload: Buffer,
  timeoutMs = 10_000,
  metadata = new grpc.Metadata(),
): Promise<Buffer> {
  const client = new grpc.Client(target.address, credentialsFor(target), {
    ...channelOptions(target),
    'grpc.max_send_message_length': -1,
    'grpc.max_receive_message_length': -1,
  })
  return new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (value: Buffer) => value,
      (value: Buffer) => value,
      payload,
      metadata,
      { deadline: deadlineIn(timeoutMs) },
      (error, response) => (error ? reject(error) : resolve(response!)),
    )
  }).finally(() => client.close())
}
