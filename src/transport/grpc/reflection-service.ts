import type * as grpc from '@grpc/grpc-js'
import { status } from '@grpc/grpc-js'
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

/** Both versions' handlers over one index of the descriptor set. */
async function createHandlers(
  descriptorSet: Buffer,
  serviceNames: string[],
): Promise<{ v1: ReflectionHandler; v1Alpha: ReflectionHandler }> {
  const [{ loadFileDescriptorSetFromBuffer }, { ReflectionService }] = await Promise.all([
    import('@grpc/proto-loader'),
    import('@grpc/reflection'),
  ])
  const packageDefinition = loadFileDescriptorSetFromBuffer(descriptorSet, REFLECTION_LOADER_OPTIONS)
  return new ReflectionService(packageDefinition, { services: [...STANDARD_SERVICES, ...serviceNames] }) as unknown as {
    v1: ReflectionHandler
    v1Alpha: ReflectionHandler
  }
}

/**
 * Server reflection v1 and v1alpha, so grpcurl works without proto files. The library
 * indexes our descriptor set; we register its handler ourselves because its own
 * addToServer reads .proto files from node_modules, which the executable does not have.
 * It lists only the services this server registered: the descriptor set may describe
 * more (a proto whose service is not wired yet), and listing those would advertise
 * methods that answer UNIMPLEMENTED. The libraries are loaded and the index built on the
 * first reflection call: decoding every file of the descriptor set (once per version) took
 * about a third of the time from exec to READY, and most servers are never asked.
 */
export function addReflectionService(
  server: grpc.Server,
  loadDescriptorSet: () => Buffer,
  serviceNames: string[],
): void {
  let handlers: ReturnType<typeof createHandlers> | undefined
  const register = (
    definition: typeof v1.ServerReflectionService | typeof v1alpha.ServerReflectionService,
    pick: (loaded: Awaited<ReturnType<typeof createHandlers>>) => ReflectionHandler,
  ) =>
    server.addService(definition, {
      serverReflectionInfo(stream: grpc.ServerDuplexStream<WireRequest, WireResponse>) {
        // Every request waits on the one before, so answers keep the order of the requests.
        let answered: Promise<boolean> = Promise.resolve(true)
        stream.on('data', (request: WireRequest) => {
          handlers ??= createHandlers(loadDescriptorSet(), serviceNames)
          const loading = handlers
          answered = answered.then(async (open) => {
            if (!open) return false
            try {
              const handler = pick(await loading)
              stream.write(toWireResponse(handler.handleServerReflectionRequest(toLibraryRequest(request)), request))
              return true
            } catch {
              stream.emit('error', { code: status.INTERNAL, details: 'server reflection is unavailable' })
              return false
            }
          })
        })
        stream.on('end', () => void answered.then((open) => open && stream.end()))
      },
    })
  register(v1.ServerReflectionService, (loaded) => loaded.v1)
  register(v1alpha.ServerReflectionService, (loaded) => loaded.v1Alpha)
}
