// memsvc model add|list: local commands (no server, no API key) that manage the embedding
// models LOCAL embedders run: <data-dir>/models/NAME, and the models/ bundled next to the
// executable. Like `system install` they work on this host's files; a running server finds
// a model added here by its name.
import path from 'node:path'
import type { Argv } from 'yargs'
import { DATA_DIR_MODELS, defaultLocalModelMemoryMb } from '../../config/server-config.js'
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
    "Embedding models LOCAL embedders run (local: this host's files, no server)",
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
        .demandCommand(1, 'Name a model command: add, list.'),
  )
}
