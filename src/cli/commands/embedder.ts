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
import { DISTRIBUTION_TYPES, EMBEDDER_PROVIDER_TYPES } from '../../validation/registry-values.js'
import { apiPathSetting, COMMON_SETTINGS, type Setting } from '../registry-options.js'
import { type RegistryKind, registryCommand } from './registry-command.js'

const SETTINGS: Setting[] = [
  ...COMMON_SETTINGS,
  apiPathSetting('by provider: VENDORD /v2/embed, TEI /embed, others /embeddings; LOCAL has none'),
  {
    flag: 'dimensionality',
    field: 'dimensionality',
    kind: 'int',
    describe: "Output vector dimensions (required on create; LOCAL: the model's, when left out)",
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
  providerTypes: EMBEDDER_PROVIDER_TYPES,
  settings: SETTINGS,
  extraColumns: [{ header: 'DIM', value: (embedder) => String(embedder.dimensionality), minWidth: 3 }],
  extraFields: (embedder) => [
    ['dimensionality', String(embedder.dimensionality)],
    ['distribution', embedder.distributionType],
    ['max sequence length', embedder.maxSequenceLength?.toString()],
    ['modalities', embedder.supportedModalities.join(', ')],
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
      [
        '$0 embedder create --display-name "MiniLM in memsvc" --provider-type LOCAL --model-identifier all-MiniLM-L6-v2',
        'a model run inside memsvc (see "memsvc model list"): no endpoint, no credentials, dimensions from the model',
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
  service: (api) => api.embedders,
  requestDefaults: { create: CREATE_DEFAULTS, list: LIST_DEFAULTS, update: UPDATE_DEFAULTS },
}

export function embedderCommand(yargs: Argv): Argv {
  return registryCommand(yargs, EMBEDDER_KIND, 'Register and manage embedders (models that turn content into vectors)')
}
