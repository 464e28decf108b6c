import fs from 'node:fs'
import path from 'node:path'
import { PROBE_INPUT } from '../protocol.js'
import { InferenceFailure, InferencePool, type InferencePriority } from './inference-pool.js'
import {
  LocalModelError,
  type LocalModelFiles,
  type LocalModelSettings,
  MODEL_NAME_PATTERN,
  MODEL_NAME_RULE,
  type PoolingMode,
  readModelDirectory,
} from './model-directory.js'

/**
 * The local embedding models one process can run, by name, and the threads that run them.
 * A LOCAL embedder's modelIdentifier names a model directory in one of `directories` (the
 * data directory's models/ first, then the models/ bundled next to the executable). The
 * server makes one of these at start; `memsvc model add` makes one to check a model.
 */

export interface LocalModelsOptions {
  /** Searched in order for a model's name; the first holding it wins. */
  modelDirectories: string[]
  /** Inference threads (each loads every model it is asked for). */
  threads: number
  /** Batches that may wait for a thread, per priority. */
  maxQueuedBatches: number
  /**
   * The most the models' weights may take in memory, over all threads: a model whose weights
   * times the thread count exceed it is refused before it is loaded; models used less
   * recently are unloaded to make room for another.
   */
  memoryBoundBytes: number
}

export interface LocalModelDescription {
  name: string
  dir: string
  /** The length of the vectors the model returned for a probe sentence. */
  dimensions: number
  pooling: PoolingMode
  normalize: boolean
  maxTokens: number
  weightBytes: number
}

export interface LocalEmbeddings {
  vectors: number[][]
  /** Tokens of each whole text, special tokens included. */
  tokenCounts: number[]
  /** Tokens each vector was computed from: fewer than tokenCounts where the text was cut to the limit. */
  keptTokenCounts: number[]
}

/** One entry of `list()`: a directory under a models directory, readable or with the reason it is not. */
export interface ListedModel {
  name: string
  dir: string
  files?: LocalModelFiles
  problem?: string
}

/**
 * How long a model directory, once read, is taken as it was: a batch then costs no file
 * system reads, and a model replaced on disk is noticed within this.
 */
const MODEL_LOOKUP_TTL_MS = 5_000
const BYTES_PER_MB = 1024 * 1024

const megabytes = (bytes: number) => `${Math.ceil(bytes / BYTES_PER_MB)} MB`

/** The part of a model's files an inference thread needs: a small message, whatever else the files say. */
function settingsOf(files: LocalModelFiles): LocalModelSettings {
  const { name, dir, modelFile, tokenizerFile, tokenizerConfigFile, pooling, normalize, maxTokens, revision } = files
  return { name, dir, modelFile, tokenizerFile, tokenizerConfigFile, pooling, normalize, maxTokens, revision }
}

export class LocalModels {
  readonly #pool: InferencePool
  readonly #found = new Map<string, { files: LocalModelFiles; readAt: number }>()
  /** Models the threads hold, by revision, least recently used first (a Map keeps insertion order). */
  readonly #resident = new Map<string, number>()
  readonly #descriptions = new Map<string, Promise<LocalModelDescription>>()

  constructor(readonly options: LocalModelsOptions) {
    this.#pool = new InferencePool({ threads: options.threads, maxQueuedBatches: options.maxQueuedBatches })
  }

  /** The model's files, found by name; LocalModelError names where it looked. */
  find(name: string): LocalModelFiles {
    const cached = this.#found.get(name)
    if (cached && performance.now() - cached.readAt < MODEL_LOOKUP_TTL_MS) return cached.files
    if (!MODEL_NAME_PATTERN.test(name))
      throw new LocalModelError(`"${name}" is not a local model name (${MODEL_NAME_RULE})`)
    const dir = this.options.modelDirectories
      .map((parent) => path.join(parent, name))
      .find((candidate) => fs.existsSync(candidate))
    if (!dir)
      throw new LocalModelError(
        `no local model "${name}": looked in ${this.options.modelDirectories.join(' and ')}; add one with "memsvc model add DIR"`,
      )
    const files = readModelDirectory(dir, name)
    this.#found.set(name, { files, readAt: performance.now() })
    return files
  }

  /** Every model directory in the models directories, by name (the first directory holding a name wins). */
  list(): ListedModel[] {
    const listed = new Map<string, ListedModel>()
    for (const parent of this.options.modelDirectories) {
      let names: string[]
      try {
        names = fs.readdirSync(parent).filter((name) => fs.statSync(path.join(parent, name)).isDirectory())
      } catch {
        continue
      }
      for (const name of names.sort()) {
        if (listed.has(name) || !MODEL_NAME_PATTERN.test(name)) continue
        const dir = path.join(parent, name)
        try {
          listed.set(name, { name, dir, files: readModelDirectory(dir, name) })
        } catch (error) {
          listed.set(name, { name, dir, problem: (error as Error).message })
        }
      }
    }
    return [...listed.values()]
  }

  /**
   * Vectors for `texts` from the named model (or its files, for a model not yet under a
   * models directory). `maxTokens` lowers the model's own token limit.
   */
  async embed(
    model: string | LocalModelFiles,
    texts: string[],
    priority: InferencePriority,
    maxTokens?: number,
  ): Promise<LocalEmbeddings> {
    const files = typeof model === 'string' ? this.find(model) : model
    this.#admit(files)
    let encoded: Awaited<ReturnType<InferencePool['embed']>>
    try {
      encoded = await this.#pool.embed(settingsOf(files), texts, priority, maxTokens)
    } catch (error) {
      // The thread found the model unusable (it would not load, or its graph is not a sentence encoder).
      if (error instanceof InferenceFailure && error.modelProblem) throw new LocalModelError(error.message)
      throw error
    }
    const vectors: number[][] = []
    for (let start = 0; start < encoded.vectors.length; start += encoded.dimensions)
      vectors.push(Array.from(encoded.vectors.subarray(start, start + encoded.dimensions)))
    return {
      vectors,
      tokenCounts: Array.from(encoded.tokenCounts),
      keptTokenCounts: Array.from(encoded.keptTokenCounts),
    }
  }

  /**
   * Loads the model and embeds a probe sentence: what its vectors' dimension is, and that it
   * works at all. Kept per copy of the model (its revision), so registering it again costs nothing.
   */
  async describe(model: string | LocalModelFiles): Promise<LocalModelDescription> {
    const files = typeof model === 'string' ? this.find(model) : model
    let description = this.#descriptions.get(files.revision)
    if (!description) {
      description = this.#probe(files)
      this.#descriptions.set(files.revision, description)
      description.catch(() => this.#descriptions.delete(files.revision))
    }
    return description
  }

  async #probe(files: LocalModelFiles): Promise<LocalModelDescription> {
    const { vectors } = await this.embed(files, [PROBE_INPUT], 'query')
    const dimensions = vectors[0]?.length ?? 0
    if (dimensions === 0) throw new LocalModelError(`the model in ${files.dir} returned an empty vector`)
    if (files.declaredDimensions !== undefined && files.declaredDimensions !== dimensions)
      throw new LocalModelError(
        `the model in ${files.dir} returns ${dimensions} dimensions, but its pooling config says ` +
          `word_embedding_dimension ${files.declaredDimensions}: the graph and its settings are from different models`,
      )
    const { name, dir, pooling, normalize, maxTokens, weightBytes } = files
    return { name, dir, dimensions, pooling, normalize, maxTokens, weightBytes }
  }

  /**
   * Checks the memory bound before a model is loaded: every thread loads its own copy of the
   * weights. Models used less recently are unloaded to make room; a model that cannot fit
   * even alone is refused.
   */
  #admit(files: LocalModelFiles): void {
    const { threads, memoryBoundBytes } = this.options
    const perThread = memoryBoundBytes / threads
    if (files.weightBytes > perThread)
      throw new LocalModelError(
        `the model in ${files.dir} is too big for the memory bound: its weights are ${megabytes(files.weightBytes)}, ` +
          `and each of the ${threads} inference threads loads them (${megabytes(files.weightBytes * threads)}); ` +
          `the bound is ${megabytes(memoryBoundBytes)} (--local-model-memory-mb; fewer --local-embedder-threads also help)`,
      )
    const known = this.#resident.has(files.revision)
    this.#resident.delete(files.revision)
    if (!known) {
      let used = [...this.#resident.values()].reduce((total, bytes) => total + bytes, 0)
      for (const [revision, bytes] of this.#resident) {
        if (used + files.weightBytes <= perThread) break
        this.#resident.delete(revision)
        this.#pool.unload(revision)
        used -= bytes
      }
    }
    this.#resident.set(files.revision, files.weightBytes)
  }

  /** Batches waiting and running, and the threads started. */
  get load() {
    return this.#pool.load
  }

  /** Unloads every model and ends the threads. */
  close(): Promise<void> {
    return this.#pool.close()
  }
}
