// memsvc reranker create|list|get|update|delete|probe
import type { Argv } from 'yargs'
import {
  type CreateRerankerRequest,
  type ListRerankersRequest,
  Reranker_ProviderType as ProviderType,
  type Reranker,
  type UpdateRerankerRequest,
} from '../../generated/memsvc/v1/rerankers.js'
import { RERANKER_PROVIDER_TYPES } from '../../validation/registry-values.js'
import { apiPathSetting, COMMON_SETTINGS, type Setting } from '../registry-options.js'
import { type RegistryKind, registryCommand } from './registry-command.js'

// A reranker has only the settings every registration has, and its API path.
const SETTINGS: Setting[] = [
  ...COMMON_SETTINGS,
  apiPathSetting('by provider: VENDORD /v2/rerank, TEI /rerank, others /v1/rerank'),
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
  providerTypes: RERANKER_PROVIDER_TYPES,
  settings: SETTINGS,
  extraColumns: [{ header: 'PROBE', value: (reranker) => reranker.lastProbe?.status ?? '-', minWidth: 5 }],
  extraFields: (reranker) => [['modalities', reranker.supportedModalities.join(', ')]],
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
  service: (api) => api.rerankers,
  requestDefaults: { create: CREATE_DEFAULTS, list: LIST_DEFAULTS, update: UPDATE_DEFAULTS },
}

export function rerankerCommand(yargs: Argv): Argv {
  return registryCommand(
    yargs,
    RERANKER_KIND,
    'Register and manage rerankers (models that reorder retrieved results by relevance)',
  )
}
