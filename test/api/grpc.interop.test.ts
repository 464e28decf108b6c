import { readFileSync } from 'node:fs'
import path from 'node:path'
import {
  create,
  createFileRegistry,
  type DescField,
  type DescMessage,
  type DescMethod,
  equals,
  fromBinary,
  fromJson,
  isFieldSet,
  type JsonObject,
  type JsonValue,
  type Message,
  type Registry,
  ScalarType,
  toBinary,
  toJson,
} from '@bufbuild/protobuf'
import { BinaryWriter } from '@bufbuild/protobuf/wire'
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt'
import * as grpc from '@grpc/grpc-js'
import { loadFileDescriptorSetFromBuffer, type MethodDefinition } from '@grpc/proto-loader'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as generatedAdmin from '../../src/generated/memsvc/v1/admin.js'
import * as generatedApiKeys from '../../src/generated/memsvc/v1/apikeys.js'
import * as generatedEmbedders from '../../src/generated/memsvc/v1/embedders.js'
import * as generatedLlms from '../../src/generated/memsvc/v1/llms.js'
import * as generatedMemories from '../../src/generated/memsvc/v1/memories.js'
import * as generatedRerankers from '../../src/generated/memsvc/v1/rerankers.js'
import * as generatedSpaces from '../../src/generated/memsvc/v1/spaces.js'
import * as generatedSystem from '../../src/generated/memsvc/v1/system.js'
import * as generatedUsers from '../../src/generated/memsvc/v1/users.js'
import { reflectionRequest } from '../support/grpc-clients.js'
import { type RetrievalFixture, startRetrievalFixture } from '../support/retrieval-fixture.js'

/**
 * A client that knows memsvc only through server reflection, as grpcurl-style tools do:
 * it fetches the files, builds stubs with @grpc/proto-loader over them, and must send
 * and receive exactly what the generated (ts-proto) client does. Reflection does not
 * depend on the database engine, so one engine is enough here.
 */

const VERSIONS = ['v1', 'v1alpha'] as const
type Version = (typeof VERSIONS)[number]

const BUILD_DESCRIPTOR_SET = readFileSync(path.resolve(import.meta.dirname, '../../dist/descriptor.binpb'))
const BUILD_FILES = fromBinary(FileDescriptorSetSchema, BUILD_DESCRIPTOR_SET).file

/** proto-loader's usual options, as a reflection client would pick them. */
const STUB_OPTIONS = { longs: String, enums: String, defaults: false, oneofs: true }

/** Every generated service definition, by full service name. */
const GENERATED_SERVICES = new Map<string, grpc.ServiceDefinition>(
  [
    generatedAdmin,
    generatedApiKeys,
    generatedEmbedders,
    generatedLlms,
    generatedMemories,
    generatedRerankers,
    generatedSpaces,
    generatedSystem,
    generatedUsers,
  ].flatMap((module) =>
    Object.values(module)
      .filter((value): value is grpc.ServiceDefinition => isServiceDefinition(value))
      .map((definition) => [serviceNameOf(definition), definition] as const),
  ),
)

function isServiceDefinition(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const first = Object.values(value)[0] as { path?: unknown } | undefined
  return typeof first?.path === 'string'
}

/** A generated definition's methods by their .proto name (ts-proto keys them in camelCase). */
function methodsByProtoName(definition: grpc.ServiceDefinition): Map<string, Serializers> {
  return new Map(
    Object.values(definition).map((method: grpc.MethodDefinition<unknown, unknown>) => [
      method.path.split('/')[2]!,
      method as unknown as Serializers,
    ]),
  )
}

function serviceNameOf(definition: grpc.ServiceDefinition): string {
  return (Object.values(definition)[0] as grpc.MethodDefinition<unknown, unknown>).path.split('/')[1]!
}

/** The answer of one reflection request that must carry files. */
async function reflectedFiles(
  address: string,
  version: Version,
  request: Parameters<typeof reflectionRequest>[2],
): Promise<Buffer[]> {
  const answer = (await reflectionRequest({ address }, version, request)).messageResponse
  if (answer?.$case !== 'fileDescriptorResponse') throw new Error(`no files for ${JSON.stringify(request)}`)
  return answer.value.fileDescriptorProto
}

/** Everything a client learns by listing services and asking for the file of each. */
async function discover(address: string, version: Version): Promise<Map<string, Buffer>> {
  const listed = (await reflectionRequest({ address }, version, { $case: 'listServices', value: '' })).messageResponse
  if (listed?.$case !== 'listServicesResponse') throw new Error('list_services failed')
  const files = new Map<string, Buffer>()
  for (const { name } of listed.value.service) {
    for (const encoded of await reflectedFiles(address, version, { $case: 'fileContainingSymbol', value: name })) {
      files.set(fromBinary(FileDescriptorProtoSchema, encoded).name, encoded)
    }
  }
  return files
}

/** A FileDescriptorSet written from the given encoded files, in the build's file order. */
function descriptorSetOf(files: Map<string, Buffer>): Uint8Array {
  const writer = new BinaryWriter()
  for (const { name } of BUILD_FILES) {
    const encoded = files.get(name)
    if (encoded) writer.tag(1, 2).bytes(encoded)
  }
  return writer.finish()
}

// ---- requests with every field set, built from the reflected descriptors ----

/** Deep enough to fill every request of the API; google.protobuf.Value nests without end. */
const MAX_FILL_DEPTH = 4

function scalarValue(type: ScalarType, text: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      return text
    case ScalarType.BOOL:
      return true
    case ScalarType.BYTES:
      return new Uint8Array([1, 2, 3])
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return 0.5
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 7n
    default:
      return 7
  }
}

/** A value for one field (or one list element / map value); undefined past the depth limit. */
function fieldValue(field: DescField, variant: number, depth: number, tag: string): unknown {
  const text = `${tag}-${field.name}`
  switch (field.fieldKind) {
    case 'scalar':
      return scalarValue(field.scalar, text)
    case 'enum':
      return field.enum.values.at(-1)!.number
    case 'message':
      return filledInit(field.message, variant, depth + 1, tag)
    case 'list':
      if (field.listKind === 'scalar') return [scalarValue(field.scalar, text)]
      if (field.listKind === 'enum') return [field.enum.values.at(-1)!.number]
      return depth + 1 > MAX_FILL_DEPTH ? [] : [filledInit(field.message, variant, depth + 1, tag)]
    case 'map': {
      const key = `${tag}-key`
      if (field.mapKind === 'scalar') return { [key]: scalarValue(field.scalar, text) }
      if (field.mapKind === 'enum') return { [key]: field.enum.values.at(-1)!.number }
      return depth + 1 > MAX_FILL_DEPTH ? {} : { [key]: filledInit(field.message, variant, depth + 1, tag) }
    }
  }
}

/** Every field set; of each oneof, the member `variant` picks (modulo its size). */
function filledInit(
  message: DescMessage,
  variant: number,
  depth: number,
  tag: string,
): Record<string, unknown> | undefined {
  if (depth > MAX_FILL_DEPTH) return undefined
  const init: Record<string, unknown> = {}
  for (const member of message.members) {
    if (member.kind === 'oneof') {
      const chosen = member.fields[variant % member.fields.length]!
      const value = fieldValue(chosen, variant, depth, tag)
      if (value !== undefined) init[member.localName] = { case: chosen.localName, value }
    } else {
      const value = fieldValue(member, variant, depth, tag)
      if (value !== undefined) init[member.localName] = value
    }
  }
  return init
}

/** How many requests it takes to set each member of every oneof at least once. */
function variantCount(message: DescMessage, depth = 0): number {
  if (depth > MAX_FILL_DEPTH) return 1
  let count = 1
  for (const oneof of message.oneofs) count = Math.max(count, oneof.fields.length)
  for (const field of message.fields) {
    if (field.message) count = Math.max(count, variantCount(field.message, depth + 1))
  }
  return count
}

/** Paths of proto3 optional fields left unset, in the message and the messages it sets. */
function unsetOptionalFields(message: DescMessage, value: Message, prefix = ''): string[] {
  const unset: string[] = []
  for (const field of message.fields) {
    const name = `${prefix}${field.name}`
    const set = isFieldSet(value, field)
    if (field.proto.proto3Optional && !set) unset.push(name)
    if (set && field.fieldKind === 'message') {
      unset.push(
        ...unsetOptionalFields(
          field.message,
          (value as Record<string, unknown>)[field.localName] as Message,
          `${name}.`,
        ),
      )
    }
    if (set && field.fieldKind === 'list' && field.listKind === 'message') {
      for (const item of (value as Record<string, unknown>)[field.localName] as Message[]) {
        unset.push(...unsetOptionalFields(field.message, item, `${name}[].`))
      }
    }
  }
  return unset
}

// ---- calling through both clients ----

interface Answer {
  code: grpc.status
  details: string
  /** The responses as proto3 JSON, decoded from each client's own re-encoding. */
  messages: JsonValue[]
}

type Serializers = Pick<
  MethodDefinition<unknown, unknown>,
  'requestSerialize' | 'requestDeserialize' | 'responseSerialize' | 'responseDeserialize'
>

/** A client's method as grpc-js attaches it: (request, metadata, options, callback) for unary calls. */
type ClientMethod = (...args: unknown[]) => unknown

function clientMethod(client: grpc.Client, method: DescMethod): ClientMethod {
  const methods = client as unknown as Record<string, ClientMethod>
  // proto-loader stubs carry the .proto name; ts-proto definitions the camelCase one.
  const attached = methods[method.name] ?? methods[method.localName]
  if (!attached) throw new Error(`the client has no method ${method.name}`)
  return attached.bind(client)
}

/** One call; responses go back to the wire through the same client's serializer, then to proto3 JSON. */
function call(
  client: grpc.Client,
  method: DescMethod,
  serializers: Serializers,
  request: unknown,
  metadata: grpc.Metadata,
  registry: Registry,
): Promise<Answer> {
  const asJson = (response: unknown) =>
    toJson(method.output, fromBinary(method.output, serializers.responseSerialize(response)), { registry })
  const options = { deadline: Date.now() + 20_000 }
  const invoke = clientMethod(client, method)
  return new Promise((resolve) => {
    if (method.methodKind === 'server_streaming') {
      const messages: JsonValue[] = []
      const stream = invoke(request, metadata, options) as grpc.ClientReadableStream<unknown>
      stream.on('data', (response) => messages.push(asJson(response)))
      stream.on('error', (error: grpc.ServiceError) => resolve({ code: error.code, details: error.details, messages }))
      stream.on('end', () => resolve({ code: grpc.status.OK, details: '', messages }))
      return
    }
    const answered = (error: grpc.ServiceError | null, response: unknown) =>
      resolve(
        error
          ? { code: error.code, details: error.details, messages: [] }
          : { code: grpc.status.OK, details: '', messages: [asJson(response)] },
      )
    if (method.methodKind === 'client_streaming') {
      // The one message, then the end of the stream: the server answers what a stream of it makes.
      const stream = invoke(metadata, options, answered) as grpc.ClientWritableStream<unknown>
      stream.write(request)
      stream.end()
      return
    }
    invoke(request, metadata, options, answered)
  })
}

/** Values that differ between two equal calls by nature: ids the server makes, times (and a memory's age), the clients' own tags. */
const VOLATILE_KEY = /(^id$|Id$|At$|^rawApiKey$|^keyPrefix$|Ms$|^ageSeconds$|^recency$)/
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

function comparable(value: unknown, tags: RegExp): unknown {
  if (typeof value === 'string') return value.replace(tags, '<tag>').replace(UUID, '<uuid>')
  if (Array.isArray(value)) return value.map((item) => comparable(item, tags))
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, VOLATILE_KEY.test(key) ? '<volatile>' : comparable(item, tags)]),
    )
  }
  return value
}

describe('gRPC interop: a client built from server reflection alone', () => {
  let fixture: RetrievalFixture
  let address: string
  const generatedClients = new Map<string, grpc.Client>()

  beforeAll(async () => {
    fixture = await startRetrievalFixture('postgresql')
    address = fixture.server.grpcAddress
    for (const [service, definition] of GENERATED_SERVICES) {
      const Client = grpc.makeGenericClientConstructor(definition, service)
      generatedClients.set(service, new Client(address, grpc.credentials.createInsecure()))
    }
  })

  afterAll(async () => {
    for (const client of generatedClients.values()) client.close()
    await fixture?.stop()
  })

  const aliceMetadata = () => {
    const metadata = new grpc.Metadata()
    metadata.set('authorization', `Bearer ${fixture.alice.apiKey}`)
    return metadata
  }

  describe.each(VERSIONS)('reflection %s', (version) => {
    let files: Map<string, Buffer>
    let registry: ReturnType<typeof createFileRegistry>
    const stubClients = new Map<string, grpc.Client>()
    let stubDefinitions: Map<string, MethodDefinition<unknown, unknown>>

    beforeAll(async () => {
      files = await discover(address, version)
      const descriptorSet = descriptorSetOf(files)
      // Imports first, as a FileDescriptorSet lists them.
      registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, descriptorSet))
      const packageDefinition = loadFileDescriptorSetFromBuffer(Buffer.from(descriptorSet), STUB_OPTIONS)
      const stubs = grpc.loadPackageDefinition(packageDefinition)
      for (const service of GENERATED_SERVICES.keys()) {
        const Stub = service.split('.').reduce<unknown>((scope, part) => (scope as grpc.GrpcObject)?.[part], stubs)
        if (typeof Stub === 'function') {
          stubClients.set(
            service,
            new (Stub as grpc.ServiceClientConstructor)(address, grpc.credentials.createInsecure()),
          )
        }
      }
      stubDefinitions = new Map()
      for (const [name, definition] of Object.entries(packageDefinition)) {
        if (!('format' in definition)) {
          for (const [methodName, method] of Object.entries(definition)) {
            stubDefinitions.set(`${name}.${methodName}`, method as MethodDefinition<unknown, unknown>)
          }
        }
      }
    })

    afterAll(() => {
      for (const client of stubClients.values()) client.close()
    })

    it('serves the build descriptor set byte for byte: every file, each under its own name, with its imports', () => {
      expect([...files.keys()].sort()).toEqual(BUILD_FILES.map((file) => file.name).sort())
      expect(Buffer.from(descriptorSetOf(files)).equals(BUILD_DESCRIPTOR_SET)).toBe(true)
    })

    it('answers file_by_filename for every file, the named file first, then what it imports', async () => {
      for (const file of BUILD_FILES) {
        const answered = await reflectedFiles(address, version, { $case: 'fileByFilename', value: file.name })
        expect(answered[0]?.equals(files.get(file.name)!), file.name).toBe(true)
        const names = answered.map((encoded) => fromBinary(FileDescriptorProtoSchema, encoded).name)
        expect(names, file.name).toEqual(expect.arrayContaining(file.dependency))
      }
    })

    it('lets a strict descriptor builder (createFileRegistry) resolve every service, method and message', () => {
      const services = [...GENERATED_SERVICES.keys()]
      for (const service of services) {
        const described = registry.getService(service)
        expect(described, service).toBeDefined()
        for (const method of described!.methods) {
          expect(method.input.typeName).toMatch(/^(memsvc\.v1|google\.protobuf)\./)
          expect(method.output.typeName).toMatch(/^(memsvc\.v1|google\.protobuf)\./)
        }
      }
      // Proto3 optional fields stay optional, not oneofs of one.
      const retrieve = registry.getMessage('memsvc.v1.RetrieveMemoryRequest')!
      expect(retrieve.oneofs).toEqual([])
      expect(retrieve.fields.find((field) => field.name === 'requested_size')?.proto.proto3Optional).toBe(true)
    })

    it('builds stubs for every method the server lists', () => {
      for (const [service, definition] of GENERATED_SERVICES) {
        expect(stubClients.has(service), service).toBe(true)
        for (const methodName of methodsByProtoName(definition).keys()) {
          expect(stubDefinitions.has(`${service}.${methodName}`), `${service}.${methodName}`).toBe(true)
        }
      }
    })

    /** The same request from both clients, each building its own object from the bytes as its users would. */
    const askBoth = async (method: DescMethod, generatedRequest: Message, stubRequest: Message) => {
      const service = method.parent.typeName
      const ask = (client: grpc.Client, serializers: Serializers, request: Message) =>
        call(
          client,
          method,
          serializers,
          serializers.requestDeserialize(Buffer.from(toBinary(method.input, request))),
          aliceMetadata(),
          registry,
        )
      const generatedMethod = methodsByProtoName(GENERATED_SERVICES.get(service)!).get(method.name)!
      const byGenerated = await ask(generatedClients.get(service)!, generatedMethod, generatedRequest)
      const stubMethod = stubDefinitions.get(`${service}.${method.name}`)!
      const byStub = await ask(stubClients.get(service)!, stubMethod, stubRequest)
      return { byGenerated, byStub }
    }

    it('carries every field of every request through its stubs, and gets the generated client’s answer to each', async () => {
      let calls = 0
      for (const service of GENERATED_SERVICES.keys()) {
        for (const method of registry.getService(service)!.methods) {
          const stubMethod = stubDefinitions.get(`${service}.${method.name}`)!
          for (let variant = 0; variant < variantCount(method.input); variant++) {
            const request = (tag: string) => create(method.input, filledInit(method.input, variant, 0, tag))
            const sent = request('interop1')
            // What the reflection stub makes of the request and puts back on the wire is the same message.
            const stubObject = stubMethod.requestDeserialize(Buffer.from(toBinary(method.input, sent)))
            const resent = fromBinary(method.input, stubMethod.requestSerialize(stubObject))
            expect(equals(method.input, resent, sent), `${method.name} variant ${variant}`).toBe(true)

            // Distinct tags, so a create does not meet the other client's row; they are masked before comparing.
            const { byGenerated, byStub } = await askBoth(method, request('interop2'), request('interop3'))
            const tags = /interop[23]/g
            expect(comparable(byStub, tags), `${method.name} variant ${variant}`).toEqual(comparable(byGenerated, tags))
            calls += 2
          }
        }
      }
      console.info(`reflection ${version}: ${calls} calls compared`)
    })

    it('answers real requests with every optional field set exactly as the generated client is answered', async () => {
      const method = (service: string, name: string) => registry.getService(`memsvc.v1.${service}`)!.method[name]!
      /** A page token from the generated client, so the request can carry next_token. */
      const nextToken = async (listMethod: DescMethod, json: JsonObject) => {
        const { byGenerated } = await askBoth(
          listMethod,
          fromJson(listMethod.input, json, { registry }),
          fromJson(listMethod.input, json, { registry }),
        )
        const token = (byGenerated.messages[0] as JsonObject | undefined)?.nextToken
        if (typeof token !== 'string')
          throw new Error(`${listMethod.name} gave no page token: ${JSON.stringify(byGenerated)}`)
        return token
      }
      const alice = fixture.alice.userId
      const spaceId = fixture.alices.spaceId
      const memoryId = fixture.alices.idOf.values().next().value!
      const travel = "val('$.topic') = 'travel'"
      const listSpaces = method('SpaceService', 'listSpaces')
      const listMemories = method('MemoryService', 'listMemories')
      const listEmbedders = method('EmbedderService', 'listEmbedders')
      const listLlms = method('LlmService', 'listLlms')
      const listApiKeys = method('ApiKeyService', 'listApiKeys')
      await fixture.newKey(fixture.alice)
      const requests: [DescMethod, JsonObject][] = [
        [method('UserService', 'getMe'), {}],
        [
          listSpaces,
          { maxResults: 1, ownerId: alice, nextToken: await nextToken(listSpaces, { maxResults: 1, ownerId: alice }) },
        ],
        [method('SpaceService', 'getSpace'), { spaceId }],
        [
          method('SpaceService', 'updateSpace'),
          { spaceId, publicRead: false, defaultOcr: 'AUTO', replaceLabels: { items: { team: 'moons' } } },
        ],
        [
          method('SpaceService', 'updateSpace'),
          { spaceId, name: `interop-${spaceId}`, mergeLabels: { items: { area: 'space' } } },
        ],
        [
          listMemories,
          {
            spaceId,
            statusFilter: 'COMPLETED',
            maxResults: 1,
            sortBy: 'createdAt',
            sortOrder: 'DESCENDING',
            filter: travel,
            nextToken: await nextToken(listMemories, {
              spaceId,
              maxResults: 1,
              sortBy: 'createdAt',
              sortOrder: 'DESCENDING',
              filter: travel,
            }),
          },
        ],
        [method('MemoryService', 'getMemory'), { memoryId }],
        [method('MemoryService', 'getMemoryContent'), { memoryId }],
        [
          listEmbedders,
          { maxResults: 1, nextToken: await nextToken(listEmbedders, { maxResults: 1 }), labelFilter: {} },
        ],
        [listLlms, { maxResults: 1, nextToken: await nextToken(listLlms, { maxResults: 1 }) }],
        [
          listApiKeys,
          {
            maxResults: 1,
            status: 'ACTIVE',
            nextToken: await nextToken(listApiKeys, { maxResults: 1, status: 'ACTIVE' }),
          },
        ],
        [
          method('MemoryService', 'retrieveMemory'),
          {
            message: 'Which tower stands in Paris?',
            spaceKeys: [
              { spaceId, embedderWeights: [{ embedderId: fixture.aliceEmbedder, weight: 1 }], filter: travel },
            ],
            requestedSize: 3,
            fetchMemory: true,
            fetchMemoryContent: true,
            mode: 'HYBRID',
            hnsw: { efSearch: 64 },
            postProcessor: {
              rerankerId: fixture.aliceReranker,
              relevanceThreshold: 0,
              chronologicalResort: true,
              llmId: fixture.aliceLlm,
              llmTemperature: 0.2,
              maxResults: 2,
              systemPrompt: 'Answer in one sentence.',
            },
            // Weight 0: the scores stay the relevance, equal for both calls; only the age parts move with the clock.
            recency: { halfLifeSeconds: 86_400, weight: 0 },
            includeExpired: true,
          },
        ],
      ]
      const unsetByMethod = new Map<DescMethod, Set<string>[]>()
      let lastStubAnswer: Answer | undefined
      for (const [calledMethod, json] of requests) {
        const request = fromJson(calledMethod.input, json, { registry })
        unsetByMethod.set(calledMethod, [
          ...(unsetByMethod.get(calledMethod) ?? []),
          new Set(unsetOptionalFields(calledMethod.input, request)),
        ])
        const { byGenerated, byStub } = await askBoth(calledMethod, request, request)
        expect(byGenerated, `${calledMethod.name} ${JSON.stringify(json)}`).toMatchObject({ code: grpc.status.OK })
        expect(comparable(byStub, /(?!)/g), calledMethod.name).toEqual(comparable(byGenerated, /(?!)/g))
        lastStubAnswer = byStub
      }
      // Admins-only owner_id is left out of the lists above, and UpdateSpace's text_search_language, which is
      // there to be refused (keyword-cases.ts); every other optional field is set at least once.
      const notSetHere = new Set(['owner_id', 'text_search_language'])
      for (const [calledMethod, unsetSets] of unsetByMethod) {
        const neverSet = [...unsetSets[0]!].filter(
          (name) => unsetSets.every((unset) => unset.has(name)) && !notSetHere.has(name),
        )
        expect(neverSet, calledMethod.name).toEqual([])
      }
      // The retrieval ran every stage: the filter, the rerank and the LLM's answer.
      const retrieval = JSON.stringify(lastStubAnswer?.messages)
      expect(retrieval).toContain('The Eiffel Tower stands in Paris')
      expect(retrieval).toContain('abstractReply')
      expect(retrieval).not.toContain('Photosynthesis')
    })
  })
})
