// MemsvcClient: one object per server, one property per gRPC service of proto/memsvc/v1.
import { HealthService } from '../../src/generated/grpc/health/v1/health.js'
import { AdminServiceService } from '../../src/generated/memsvc/v1/admin.js'
import { ApiKeyServiceService } from '../../src/generated/memsvc/v1/apikeys.js'
import { EmbedderServiceService } from '../../src/generated/memsvc/v1/embedders.js'
import { LlmServiceService } from '../../src/generated/memsvc/v1/llms.js'
import { MemoryServiceService } from '../../src/generated/memsvc/v1/memories.js'
import { RerankerServiceService } from '../../src/generated/memsvc/v1/rerankers.js'
import { SpaceServiceService } from '../../src/generated/memsvc/v1/spaces.js'
import { SystemServiceService } from '../../src/generated/memsvc/v1/system.js'
import { UserServiceService } from '../../src/generated/memsvc/v1/users.js'
import { bindService } from './services.js'
import { type MemsvcClientOptions, Transport } from './transport.js'

/** The registries (embedders, LLMs, rerankers) share one shape. */
const REGISTRY_IDEMPOTENT = ['list', 'get', 'probe'] as const

function services(transport: Transport) {
  return {
    apiKeys: bindService(
      transport,
      ApiKeyServiceService,
      { create: 'createApiKey', list: 'listApiKeys', update: 'updateApiKey', delete: 'deleteApiKey' },
      ['list'],
    ),
    users: bindService(
      transport,
      UserServiceService,
      { create: 'createUser', list: 'listUsers', get: 'getUser', delete: 'deleteUser', me: 'getMe' },
      ['list', 'get', 'me'],
    ),
    system: bindService(transport, SystemServiceService, { initialize: 'initializeSystem', info: 'getSystemInfo' }, [
      'info',
    ]),
    embedders: bindService(
      transport,
      EmbedderServiceService,
      {
        create: 'createEmbedder',
        list: 'listEmbedders',
        get: 'getEmbedder',
        update: 'updateEmbedder',
        delete: 'deleteEmbedder',
        probe: 'probeEmbedder',
      },
      REGISTRY_IDEMPOTENT,
    ),
    llms: bindService(
      transport,
      LlmServiceService,
      {
        create: 'createLlm',
        list: 'listLlms',
        get: 'getLlm',
        update: 'updateLlm',
        delete: 'deleteLlm',
        probe: 'probeLlm',
      },
      REGISTRY_IDEMPOTENT,
    ),
    rerankers: bindService(
      transport,
      RerankerServiceService,
      {
        create: 'createReranker',
        list: 'listRerankers',
        get: 'getReranker',
        update: 'updateReranker',
        delete: 'deleteReranker',
        probe: 'probeReranker',
      },
      REGISTRY_IDEMPOTENT,
    ),
    spaces: bindService(
      transport,
      SpaceServiceService,
      {
        create: 'createSpace',
        list: 'listSpaces',
        get: 'getSpace',
        update: 'updateSpace',
        delete: 'deleteSpace',
        addEmbedder: 'addSpaceEmbedder',
        removeEmbedder: 'removeSpaceEmbedder',
        export: 'exportSpace',
        import: 'importSpace',
        getImport: 'getSpaceImport',
      },
      ['list', 'get', 'export', 'getImport'],
    ),
    memories: bindService(
      transport,
      MemoryServiceService,
      {
        create: 'createMemory',
        batchCreate: 'batchCreateMemories',
        get: 'getMemory',
        getContent: 'getMemoryContent',
        list: 'listMemories',
        delete: 'deleteMemory',
        batchDelete: 'batchDeleteMemories',
        retrieve: 'retrieveMemory',
        upload: 'uploadMemory',
        downloadContent: 'downloadMemoryContent',
        getPageImage: 'getPageImage',
        update: 'updateMemory',
        batchUpdate: 'batchUpdateMemories',
        batchGet: 'batchGetMemories',
        history: 'getMemoryHistory',
      },
      ['get', 'getContent', 'list', 'retrieve', 'downloadContent', 'getPageImage', 'batchGet', 'history'],
    ),
    admin: bindService(transport, AdminServiceService, { drain: 'drain' }, []),
    /** grpc.health.v1: SERVING once the server is ready (service '' or 'memsvc.v1.…'). */
    health: bindService(transport, HealthService, { check: 'check', watch: 'watch' }, ['check']),
  }
}

type Services = ReturnType<typeof services>

export class MemsvcClient {
  readonly apiKeys: Services['apiKeys']
  readonly users: Services['users']
  readonly system: Services['system']
  readonly embedders: Services['embedders']
  readonly llms: Services['llms']
  readonly rerankers: Services['rerankers']
  readonly spaces: Services['spaces']
  readonly memories: Services['memories']
  readonly admin: Services['admin']
  readonly health: Services['health']
  readonly #transport: Transport

  /** Connects lazily: nothing goes over the network until the first call. */
  constructor(options: MemsvcClientOptions) {
    this.#transport = new Transport(options)
    const bound = services(this.#transport)
    this.apiKeys = bound.apiKeys
    this.users = bound.users
    this.system = bound.system
    this.embedders = bound.embedders
    this.llms = bound.llms
    this.rerankers = bound.rerankers
    this.spaces = bound.spaces
    this.memories = bound.memories
    this.admin = bound.admin
    this.health = bound.health
  }

  /** Closes the channel; calls made afterwards fail with UNAVAILABLE. */
  close(): void {
    this.#transport.close()
  }
}
