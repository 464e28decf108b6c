// memsvc llm create|list|get|update|delete|probe
import type { Argv } from 'yargs'
import {
  type CreateLlmRequest,
  type ListLlmsRequest,
  type Llm,
  Llm_ProviderType as ProviderType,
  type SamplingParams,
  type UpdateLlmRequest,
} from '../../generated/memsvc/v1/llms.js'
import { LLM_PROVIDER_TYPES } from '../../validation/registry-values.js'
import type { Args } from '../command.js'
import { yesNo } from '../output.js'
import {
  apiPathSetting,
  type Capability,
  COMMON_SETTINGS,
  capabilityOptions,
  capabilityValues,
  type Setting,
  settingOptions,
  settingValues,
} from '../registry-options.js'
import { type RegistryKind, registryCommand } from './registry-command.js'

const SETTINGS: Setting[] = [
  ...COMMON_SETTINGS,
  apiPathSetting('/v1/chat/completions'),
  {
    flag: 'client-config',
    field: 'clientConfig',
    kind: 'json',
    describe: 'Provider-specific client configuration: JSON object text, or @file.json ("" clears it on update)',
  },
  { flag: 'max-context-length', field: 'maxContextLength', kind: 'int', describe: 'Context window in tokens' },
]

const CAPABILITIES_GROUP = 'Capabilities (--X or --no-X; defaults: chat, sampling-parameters, system-messages on):'
const CAPABILITIES: Capability[] = [
  { flag: 'chat', field: 'supportsChat', describe: 'Supports chat' },
  { flag: 'completion', field: 'supportsCompletion', describe: 'Supports plain completion' },
  { flag: 'function-calling', field: 'supportsFunctionCalling', describe: 'Supports function calling' },
  { flag: 'sampling-parameters', field: 'supportsSamplingParameters', describe: 'Accepts sampling parameters' },
  { flag: 'streaming', field: 'supportsStreaming', describe: 'Supports streaming' },
  { flag: 'system-messages', field: 'supportsSystemMessages', describe: 'Accepts system messages' },
]

const SAMPLING_GROUP = 'Default sampling settings:'
const SAMPLING: Setting[] = [
  {
    flag: 'max-tokens',
    field: 'maxTokens',
    kind: 'int',
    describe: 'Maximum tokens to generate (positive)',
    group: SAMPLING_GROUP,
  },
  { flag: 'temperature', field: 'temperature', kind: 'number', describe: '0.0 to 2.0', group: SAMPLING_GROUP },
  { flag: 'top-p', field: 'topP', kind: 'number', describe: '0.0 to 1.0', group: SAMPLING_GROUP },
  { flag: 'top-k', field: 'topK', kind: 'int', describe: 'Positive integer', group: SAMPLING_GROUP },
  {
    flag: 'frequency-penalty',
    field: 'frequencyPenalty',
    kind: 'number',
    describe: '-2.0 to 2.0',
    group: SAMPLING_GROUP,
  },
  {
    flag: 'presence-penalty',
    field: 'presencePenalty',
    kind: 'number',
    describe: '-2.0 to 2.0',
    group: SAMPLING_GROUP,
  },
  {
    flag: 'stop-sequence',
    field: 'stopSequences',
    kind: 'list',
    describe: 'Stop sequence (repeatable; replaces the stored list)',
    group: SAMPLING_GROUP,
  },
]

const CREATE_EXTRA_OPTIONS = {
  ...capabilityOptions(CAPABILITIES, CAPABILITIES_GROUP),
  ...settingOptions(SAMPLING, 'create'),
}
const UPDATE_EXTRA_OPTIONS = {
  ...CREATE_EXTRA_OPTIONS,
  'clear-sampling': {
    type: 'boolean',
    describe: 'Drop every stored sampling setting before applying the ones given',
    group: SAMPLING_GROUP,
  },
} as const

/**
 * Capabilities and sampling settings are messages the server replaces as a whole on
 * update, so the given flags are laid over the stored values: `--no-streaming` then
 * changes streaming only.
 */
function extraValues(argv: Args, current: Llm | undefined): Record<string, unknown> {
  const capabilities = capabilityValues(argv, CAPABILITIES)
  const sampling = settingValues(argv, SAMPLING, 'create') as Partial<SamplingParams>
  const samplingGiven = Object.keys(sampling).length > 0 || argv['clear-sampling'] === true
  const baseSampling = argv['clear-sampling'] === true ? undefined : current?.defaultSamplingParams
  return {
    capabilities: capabilities && { ...current?.capabilities, ...capabilities },
    defaultSamplingParams: samplingGiven
      ? { ...baseSampling, ...sampling, stopSequences: sampling.stopSequences ?? baseSampling?.stopSequences ?? [] }
      : undefined,
  }
}

const needsCurrent = (argv: Args) =>
  capabilityValues(argv, CAPABILITIES) !== undefined ||
  SAMPLING.some((setting) => argv[setting.flag] !== undefined) ||
  argv['clear-sampling'] === true

const CREATE_DEFAULTS: CreateLlmRequest = {
  providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED,
  supportedModalities: [],
  labels: {},
}
const LIST_DEFAULTS: ListLlmsRequest = { providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED, labelFilter: {} }
const UPDATE_DEFAULTS: UpdateLlmRequest = { llmId: '', providerType: ProviderType.PROVIDER_TYPE_UNSPECIFIED }

function describeCapabilities(llm: Llm): string {
  return CAPABILITIES.map(
    (capability) =>
      `${capability.flag} ${yesNo(llm.capabilities?.[capability.field as keyof typeof llm.capabilities] as boolean | undefined)}`,
  ).join(', ')
}

function describeSampling(sampling: SamplingParams | undefined): string {
  if (!sampling) return ''
  const parts = SAMPLING.filter((setting) => setting.field !== 'stopSequences')
    .map((setting) => [setting.flag, sampling[setting.field as keyof SamplingParams]] as const)
    .filter(([, value]) => value !== undefined)
    .map(([flag, value]) => `${flag} ${String(value)}`)
  if (sampling.stopSequences.length > 0)
    parts.push(`stop ${sampling.stopSequences.map((stop) => JSON.stringify(stop)).join(' ')}`)
  return parts.join(', ')
}

export const LLM_KIND: RegistryKind<Llm> = {
  noun: 'llm',
  plural: 'llms',
  article: 'an LLM',
  idField: 'llmId',
  providerTypes: LLM_PROVIDER_TYPES,
  settings: SETTINGS,
  extraOptions: { create: CREATE_EXTRA_OPTIONS, update: UPDATE_EXTRA_OPTIONS },
  extraValues,
  needsCurrent,
  extraColumns: [],
  extraFields: (llm) => [
    ['modalities', llm.supportedModalities.join(', ')],
    ['max context length', llm.maxContextLength?.toString()],
    ['capabilities', describeCapabilities(llm)],
    ['sampling', describeSampling(llm.defaultSamplingParams)],
    ['client config', llm.clientConfig],
  ],
  examples: {
    create: [
      [
        '$0 llm create --display-name Llama --provider-type OLLAMA --endpoint-url http://ollama:11434 ' +
          '--model-identifier llama3.1 --streaming --no-credentials',
        'a local model',
      ],
      [
        '$0 llm create --display-name "Hosted chat" --provider-type VENDORA --endpoint-url https://api.vendora.example ' +
          '--model-identifier chat-large --function-calling --temperature 0.2 --stop-sequence "###" ' +
          '--api-key-secret-file key.txt',
        'hosted, with sampling defaults',
      ],
      [
        '$0 llm create --display-name "Cloud chat" --provider-type CUSTOM_VENDORA_COMPATIBLE --endpoint-url https://llm.example.com ' +
          '--model-identifier chat-large --adc-scope https://example.com/auth/cloud --adc-quota-project my-project',
        'cloud application default credentials',
      ],
    ],
    list: [
      ['$0 llm list', 'your LLMs'],
      ['$0 llm list --provider-type VLLM --all --output json', 'every vLLM model, for a script'],
    ],
    update: [
      [
        '$0 llm update 9a1c… --no-streaming --temperature 0.7',
        'change one capability and one sampling setting, keep the rest',
      ],
      ['$0 llm update 9a1c… --client-config @client.json --replace-label env=staging', 'new client config and labels'],
      [
        '$0 llm update --stop-sequence "###" --stop-sequence END 9a1c…',
        'replace the stop sequences, one --stop-sequence each',
      ],
    ],
  },
  service: (api) => api.llms,
  requestDefaults: { create: CREATE_DEFAULTS, list: LIST_DEFAULTS, update: UPDATE_DEFAULTS },
}

export function llmCommand(yargs: Argv): Argv {
  return registryCommand(yargs, LLM_KIND, 'Register and manage LLMs (chat and completion models)')
}
