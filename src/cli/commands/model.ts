// memsvc model add|list|add-ocr-language: local commands (no server, no API key) that manage
// the embedding models LOCAL embedders run (<data-dir>/models/NAME, and the models/ bundled
// next to the executable) and the OCR languages besides the bundled English
// (<data-dir>/ocr-languages). Like `system install` they work on this host's files; a running server finds
// a model added here by its name.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import type { Argv } from 'yargs'
import { DATA_DIR_MODELS, DATA_DIR_OCR_LANGUAGES, defaultLocalModelMemoryMb } from '../../config/server-config.js'
import { TesseractOcrEngine } from '../../documents/ocr.js'
import { installLanguageModel, languageOfModelFile } from '../../documents/ocr-language-files.js'
import { type LocalModelDescription, LocalModels } from '../../providers/local/local-models.js'
import {
  LocalModelError,
  type LocalModelFiles,
  MODEL_NAME_PATTERN,
  MODEL_NAME_RULE,
  readModelDirectory,
} from '../../providers/local/model-directory.js'
import {
  ARCHIVE_PATTERN,
  installModelFiles,
  modelBytes,
  unpackModelArchive,
} from '../../providers/local/model-store.js'
import { installDir } from '../../runtime/environment.js'
import { defaultDataDir } from '../../runtime/paths.js'
import { OCR_LANGUAGE_CODE } from '../../validation/limits.js'
import type { OutputFormat } from '../client-settings.js'
import { type Args, plainHandler, withClientOptions, withOptions } from '../command.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { note, print, yesNo } from '../output.js'
import { renderFields, renderTable } from '../table.js'

const BYTES_PER_MB = 1024 * 1024

const DATA_DIR_OPTION = {
  'data-dir': {
    type: 'string',
    describe: 'The server\'s data directory [env SERVICE_DATA_DIR] (default: "memsvc serve"\'s)',
    requiresArg: true,
  },
} as const

const ADD_OPTIONS = {
  ...DATA_DIR_OPTION,
  name: { type: 'string', describe: `Name under <data-dir>/models (${MODEL_NAME_RULE})`, requiresArg: true },
  replace: { type: 'boolean', describe: 'Replace a model of that name' },
} as const

const ADD_OCR_LANGUAGE_OPTIONS = {
  ...DATA_DIR_OPTION,
  language: {
    type: 'string',
    describe: 'Its tesseract language code (default: from the file name, deu.traineddata → deu)',
    requiresArg: true,
  },
  replace: { type: 'boolean', describe: 'Replace a model of that language' },
} as const

const LIST_OPTIONS = {
  ...DATA_DIR_OPTION,
  'models-dir': {
    type: 'string',
    describe: 'Bundled models [env SERVICE_MODELS_DIR] (default: models/ next to the executable)',
    requiresArg: true,
  },
} as const

const optionOrEnv = (argv: Args, flag: string, env: string): string | undefined => {
  const given = argv[flag] ?? process.env[env]
  return given === undefined || given === '' ? undefined : String(given)
}

const dataDirOf = (argv: Args) => path.resolve(optionOrEnv(argv, 'data-dir', 'SERVICE_DATA_DIR') ?? defaultDataDir())

const outputOf = (argv: Args): OutputFormat => (argv.output === 'json' ? 'json' : 'table')

/** Loads a model in one inference thread and embeds a probe sentence: what `add` checks and `list` shows. */
async function describeModels(models: LocalModelFiles[]): Promise<Array<LocalModelDescription | Error>> {
  const local = new LocalModels({
    modelDirectories: [],
    threads: 1,
    maxQueuedBatches: 1,
    memoryBoundBytes: defaultLocalModelMemoryMb() * BYTES_PER_MB,
  })
  try {
    const described: Array<LocalModelDescription | Error> = []
    for (const files of models) described.push(await local.describe(files).catch((error: Error) => error))
    return described
  } finally {
    await local.close()
  }
}

const BYTES_PER_KB = 1024
const formatSize = (bytes: number) =>
  bytes >= BYTES_PER_MB ? `${(bytes / BYTES_PER_MB).toFixed(1)} MB` : `${(bytes / BYTES_PER_KB).toFixed(1)} kB`

const add = plainHandler(async (argv: Args) => {
  const source = path.resolve(String(argv.source))
  const unpacked = ARCHIVE_PATTERN.test(source) ? unpackModelArchive(source) : undefined
  try {
    const name = argv.name === undefined ? (unpacked?.suggestedName ?? path.basename(source)) : String(argv.name)
    if (!MODEL_NAME_PATTERN.test(name))
      throw badInput(`--name ${name}: a model name is ${MODEL_NAME_RULE}; give one with --name`)
    const files = readModelDirectory(unpacked?.dir ?? source, name)
    const [described] = await describeModels([files])
    if (described instanceof Error) throw described
    const target = path.join(dataDirOf(argv), DATA_DIR_MODELS, name)
    installModelFiles(files, target, argv.replace === true)
    const bytes = modelBytes(files)
    print(outputOf(argv), {
      json: { ...described!, dir: target, bytes },
      text: () =>
        `Added model ${name}\n\n` +
        renderFields([
          ['directory', target],
          ['dimensions', String(described!.dimensions)],
          ['pooling', described!.pooling],
          ['normalised', yesNo(described!.normalize)],
          ['max tokens', String(described!.maxTokens)],
          ['size', formatSize(bytes)],
        ]),
    })
    note(
      `A running server finds it by name: memsvc embedder create --provider-type LOCAL --model-identifier ${name} ` +
        `--display-name "${name}"`,
    )
  } catch (error) {
    if (error instanceof LocalModelError) throw new CliError(error.message, EXIT_FAILED)
    throw error
  } finally {
    unpacked?.remove()
  }
})

interface ListedRow {
  name: string
  where: 'data-dir' | 'bundled'
  dir: string
  description?: LocalModelDescription
  bytes?: number
  problem?: string
}

/** A white square as PNG (8-bit grayscale): what the language check asks the model to read. */
function whitePng(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])))
    return Buffer.concat([length, Buffer.from(type, 'latin1'), data, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(side, 0)
  header.writeUInt32BE(side, 4)
  header.writeUInt8(8, 8) // bit depth; colour type 0 (grayscale) and the rest stay 0
  // Each row: filter byte 0, then `side` white pixels.
  const rows = Buffer.concat(Array.from({ length: side }, () => Buffer.from([0, ...Array(side).fill(0xff)])))
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** Large enough that tesseract reads it without complaint; the check only needs the model to load. */
const CHECK_IMAGE_SIDE = 64

/** Loads the model in an OCR thread (from a copy under its language's name) and reads a blank page with it. */
async function checkLanguageModel(source: string, language: string, suffix: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-ocr-language-'))
  const ocr = new TesseractOcrEngine({ concurrency: 1, languagesDir: dir })
  try {
    fs.symlinkSync(source, path.join(dir, `${language}${suffix}`))
    await ocr.recognize(whitePng(CHECK_IMAGE_SIDE), [language])
  } catch (error) {
    throw new CliError(`${source} is not a tesseract model OCR can load: ${(error as Error).message}`, EXIT_FAILED)
  } finally {
    await ocr.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const addOcrLanguage = plainHandler(async (argv: Args) => {
  const source = path.resolve(String(argv.source))
  if (!fs.existsSync(source)) throw badInput(`${source}: no such file`)
  const fileName = path.basename(source)
  const suffix = fileName.endsWith('.gz') ? '.traineddata.gz' : '.traineddata'
  const language = argv.language === undefined ? languageOfModelFile(fileName) : String(argv.language)
  if (!language || !OCR_LANGUAGE_CODE.test(language))
    throw badInput(`${fileName}: name the language with --language (a tesseract code such as deu or chi_sim)`)
  await checkLanguageModel(source, language, suffix)
  const languagesDir = path.join(dataDirOf(argv), DATA_DIR_OCR_LANGUAGES)
  let target: string
  try {
    target = installLanguageModel(source, languagesDir, language, argv.replace === true)
  } catch (error) {
    throw new CliError((error as Error).message, EXIT_FAILED)
  }
  print(outputOf(argv), {
    json: { language, file: target, bytes: fs.statSync(target).size },
    text: () =>
      `Added OCR language ${language}\n\n${renderFields([
        ['file', target],
        ['size', formatSize(fs.statSync(target).size)],
      ])}`,
  })
  note(`Documents name it with ocrLanguages (REST/gRPC) or --ocr-language ${language} (memsvc memory create-batch).`)
})

const list = plainHandler(async (argv: Args) => {
  const dataModels = path.join(dataDirOf(argv), DATA_DIR_MODELS)
  const bundled = path.resolve(optionOrEnv(argv, 'models-dir', 'SERVICE_MODELS_DIR') ?? path.join(installDir, 'models'))
  const listing = new LocalModels({
    modelDirectories: [dataModels, bundled],
    threads: 1,
    maxQueuedBatches: 1,
    memoryBoundBytes: 0,
  })
  const found = listing.list()
  const readable = found.flatMap((model) => (model.files ? [model.files] : []))
  const described = await describeModels(readable)
  const rows: ListedRow[] = found.map((model) => {
    const where = model.dir.startsWith(dataModels + path.sep) ? 'data-dir' : 'bundled'
    if (!model.files) return { name: model.name, where, dir: model.dir, problem: model.problem }
    const result = described[readable.indexOf(model.files)]!
    return result instanceof Error
      ? { name: model.name, where, dir: model.dir, problem: result.message }
      : { name: model.name, where, dir: model.dir, description: result, bytes: modelBytes(model.files) }
  })
  print(outputOf(argv), {
    json: { models: rows, directories: [dataModels, bundled] },
    text: () =>
      rows.length === 0
        ? `No models in ${dataModels} or ${bundled}; add one with "memsvc model add DIR"\n`
        : renderTable(rows, [
            { header: 'NAME', value: (row) => row.name, minWidth: 12 },
            { header: 'DIM', value: (row) => row.description?.dimensions.toString() ?? '', minWidth: 3 },
            { header: 'SIZE', value: (row) => (row.bytes === undefined ? '' : formatSize(row.bytes)), minWidth: 8 },
            { header: 'POOLING', value: (row) => row.description?.pooling ?? '', minWidth: 7 },
            { header: 'NORMALISED', value: (row) => yesNo(row.description?.normalize), minWidth: 3, dropOrder: 2 },
            {
              header: 'MAX TOKENS',
              value: (row) => row.description?.maxTokens.toString() ?? '',
              minWidth: 4,
              dropOrder: 1,
            },
            { header: 'WHERE', value: (row) => row.where, minWidth: 7, dropOrder: 3 },
            { header: 'PROBLEM', value: (row) => row.problem ?? '', minWidth: 10 },
          ]),
  })
  if (rows.some((row) => row.problem)) process.exitCode = EXIT_FAILED
})

export function modelCommand(yargs: Argv): Argv {
  return yargs.command(
    'model <command>',
    "Embedding models LOCAL embedders run, and OCR languages (local: this host's files, no server)",
    (group: Argv) =>
      withClientOptions(group, {
        connects: false,
        epilog: [
          'A model is a directory in the sentence-transformers ONNX layout: model.onnx (or onnx/model.onnx,',
          'model_quantized.onnx), tokenizer.json, and when present tokenizer_config.json, config.json,',
          '1_Pooling/config.json, modules.json, sentence_bert_config.json. Run these as the user the',
          'server runs as (or root), with the data directory the server uses.',
        ].join('\n'),
      })
        .command(
          'add <source>',
          'Check a model (load it, embed a sentence) and copy it into <data-dir>/models/NAME',
          (command: Argv) =>
            withOptions(command, ADD_OPTIONS)
              .positional('source', { type: 'string', describe: 'A model directory, or a .tar.gz of one' })
              .example('$0 model add ./all-MiniLM-L6-v2', 'name: the directory name')
              .example('$0 model add bge-small.tar.gz --name bge-small --data-dir /var/lib/memsvc', 'a system install'),
          add as (argv: unknown) => Promise<void>,
        )
        .command(
          'list',
          'Every model in <data-dir>/models and the bundled models/: dimension, size, pooling (each is loaded once)',
          (command: Argv) =>
            withOptions(command, LIST_OPTIONS).example('$0 model list', 'exit 1 if one cannot be used'),
          list as (argv: unknown) => Promise<void>,
        )
        .command(
          'add-ocr-language <source>',
          'Check a tesseract language model (load it, read a page) and copy it into <data-dir>/ocr-languages',
          (command: Argv) =>
            withOptions(command, ADD_OCR_LANGUAGE_OPTIONS)
              .positional('source', { type: 'string', describe: 'A <lang>.traineddata or <lang>.traineddata.gz file' })
              .example('$0 model add-ocr-language ./deu.traineddata', 'German, from tessdata_best or tessdata_fast')
              .example('$0 model add-ocr-language fra.traineddata.gz --data-dir /var/lib/memsvc', 'a system install'),
          addOcrLanguage as (argv: unknown) => Promise<void>,
        )
        .demandCommand(1, 'Name a model command: add, list, add-ocr-language.'),
  )
}
