import * as grpc from '@grpc/grpc-js'
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader'
import { ReflectionService } from '@grpc/reflection'
import * as v1 from '../../generated/grpc/reflection/v1/reflection.js'
import * as v1alpha from '../../generated/grpc/reflection/v1alpha/reflection.js'

/** @grpc/reflection's own loader options; the package definition only feeds its descriptor index. */
const REFLECTION_LOADER_OPTIONS = { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true }

/**
 * The library's handler speaks proto-loader objects loaded from .proto text: camelCase
 * fields, and a oneof as a virtual field naming the member that is set. A descriptor
 * set loads with the descriptor's snake_case names instead, so the wire side goes
 * through the generated (ts-proto) service and these two adapters.
 */
interface LibraryRequest {
  host: string
  messageRequest?: string
  [member: string]: unknown
}
type LibraryResponse = { validHost: string } & Record<string, unknown>

interface ReflectionHandler {
  handleServerReflectionRequest(message: LibraryRequest): LibraryResponse
}

/** v1 and v1alpha messages have the same shape; only the package differs. */
type WireRequest = v1.ServerReflectionRequest
type WireResponse = v1.ServerReflectionResponse

const RESPONSE_MEMBERS = [
  'fileDescriptorResponse',
  'allExtensionNumbersResponse',
  'listServicesResponse',
  'errorResponse',
] as const

function toLibraryRequest(request: WireRequest): LibraryRequest {
  const member = request.messageRequest
  return member
    ? { host: request.host, messageRequest: member.$case, [member.$case]: member.value }
    : { host: request.host }
}

function toWireResponse(response: LibraryResponse, request: WireRequest): WireResponse {
  const member = RESPONSE_MEMBERS.find((name) => response[name] !== undefined)
  return {
    validHost: response.validHost,
    originalRequest: request,
    messageResponse: member
      ? ({ $case: member, value: response[member] } as WireResponse['messageResponse'])
      : undefined,
  }
}

/** Served beside the application services by addStandardServices. */
const STANDARD_SERVICES = [
  'grpc.health.v1.Health',
  'grpc.reflection.v1.ServerReflection',
  'grpc.reflection.v1alpha.ServerReflection',
]

/**
 * Server reflection v1 and v1alpha, so grpcurl works without proto files. The library
 * indexes our descriptor set; we register its handler ourselves because its own
 * addToServer reads .proto files from node_modules, which the executable does not have.
 * It lists only the services this server registered: the descriptor set may describe
 * more (a proto whose service is not wired yet), and listing those would advertise
 * methods that answer UNIMPLEMENTED.
 */
export function addReflectionService(server: grpc.Server, descriptorSet: Buffer, serviceNames: string[]): void {
  const packageDefinition = loadFileDescriptorSetFromBuffer(descriptorSet, REFLECTION_LOADER_OPTIONS)
  const reflection = new ReflectionService(packageDefinition, {
    services: [...STANDARD_SERVICES, ...serviceNames],
  }) as unknown as {
    v1: ReflectionHandler
    v1Alpha: ReflectionHandler
  }
  const register = (
    definition: typeof v1.ServerReflectionService | typeof v1alpha.ServerReflectionService,
    handler: ReflectionHandler,
  ) =>
    server.addService(definition, {
      serverReflectionInfo(stream: grpc.ServerDuplexStream<WireRequest, WireResponse>) {
        stream.on('end', () => stream.end())
        stream.on('data', (request: WireRequest) =>
          stream.write(toWireResponse(handler.handleServerReflectionRequest(toLibraryRequest(request)), request)),
        )
      },
    })
  register(v1.ServerReflectionService, reflection.v1)
  register(v1alpha.ServerReflectionService, reflection.v1Alpha)
}
