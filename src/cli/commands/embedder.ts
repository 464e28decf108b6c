// memsvc embedder create|list|get|update|delete|probe
import type { Argv } from 'yargs'
import {
  type CreateEmbedderRequest,
  Embedder_DistributionType as DistributionType,
  type Embedder,
  type ListEmbeddersRequest,
  Embedder_ProviderType as ProviderType,
  type UpdateEmbedderRequest,
} from '../../generated/memsvc/v1/embedders.js'
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
const DISTRIBUTION_TYPES = [DistributionType.DENSE, DistributionType.SPARSE] as const

const SETTINGS: Setting[] = [
  ...COMMON_SETTINGS,
  {
    flag: 'api-path',
    field: 'apiPath',
    kind: 'text',
    describe: 'Path under the endpoint (default by provider: VENDORD /v2/embed, TEI /embed, others /embeddings)',
  },
  {
    flag: 'dimensionality',
    field: 'dimensionality',
    kind: 'int',
    describe: 'Output vector dimensions (required on create)',
  },
  {
    flag: 'distribution-type',
    field: 'distributionType',
    kind: 'choice',
    choices: DISTRIBUTION_TYPES,
    describe: `${DISTRIBUTION_TYPES.join(' or ')} (default DENSE)`,
  },
  { flag: 'max-sequence-length', field: 'maxSequenceLength', kind: 'int', describe: 'Maximum input sequence length' },
]

const CREATE_DEFAULTS: CreateEmbedderRequest = {
  providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED,
  distributionType: DistributionType.DISTRIBUTION_TYPE_UNSPECIFIED,
  supportedModalities: [],
  labels: {},
}
const LIST_DEFAULTS: ListEmbeddersRequest = { providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED, labelFilter: {} }
const UPDATE_DEFAULTS: UpdateEmbedderRequest = {
  embedderId: '',
  providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED,
  distributionType: DistributionType.DISTRIBUTION_TYPE_UNSPECIFIED,
}

export const EMBEDDER_KIND: RegistryKind<Embedder> = {
  noun: 'embedder',
  plural: 'embedders',
  article: 'an embedder',
  idField: 'embedderId',
  providerTypes: PROVIDER_TYPES,
  settings: SETTINGS,
  columns: [
    { header: 'ID', value: (embedder) => embedder.embedderId, minWidth: ID_WIDTH },
    { header: 'NAME', value: (embedder) => embedder.displayName },
    { header: 'PROVIDER', value: (embedder) => embedder.providerType, minWidth: 8 },
    { header: 'MODEL', value: (embedder) => embedder.modelIdentifier },
    { header: 'DIM', value: (embedder) => String(embedder.dimensionality), minWidth: 3 },
    { header: 'ENDPOINT', value: (embedder) => `${embedder.endpointUrl}${embedder.apiPath}`, dropOrder: 1 },
    { header: 'LABELS', value: (embedder) => formatLabels(embedder.labels), dropOrder: 2 },
  ],
  fields: (embedder) => [
    ['id', embedder.embedderId],
    ['display name', embedder.displayName],
    ['description', embedder.description],
    ['provider', embedder.providerType],
    ['endpoint', embedder.endpointUrl],
    ['api path', embedder.apiPath],
    ['model', embedder.modelIdentifier],
    ['dimensionality', String(embedder.dimensionality)],
    ['distribution', embedder.distributionType],
    ['max sequence length', embedder.maxSequenceLength?.toString()],
    ['modalities', embedder.supportedModalities.join(', ')],
    ['labels', formatLabels(embedder.labels)],
    ['version', embedder.version],
    ['monitoring', embedder.monitoringEndpoint],
    ['credentials', describeCredentials(embedder.credentials)],
    ['last probe', describeProbe(embedder.lastProbe)],
    ['owner', embedder.ownerId],
    ['created', `${formatTime(embedder.createdAt)} by ${embedder.createdById}`],
    ['updated', `${formatTime(embedder.updatedAt)} by ${embedder.updatedById}`],
  ],
  examples: {
    create: [
      [
        '$0 embedder create --display-name "TEI local" --provider-type TEI --endpoint-url http://tei:8080 ' +
          '--model-identifier BAAI/bge-small-en-v1.5 --dimensionality 384 --no-credentials',
        'a local model',
      ],
      [
        '$0 embedder create --display-name "Hosted large" --provider-type VENDORA --endpoint-url https://api.vendora.example/v1 ' +
          '--model-identifier embed-large --dimensionality 1536 --api-key-secret-file key.txt --label env=prod',
        'a hosted model with an API key',
      ],
    ],
    list: [
      ['$0 embedder list', 'your embedders'],
      [
        '$0 embedder list --provider-type TEI --label env=prod --all --output json',
        'filtered, every page, for a script',
      ],
    ],
    update: [
      [
        '$0 embedder update 5b0e… --max-sequence-length 1024 --merge-label tier=gold',
        'change a setting and add a label',
      ],
      ['$0 embedder update 5b0e… --api-key-secret-file new-key.txt', 'rotate the provider key'],
      ['$0 embedder update --modality TEXT --modality IMAGE 5b0e…', 'replace the modalities, one --modality each'],
    ],
  },
  rpc: {
    create: (connection, request) => connection.run((api) => api.embedders.create(complete(CREATE_DEFAULTS, request))),
    async list(connection, request) {
      const response = await connection.run((api) => api.embedders.list(complete(LIST_DEFAULTS, request)))
      return { items: response.embedders, nextToken: response.nextToken }
    },
    get: (connection, embedderId) => connection.run((api) => api.embedders.get({ embedderId })),
    update: (connection, request) => connection.run((api) => api.embedders.update(complete(UPDATE_DEFAULTS, request))),
    async remove(connection, embedderId) {
      await connection.run((api) => api.embedders.delete({ embedderId }))
    },
    probe: (connection, embedderId) => connection.run((api) => api.embedders.probe({ embedderId })),
  },
}

export function embedderCommand(yargs: Argv): Argv {
  return registryCommand(yargs, EMBEDDER_KIND, 'Register and manage embedders (models that turn content into vectors)')
}
