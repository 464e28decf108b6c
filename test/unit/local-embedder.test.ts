import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalModels } from '../../src/providers/local/local-models.js'
import { LocalModelError, readModelDirectory } from '../../src/providers/local/model-directory.js'
import { installModelFiles } from '../../src/providers/local/model-store.js'
import { ModelTokenizer } from '../../src/providers/local/model-tokenizer.js'
import { normaliseRows, poolTokenStates } from '../../src/providers/local/pooling.js'
import { writeTinyEmbeddingModel } from '../support/tiny-embedding-model.js'

/**
 * The local embedder on models the test writes (test/support/tiny-embedding-model.ts): the
 * files it reads, the tokenizer's truncation, pooling and normalisation, and the inference
 * threads (batching, order, equal texts, errors). Semantic quality is not measured: no real
 * weights are reachable here.
 */

const dot = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index]!, 0)
const norm = (a: number[]) => Math.sqrt(dot(a, a))
const cosine = (a: number[], b: number[]) => dot(a, b) / (norm(a) * norm(b))
const MEGABYTE = 1024 * 1024

describe('pooling and normalisation', () => {
  // Two texts of three tokens, two dimensions; the second text's last token is padding.
  const states = {
    values: Float32Array.from([1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 99, 99]),
    texts: 2,
    tokens: 3,
    dimensions: 2,
    attentionMask: Uint8Array.from([1, 1, 1, 1, 1, 0]),
  }

  it('mean pooling averages the real tokens only', () => {
    const into = new Float32Array(4)
    poolTokenStates(states, 'mean', into)
    expect([...into]).toEqual([3, 4, 20, 30])
  })

  it('CLS pooling takes the first token; max pooling the largest real value', () => {
    const cls = new Float32Array(4)
    poolTokenStates(states, 'cls', cls)
    expect([...cls]).toEqual([1, 2, 10, 20])
    const max = new Float32Array(4)
    poolTokenStates(states, 'max', max)
    expect([...max]).toEqual([5, 6, 30, 40])
  })

  it('normalises each row to unit length and leaves a zero row alone', () => {
    const rows = Float32Array.from([3, 4, 0, 0])
    normaliseRows(rows, 2)
    for (const [index, expected] of [0.6, 0.8, 0, 0].entries()) expect(rows[index]).toBeCloseTo(expected, 6)
  })
})

describe('local models', () => {
  let root: string
  let models: LocalModels
  const dir = (name: string) => path.join(root, 'models', name)

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-local-models-'))
    writeTinyEmbeddingModel({ dir: dir('mean'), maxTokens: 16 })
    writeTinyEmbeddingModel({ dir: dir('mean-raw'), normalize: false })
    writeTinyEmbeddingModel({ dir: dir('cls'), pooling: 'cls', tokenTypeIds: false, modelFile: 'model.onnx' })
    writeTinyEmbeddingModel({ dir: dir('quantized'), modelFile: 'model_quantized.onnx', dimensions: 8 })
    writeTinyEmbeddingModel({ dir: dir('big'), dimensions: 256 })
    models = new LocalModels({
      modelDirectories: [path.join(root, 'models')],
      threads: 2,
      maxQueuedBatches: 4,
      memoryBoundBytes: MEGABYTE / 2,
    })
  })
  afterAll(async () => {
    await models?.close()
    fs.rmSync(root, { recursive: true, force: true })
  })

  it('reads the sentence-transformers layout: graph, tokenizer, pooling, normalisation, token limit', () => {
    expect(readModelDirectory(dir('mean'))).toMatchObject({
      name: 'mean',
      modelFile: path.join(dir('mean'), 'onnx', 'model.onnx'),
      pooling: 'mean',
      normalize: true,
      maxTokens: 16,
      declaredDimensions: 32,
    })
    expect(readModelDirectory(dir('cls'))).toMatchObject({
      pooling: 'cls',
      modelFile: path.join(dir('cls'), 'model.onnx'),
    })
    expect(readModelDirectory(dir('mean-raw')).normalize).toBe(false)
    expect(readModelDirectory(dir('quantized')).modelFile).toBe(path.join(dir('quantized'), 'model_quantized.onnx'))
    const files = readModelDirectory(dir('mean')).files.sort()
    expect(files).toEqual(
      [
        'onnx/model.onnx',
        'tokenizer.json',
        'tokenizer_config.json',
        'config.json',
        'sentence_bert_config.json',
        'modules.json',
        '1_Pooling/config.json',
      ].sort(),
    )
  })

  it('describes a model by loading it: the dimension is what it returns', async () => {
    expect(await models.describe('mean')).toMatchObject({
      dimensions: 32,
      pooling: 'mean',
      normalize: true,
      maxTokens: 16,
    })
    expect(await models.describe('quantized')).toMatchObject({ dimensions: 8 })
    expect(await models.describe('cls')).toMatchObject({ dimensions: 32, pooling: 'cls' })
  })

  it('equal texts give equal vectors, alone or in any batch, and texts sharing words are closer', async () => {
    const texts = ['the cat sleeps on the sofa', 'which tower is in paris', 'the cat sleeps on the sofa', 'a']
    const batch = await models.embed('mean', texts, 'bulk')
    expect(batch.vectors).toHaveLength(4)
    expect(batch.vectors[0]).toEqual(batch.vectors[2])
    const alone = await models.embed('mean', [texts[1]!], 'query')
    for (const [index, value] of alone.vectors[0]!.entries()) expect(value).toBeCloseTo(batch.vectors[1]![index]!, 5)
    const related = await models.embed(
      'mean',
      ['the cat sleeps on the sofa', 'the dog sleeps on the sofa', 'coffee and bread in the morning'],
      'bulk',
    )
    expect(cosine(related.vectors[0]!, related.vectors[1]!)).toBeGreaterThan(
      cosine(related.vectors[0]!, related.vectors[2]!),
    )
  })

  it('normalises when modules.json says so, and not otherwise', async () => {
    const [unit] = (await models.embed('mean', ['pruning roses in spring'], 'bulk')).vectors
    expect(norm(unit!)).toBeCloseTo(1, 5)
    const [raw] = (await models.embed('mean-raw', ['pruning roses in spring'], 'bulk')).vectors
    expect(Math.abs(norm(raw!) - 1)).toBeGreaterThan(0.01)
  })

  it('batches of many texts of mixed lengths come back in input order, the same as one by one', async () => {
    const texts = Array.from({ length: 70 }, (_, index) =>
      Array.from(
        { length: 1 + ((index * 7) % 40) },
        (__, word) => ['tea', 'moon', 'piano', 'river'][(index + word) % 4],
      ).join(' '),
    )
    const together = await models.embed('mean-raw', texts, 'bulk')
    const separately = await Promise.all(texts.slice(0, 6).map((text) => models.embed('mean-raw', [text], 'bulk')))
    for (const [index, single] of separately.entries())
      for (const [dimension, value] of single.vectors[0]!.entries())
        expect(value).toBeCloseTo(together.vectors[index]![dimension]!, 4)
  })

  it('cuts a text over the token limit, keeping [CLS] and [SEP], and says how many tokens it had', async () => {
    const long = Array.from({ length: 40 }, () => 'moon').join(' ')
    const embedded = await models.embed('mean', [long, 'moon'], 'bulk')
    expect(embedded.tokenCounts).toEqual([42, 3])
    expect(embedded.keptTokenCounts).toEqual([16, 3])
    // A registration may lower the limit further.
    const lower = await models.embed('mean', [long], 'bulk', 8)
    expect(lower.keptTokenCounts).toEqual([8])
    const tokenizer = ModelTokenizer.fromFiles(
      path.join(dir('mean'), 'tokenizer.json'),
      path.join(dir('mean'), 'tokenizer_config.json'),
      16,
    )
    const ids = tokenizer.tokenize(long).ids
    const vocabulary = JSON.parse(fs.readFileSync(path.join(dir('mean'), 'tokenizer.json'), 'utf8')).model.vocab
    expect(ids).toHaveLength(16)
    expect(ids[0]).toBe(vocabulary['[CLS]'])
    expect(ids.at(-1)).toBe(vocabulary['[SEP]'])
  })

  it('refuses a model over the memory bound before loading it, naming the bound', async () => {
    await expect(models.describe('big')).rejects.toThrow(/too big for the memory bound.*--local-model-memory-mb/)
  })

  it('names what is wrong with a bad model directory, and keeps embedding with the good ones', async () => {
    const bad = path.join(root, 'models')
    writeTinyEmbeddingModel({ dir: path.join(bad, 'garbage'), modelFile: 'model.onnx' })
    fs.writeFileSync(path.join(bad, 'garbage', 'model.onnx'), Buffer.from('not an onnx graph at all'))
    writeTinyEmbeddingModel({ dir: path.join(bad, 'no-tokenizer'), tokenizer: false })
    fs.mkdirSync(path.join(bad, 'empty'))
    await expect(models.describe('missing')).rejects.toThrow(/no local model "missing": looked in/)
    await expect(models.describe('garbage')).rejects.toThrow(/cannot load the model .*garbage.*model\.onnx/)
    await expect(models.describe('garbage')).rejects.toBeInstanceOf(LocalModelError)
    await expect(models.describe('no-tokenizer')).rejects.toThrow(/has no tokenizer\.json/)
    await expect(models.describe('empty')).rejects.toThrow(
      /holds no ONNX graph: looked for model\.onnx, onnx\/model\.onnx/,
    )
    expect((await models.embed('mean', ['still here'], 'query')).vectors[0]).toHaveLength(32)
    // Listing reads the files only; a graph that does not load shows when it is loaded (describe, model list).
    expect(
      models
        .list()
        .filter((model) => model.problem)
        .map((model) => model.name),
    ).toEqual(['empty', 'no-tokenizer'])
  })

  it('refuses batches beyond the queue bound rather than holding them without limit', async () => {
    const slow = Array.from({ length: 32 }, () => 'the moon and the planet jupiter'.repeat(3))
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => models.embed('mean', slow, 'bulk')))
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected')
    expect(refused.length).toBeGreaterThan(0)
    expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/busy \(4 batches waiting\)/)
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').length).toBeGreaterThanOrEqual(4)
  })

  it('copies only the files a model is made of, whole, into a models directory', () => {
    const source = path.join(root, 'export')
    writeTinyEmbeddingModel({ dir: source })
    fs.writeFileSync(path.join(source, 'onnx', 'model_O4.onnx'), 'another variant, not copied')
    fs.writeFileSync(path.join(source, 'README.md'), '# a model card')
    const target = path.join(root, 'installed', 'export')
    installModelFiles(readModelDirectory(source), target, false)
    expect(fs.existsSync(path.join(target, 'onnx', 'model_O4.onnx'))).toBe(false)
    expect(readModelDirectory(target).files.sort()).toEqual(readModelDirectory(source).files.sort())
    expect(() => installModelFiles(readModelDirectory(source), target, false)).toThrow(/already exists/)
  })
})
