import fs from 'node:fs'
import path from 'node:path'

/**
 * A local embedding model is a directory in the sentence-transformers ONNX export layout:
 * the graph (`model.onnx`, `onnx/model.onnx`, or a quantised `model_quantized.onnx`), the
 * tokenizer (`tokenizer.json`, `tokenizer_config.json`), and the settings that say how
 * token states become one vector (`1_Pooling/config.json`, `modules.json` for the
 * normalisation, `sentence_bert_config.json` / `config.json` for the token limit). This
 * module reads and checks those files without loading any weights, so that a bad
 * directory is refused with a message that names what is wrong before anything is loaded.
 */

/** Where the graph may be, in the order it is looked for: full precision first, then quantised. */
export const MODEL_FILE_CANDIDATES = [
  'model.onnx',
  'onnx/model.onnx',
  'model_quantized.onnx',
  'onnx/model_quantized.onnx',
] as const

/**
 * Settings read when present; every one is optional. `modules.json` names the pooling
 * module's own directory, which is `1_Pooling` in every export seen.
 */
const SETTINGS_FILES = [
  'tokenizer_config.json',
  'special_tokens_map.json',
  'config.json',
  'sentence_bert_config.json',
  'modules.json',
] as const
/** A model's licence and notices travel with it when it is copied (`memsvc model add`, a release). */
const LICENSE_FILES = ['LICENSE', 'LICENSE.txt', 'LICENSE.md', 'NOTICE', 'NOTICE.txt', 'README.md'] as const
const DEFAULT_POOLING_DIR = '1_Pooling'
const POOLING_CONFIG = 'config.json'

/** A model without any stated limit: BERT's position embeddings, the limit of every MiniLM/bge/e5/gte export. */
export const DEFAULT_MAX_TOKENS = 512
/** tokenizer_config.json says 1e30 when it knows no limit: a value above this means "none stated". */
const UNSTATED_LIMIT = 1_000_000

/** A name under `<data-dir>/models/`: a directory name that needs no quoting anywhere. */
export const MODEL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const MODEL_NAME_RULE = '1-64 letters, digits, ".", "_" or "-", starting with a letter or digit'

export type PoolingMode = 'mean' | 'cls' | 'max'

/** sentence-transformers' pooling flags memsvc implements, by the mode each selects. */
const POOLING_FLAGS: Record<string, PoolingMode> = {
  pooling_mode_mean_tokens: 'mean',
  pooling_mode_cls_token: 'cls',
  pooling_mode_max_tokens: 'max',
}
const UNSUPPORTED_POOLING_FLAGS = [
  'pooling_mode_mean_sqrt_len_tokens',
  'pooling_mode_weightedmean_tokens',
  'pooling_mode_lasttoken',
]

/** What the inference threads need to load and run a model: plain data, so it crosses to a worker as it is. */
export interface LocalModelSettings {
  name: string
  dir: string
  /** The graph, absolute. */
  modelFile: string
  tokenizerFile: string
  /** Absent in some exports; the tokenizer then takes its defaults. */
  tokenizerConfigFile?: string
  pooling: PoolingMode
  /** L2-normalise each vector (a Normalize module in modules.json). */
  normalize: boolean
  /** The most tokens one text may have, special tokens included; longer texts are cut to it. */
  maxTokens: number
  /**
   * Identifies this copy of the model: the graph's path, size and modification time. A
   * model replaced under the same name is loaded again rather than served from a thread's cache.
   */
  revision: string
}

export interface LocalModelFiles extends LocalModelSettings {
  /** The graph and its external data files (a graph over 2 GB keeps its weights apart), absolute. */
  weightFiles: string[]
  weightBytes: number
  /** What 1_Pooling/config.json says the vectors' dimension is, when it says. */
  declaredDimensions?: number
  /** Every file the model is made of, relative to dir: what `memsvc model add` copies. */
  files: string[]
}

/** A model directory that cannot be used, with a message that names the directory and the problem. */
export class LocalModelError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'LocalModelError'
  }
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

function readJsonFile(dir: string, relative: string): unknown {
  const file = path.join(dir, relative)
  if (!isFile(file)) return undefined
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown
  } catch (error) {
    throw new LocalModelError(`model directory ${dir}: ${relative} is not valid JSON (${(error as Error).message})`)
  }
}

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

const positiveInteger = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined

interface ModuleEntry {
  type?: unknown
  path?: unknown
}

function readModules(dir: string): ModuleEntry[] {
  const modules = readJsonFile(dir, 'modules.json')
  if (modules === undefined) return []
  if (!Array.isArray(modules)) throw new LocalModelError(`model directory ${dir}: modules.json is not a list`)
  return modules as ModuleEntry[]
}

const moduleOfType = (modules: ModuleEntry[], suffix: string) =>
  modules.find((module) => typeof module.type === 'string' && module.type.endsWith(suffix))

/** The pooling module's directory as modules.json names it, checked to stay inside the model directory. */
function poolingDir(dir: string, modules: ModuleEntry[]): string {
  const stated = moduleOfType(modules, '.Pooling')?.path
  if (typeof stated !== 'string' || stated === '') return DEFAULT_POOLING_DIR
  const normalised = path.normalize(stated)
  if (path.isAbsolute(normalised) || normalised.startsWith('..'))
    throw new LocalModelError(`model directory ${dir}: modules.json names a pooling directory outside it (${stated})`)
  return normalised
}

/** Mean pooling unless the pooling config picks another; a mode memsvc does not implement is refused by name. */
function readPooling(dir: string, relative: string): { pooling: PoolingMode; declaredDimensions?: number } {
  const config = asRecord(readJsonFile(dir, relative))
  if (!config) return { pooling: 'mean' }
  const unsupported = UNSUPPORTED_POOLING_FLAGS.find((flag) => config[flag] === true)
  if (unsupported)
    throw new LocalModelError(
      `model directory ${dir}: ${relative} sets ${unsupported}; memsvc pools by mean, CLS token or max`,
    )
  const chosen = Object.entries(POOLING_FLAGS).filter(([flag]) => config[flag] === true)
  if (chosen.length > 1)
    throw new LocalModelError(
      `model directory ${dir}: ${relative} sets ${chosen.map(([flag]) => flag).join(' and ')}; ` +
        'memsvc pools by one mode (concatenated modes are not supported)',
    )
  const mode = chosen[0]?.[1] ?? (typeof config.pooling_mode === 'string' ? config.pooling_mode : 'mean')
  if (mode !== 'mean' && mode !== 'cls' && mode !== 'max')
    throw new LocalModelError(
      `model directory ${dir}: ${relative} asks for pooling "${mode}"; memsvc pools by mean, cls or max`,
    )
  return { pooling: mode, declaredDimensions: positiveInteger(config.word_embedding_dimension) }
}

/**
 * The token limit: sentence-transformers' own (sentence_bert_config.json max_seq_length,
 * 256 for all-MiniLM-L6-v2 although BERT could take 512), else the tokenizer's stated
 * limit, never past the position embeddings (config.json), else DEFAULT_MAX_TOKENS.
 */
function readMaxTokens(dir: string): number {
  const sentenceConfig = asRecord(readJsonFile(dir, 'sentence_bert_config.json'))
  const tokenizerConfig = asRecord(readJsonFile(dir, 'tokenizer_config.json'))
  const modelConfig = asRecord(readJsonFile(dir, 'config.json'))
  const positions = positiveInteger(modelConfig?.max_position_embeddings)
  const stated = positiveInteger(tokenizerConfig?.model_max_length)
  const candidates = [
    positiveInteger(sentenceConfig?.max_seq_length),
    stated !== undefined && stated < UNSTATED_LIMIT ? stated : undefined,
    positions,
  ].filter((limit): limit is number => limit !== undefined)
  const chosen = candidates[0] ?? DEFAULT_MAX_TOKENS
  return positions === undefined ? chosen : Math.min(chosen, positions)
}

/** A graph over 2 GB keeps its tensors in files beside it: optimum writes `model.onnx_data`, others `model.onnx.data`. */
function externalDataFiles(modelFile: string): string[] {
  return [`${modelFile}_data`, `${modelFile}.data`].filter(isFile)
}

/** The directory's files, read and checked; the weights are not loaded. */
export function readModelDirectory(dir: string, name = path.basename(dir)): LocalModelFiles {
  const absolute = path.resolve(dir)
  let stat: fs.Stats
  try {
    stat = fs.statSync(absolute)
  } catch {
    throw new LocalModelError(`model directory ${absolute} does not exist`)
  }
  if (!stat.isDirectory()) throw new LocalModelError(`${absolute} is not a directory`)
  const modelRelative = MODEL_FILE_CANDIDATES.find((candidate) => isFile(path.join(absolute, candidate)))
  if (!modelRelative)
    throw new LocalModelError(
      `model directory ${absolute} holds no ONNX graph: looked for ${MODEL_FILE_CANDIDATES.join(', ')}`,
    )
  if (!isFile(path.join(absolute, 'tokenizer.json')))
    throw new LocalModelError(
      `model directory ${absolute} has no tokenizer.json (a sentence-transformers export carries it beside the model)`,
    )
  const modules = readModules(absolute)
  const poolingConfig = path.join(poolingDir(absolute, modules), POOLING_CONFIG)
  const { pooling, declaredDimensions } = readPooling(absolute, poolingConfig)
  const modelFile = path.join(absolute, modelRelative)
  const weightFiles = [modelFile, ...externalDataFiles(modelFile)]
  const weightStats = weightFiles.map((file) => fs.statSync(file))
  const relative = (file: string) => path.relative(absolute, file)
  const settings = [...SETTINGS_FILES, poolingConfig].filter((file) => isFile(path.join(absolute, file)))
  const licenses = LICENSE_FILES.filter((file) => isFile(path.join(absolute, file)))
  return {
    name,
    dir: absolute,
    modelFile,
    tokenizerFile: path.join(absolute, 'tokenizer.json'),
    tokenizerConfigFile: settings.includes('tokenizer_config.json')
      ? path.join(absolute, 'tokenizer_config.json')
      : undefined,
    pooling,
    normalize: moduleOfType(modules, '.Normalize') !== undefined,
    maxTokens: readMaxTokens(absolute),
    revision: `${modelFile}:${weightStats[0]!.size}:${weightStats[0]!.mtimeMs}`,
    weightFiles,
    weightBytes: weightStats.reduce((total, fileStat) => total + fileStat.size, 0),
    declaredDimensions,
    files: [...weightFiles.map(relative), 'tokenizer.json', ...settings, ...licenses],
  }
}
