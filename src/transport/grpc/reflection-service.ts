import type * as grpc from '@grpc/grpc-js'
import { status } from '@grpc/grpc-js'
import * as v1 from '../../generated/grpc/reflection/v1/reflection.js'
import * as v1alpha from '../../generated/grpc/reflection/v1alpha/reflection.js'
import { type DescriptorIndex, indexDescriptorSet, withDependencies } from './descriptor-index.js'

/** v1 and v1alpha messages have the same shape; only the package differs. */
type WireRequest = v1.ServerReflectionRequest
type WireResponse = v1.ServerReflectionResponse
type Answer = NonNullable<WireResponse['messageResponse']>

/** Served beside the application services by addStandardServices. */
const STANDARD_SERVICES = [
  'grpc.health.v1.Health',
  'grpc.reflection.v1.ServerReflection',
  'grpc.reflection.v1alpha.ServerReflection',
]

/** Names from the request are quoted this far at most: the answer should not grow with what a client sends. */
const MAX_QUOTED_NAME_LENGTH = 200
const quoted = (name: string) => JSON.stringify(name.slice(0, MAX_QUOTED_NAME_LENGTH))

function notFound(message: string): Answer {
  return { $case: 'errorResponse', value: { errorCode: status.NOT_FOUND, errorMessage: message } }
}

function filesAnswer(index: DescriptorIndex, fileName: string): Answer {
  return {
    $case: 'fileDescriptorResponse',
    value: { fileDescriptorProto: withDependencies(index, fileName).map((file) => Buffer.from(file.encoded)) },
  }
}

/** The reflection protocol's answer to one request, over the descriptor index. */
function answer(index: DescriptorIndex, serviceNames: readonly string[], request: WireRequest): Answer {
  const asked = request.messageRequest
  switch (asked?.$case) {
    case 'fileByFilename':
      return index.files.has(asked.value)
        ? filesAnswer(index, asked.value)
        : notFound(`file not found: ${quoted(asked.value)}`)
    case 'fileContainingSymbol': {
      const fileName = index.fileBySymbol.get(asked.value.replace(/^\./, ''))
      return fileName ? filesAnswer(index, fileName) : notFound(`symbol not found: ${quoted(asked.value)}`)
    }
    case 'fileContainingExtension': {
      const { containingType, extensionNumber } = asked.value
      const fileName = index.extensionFiles.get(containingType.replace(/^\./, ''))?.get(extensionNumber)
      return fileName
        ? filesAnswer(index, fileName)
        : notFound(`extension not found: ${quoted(containingType)} field ${extensionNumber}`)
    }
    case 'allExtensionNumbersOfType': {
      const typeName = asked.value.replace(/^\./, '')
      if (!index.messageTypes.has(typeName)) return notFound(`type not found: ${quoted(asked.value)}`)
      const numbers = [...(index.extensionFiles.get(typeName)?.keys() ?? [])]
      return { $case: 'allExtensionNumbersResponse', value: { baseTypeName: typeName, extensionNumber: numbers } }
    }
    case 'listServices':
      return { $case: 'listServicesResponse', value: { service: serviceNames.map((name) => ({ name })) } }
    default:
      return {
        $case: 'errorResponse',
        value: { errorCode: status.INVALID_ARGUMENT, errorMessage: 'message_request: set one of its fields' },
      }
  }
}

/**
 * Server reflection v1 and v1alpha, so grpcurl and clients that build their stubs from
 * reflection work without proto files. Each answer holds files of the build's descriptor
 * set (buf's own encoding, under their own names, with their imports), never a rewrite.
 * It lists only the services this server registered: the descriptor set may describe more
 * (a proto whose service is not wired yet), and listing those would advertise methods
 * that answer UNIMPLEMENTED. The descriptor set is read and indexed on the first
 * reflection call, because most servers are never asked.
 */
export function addReflectionService(
  server: grpc.Server,
  loadDescriptorSet: () => Buffer,
  serviceNames: string[],
): void {
  let index: DescriptorIndex | undefined
  const listed = () => [...STANDARD_SERVICES, ...serviceNames]
  const implementation = {
    serverReflectionInfo(stream: grpc.ServerDuplexStream<WireRequest, WireResponse>) {
      let failed = false
      stream.on('data', (request: WireRequest) => {
        if (failed) return
        let messageResponse: Answer
        try {
          index ??= indexDescriptorSet(loadDescriptorSet())
          messageResponse = answer(index, listed(), request)
        } catch {
          failed = true
          stream.emit('error', { code: status.INTERNAL, details: 'server reflection is unavailable' })
          return
        }
        stream.write({ validHost: request.host, originalRequest: request, messageResponse })
      })
      stream.on('end', () => stream.end())
    },
  }
  server.addService(v1.ServerReflectionService, implementation)
  server.addService(v1alpha.ServerReflectionService, implementation)
}
