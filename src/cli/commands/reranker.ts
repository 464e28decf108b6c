// memsvc reranker create|list|get|update|delete|probe
import type { Argv } from 'yargs'
import {
  type CreateRerankerRequest,
  type ListRerankersRequest,
  Reranker_ProviderType as ProviderType,
  type Reranker,
  type UpdateRerankerRequest,
} from '../../generated/memsvc/v1/rerankers.js'
import { formatLabels, formatTime } from '../output.js'
import { COMMON_SETTINGS, describeCredentials, describeProbe, type Setting } from '../registry-options.js'
import { ID_WIDTH } from '../table.js'
import { complete, type RegistryKind, registryCommand } from './registry-command.js'

const PROVIDER_TYPES = [
  ProviderType.VENDORA,
  ProviderType.VLLM,
  ProviderType.TEI,
  ProviderType.LLAMA_CPP,
  ProviderType.VENDORE,
  ProviderType.VENDORD,
  ProviderType.VENDORF,
] as const

// A reranker has only the settings every registration has.
const SETTINGS: Setting[] = [
  ...COMMON_SETTINGS,
  {
    flag: 'api-path',
    field: 'apiPath',
    kind: 'text',
    describe: 'Path under the endpoint (default by provider: VENDORD /v2/rerank, TEI /rerank, others /v1/rerank)',
  },
]

const CREATE_DEFAULTS: CreateRerankerRequest = {
  providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED,
  supportedModalities: [],
  labels: {},
}
const LIST_DEFAULTS: ListRerankersRequest = { providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED, labelFilter: {} }
const UPDATE_DEFAULTS: UpdateRerankerRequest = { rerankerId: '', providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED }

export const RERANKER_KIND: RegistryKind<Reranker> = {
  noun: 'reranker',
  plural: 'rerankers',
  article: 'a reranker',
  idField: 'rerankerId',
  providerTypes: PROVIDER_TYPES,
  settings: SETTINGS,
  columns: [
    { header: 'ID', value: (reranker) => reranker.rerankerId, minWidth: ID_WIDTH },
    { header: 'NAME', value: (reranker) => reranker.displayName },
    { header: 'PROVIDER', value: (reranker) => reranker.providerType, minWidth: 8 },
    { header: 'MODEL', value: (reranker) => reranker.modelIdentifier },
    { header: 'PROBE', value: (reranker) => reranker.lastProbe?.status ?? '-', minWidth: 5 },
    { header: 'ENDPOINT', value: (reranker) => `${reranker.endpointUrl}${reranker.apiPath}`, dropOrder: 1 },
    { header: 'LABELS', value: (reranker) => formatLabels(reranker.labels), dropOrder: 2 },
  ],
  fields: (reranker) => [
    ['id', reranker.rerankerId],
    ['display name', reranker.displayName],
    ['description', reranker.description],
    ['provider', reranker.providerType],
    ['endpoint', reranker.endpointUrl],
    ['api path', reranker.apiPath],
    ['model', reranker.modelIdentifier],
    ['modalities', reranker.supportedModalities.join(', ')],
    ['labels', formatLabels(reranker.labels)],
    ['version', reranker.version],
    ['monitoring', reranker.monitoringEndpoint],
    ['credentials', describeCredentials(reranker.credentials)],
    ['last probe', describeProbe(reranker.lastProbe)],
    ['owner', reranker.ownerId],
    ['created', `${formatTime(reranker.createdAt)} by ${reranker.createdById}`],
    ['updated', `${formatTime(reranker.updatedAt)} by ${reranker.updatedById}`],
  ],
  examples: {
    create: [
      [
        '$0 reranker create --display-name "TEI rerank" --provider-type TEI --endpoint-url http://tei-rerank:8080 ' +
          '--model-identifier BAAI/bge-reranker-base --no-credentials',
        'a local model',
      ],
      [
        '$0 reranker create --display-name "Hosted rerank" --provider-type VENDORD --endpoint-url https://api.vendord.example ' +
          '--model-identifier rerank-v3.5 --api-key-secret-file key.txt --label env=prod',
        'a hosted model with an API key',
      ],
    ],
    list: [
      ['$0 reranker list', 'your rerankers'],
      [
        '$0 reranker list --provider-type TEI --label env=prod --all --output json',
        'filtered, every page, for a script',
      ],
    ],
    update: [
      [
        '$0 reranker update 7d2f… --model-identifier rerank-v4 --merge-label tier=gold',
        'change the model and add a label',
      ],
      ['$0 reranker update 7d2f… --api-key-secret-file new-key.txt', 'rotate the provider key'],
      ['$0 reranker update --merge-label tier=gold --merge-label team=search 7d2f…', 'add two labels, keep the others'],
    ],
  },
  rpc: {
    create: (connection, request) => connection.run((api) => api.rerankers.create(complete(CREATE_DEFAULTS, request))),
    async list(connection, request) {
      const response = await connection.run((api) => api.rerankers.list(complete(LIST_DEFAULTS, request)))
      return { items: response.rerankers, nextToken: response.nextToken }
    },
    get: (connection, rerankerId) => connection.run((api) => api.rerankers.get({ rerankerId })),
    update: (connection, request) => connection.run((api) => api.rerankers.update(complete(UPDATE_DEFAULTS, request))),
    async remove(connection, rerankerId) {
      await connection.run((api) => api.rerankers.delete({ rerankerId }))
    },
    probe: (connection, rerankerId) => connection.run((api) => api.rerankers.probe({ rerankerId })),
  },
}

export function rerankerCommand(yargs: Argv): Argv {
  return registryCommand(
    yargs,
    RERANKER_KIND,
    'Register and manage rerankers (models that reorder retrieved results by relevance)',
  )
}
