// memsvc memory content ID and memory page-image ID N: a memory's original bytes (a document as
// uploaded, a text's UTF-8) and a stored PDF page image, into a file or onto stdout. A file is
// written under a temporary name and renamed once complete, so a cut download leaves nothing
// that looks whole. (--file, not --output: --output is every command's table|json.)
import fs from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { TEXT_CONTENT_TYPES } from '../../documents/document-types.js'
import type { MemoryContentChunk } from '../../generated/memsvc/v1/memories.js'
import { type Args, clientHandler, idPositional, type Subcommand } from '../command.js'
import { runAuthenticated, withConnection } from '../connection.js'
import { badInput, CliError, EXIT_FAILED } from '../exit-codes.js'
import { parseInteger } from '../option-parsing.js'
import { print } from '../output.js'

const FILE_OPTION = {
  file: {
    type: 'string',
    describe: 'Write the bytes to this file (default: stdout, when it is not a terminal)',
    requiresArg: true,
  },
} as const

/** Binary bytes are never dumped onto a terminal: they would garble it. */
function refuseTerminal(contentType: string, what: string): void {
  if (process.stdout.isTTY && !TEXT_CONTENT_TYPES.includes(contentType.split(';')[0]!.trim()))
    throw badInput(`${what} is ${contentType}: give --file NAME, or redirect stdout to a file`)
}

/** Writes `parts` to `file` through a temporary file renamed at the end; removed when anything fails. */
export async function writeAtomically(file: string, parts: AsyncIterable<Uint8Array>): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.part`)
  try {
    await pipeline(parts, fs.createWriteStream(temporary, { flags: 'wx' }))
    await fs.promises.rename(temporary, file)
  } catch (error) {
    await fs.promises.rm(temporary, { force: true })
    throw error
  }
}

interface Downloaded {
  contentType: string
  fileName?: string
  bytes: number
}

/** The bytes of the stream, checked against the size its first message announced (a cut stream is shorter). */
async function* downloadedBytes(
  chunks: AsyncIterable<MemoryContentChunk>,
  downloaded: Downloaded,
  onFirst: (first: MemoryContentChunk) => void,
): AsyncGenerator<Uint8Array> {
  let announced: number | undefined
  let first = true
  for await (const chunk of chunks) {
    if (first) {
      announced = chunk.contentBytes
      downloaded.contentType = chunk.contentType ?? downloaded.contentType
      downloaded.fileName = chunk.fileName
      onFirst(chunk)
      first = false
    }
    downloaded.bytes += chunk.data.length
    yield chunk.data
  }
  if (announced !== undefined && downloaded.bytes !== announced)
    throw new CliError(`the download broke off after ${downloaded.bytes} of ${announced} bytes`, EXIT_FAILED)
}

const content = clientHandler(async (argv: Args, settings) => {
  const memoryId = String(argv.id)
  const file = argv.file === undefined ? undefined : String(argv.file)
  const downloaded: Downloaded = { contentType: 'application/octet-stream', bytes: 0 }
  await withConnection(settings, { authenticated: true }, async (connection) => {
    const chunks = connection.stream((api) => api.memories.downloadContent({ memoryId }))
    const bytes = downloadedBytes(chunks, downloaded, (first) => {
      if (!file) refuseTerminal(first.contentType ?? downloaded.contentType, `memory ${memoryId}`)
    })
    if (file) await writeAtomically(file, bytes)
    else for await (const part of bytes) if (!process.stdout.write(part)) await onceDrained()
  })
  if (file)
    print(settings.output, {
      json: { memoryId, file, ...downloaded },
      text: () => `wrote ${downloaded.bytes} bytes (${downloaded.contentType}) to ${file}\n`,
    })
})

export const onceDrained = () => new Promise<void>((resolve) => process.stdout.once('drain', () => resolve()))

const pageImage = clientHandler(async (argv: Args, settings) => {
  const memoryId = String(argv.id)
  const pageNumber = parseInteger(argv.page, 'page', { min: 1 })
  const file = argv.file === undefined ? undefined : String(argv.file)
  const image = await runAuthenticated(settings, (api) => api.memories.getPageImage({ memoryId, pageNumber }))
  if (!file) {
    refuseTerminal(image.contentType, `page ${pageNumber}'s image`)
    process.stdout.write(image.data)
    return
  }
  await writeAtomically(
    file,
    (async function* () {
      yield image.data
    })(),
  )
  print(settings.output, {
    json: { memoryId, pageNumber, file, contentType: image.contentType, bytes: image.data.length },
    text: () => `wrote page ${pageNumber} (${image.contentType}, ${image.data.length} bytes) to ${file}\n`,
  })
})

export function contentSubcommands(): Subcommand[] {
  return [
    {
      command: 'content <id>',
      describe: "Download a memory's original bytes: a document as uploaded, or a text memory's text",
      builder: (command) =>
        idPositional(command, 'memory')
          .options(FILE_OPTION)
          .example('$0 memory content 0b6e… --file report.pdf', 'the uploaded PDF, byte for byte')
          .example('$0 memory content 0b6e… | sha256sum', 'the bytes on stdout, here to check them'),
      handler: content,
    },
    {
      command: 'page-image <id> <page>',
      describe: 'Download the PNG of a PDF page (stored when the document was uploaded with --page-images)',
      builder: (command) =>
        idPositional(command, 'memory')
          .positional('page', { type: 'string', describe: 'The page number, from 1' })
          .options(FILE_OPTION)
          .example('$0 memory page-image 0b6e… 12 --file page-12.png', 'page 12 as a PNG file'),
      handler: pageImage,
    },
  ]
}
