// `memsvc memory create-batch` over a folder of documents, end to end: the built executable
// against an embedded server and a local embedding server. A PDF, DOCX, PPTX, XLSX, HTML, a PNG
// scan and a text file end COMPLETED with --wait; an unknown extension and an empty file are
// skipped with their reasons; a "PDF" that is text is refused by the server (415), and the batch
// goes on. Then the original bytes come back (memory content), a page image (memory page-image),
// and retrieval names the page a chunk came from.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser, cleanUp, createFakeEmbedderWithCli, EXIT, type RunningServer, startServer } from '../support/cli.js'
import { makeDocx, makeHtml, makePptx, makeTextPdf, makeXlsx, renderTextImage } from '../support/document-fixtures.js'
import { createSandbox, type Sandbox } from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'

/** OCR of the scan and extraction of six documents on a loaded two-core machine. */
const BATCH_TIMEOUT_MS = 240_000
const TEST_TIMEOUT_MS = BATCH_TIMEOUT_MS + 30_000
const SCAN_WIDTH = 1200
const SCAN_HEIGHT = 300
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47])
const MIB = 1024 * 1024

/** The folder create-batch reads: what each file is, and what becomes of it. */
const READABLE: Record<string, () => Uint8Array | string> = {
  'report.pdf': () =>
    makeTextPdf([
      ['Quarterly report', 'Revenue grew in the harbour district.'],
      ['Lighthouses guide the night ferries past the reef.'],
    ]),
  'notes.docx': () =>
    makeDocx({
      blocks: [
        { paragraph: 'Meeting notes', style: 'Heading1' },
        { paragraph: 'The committee approved the bridge repairs.' },
      ],
    }),
  'deck.pptx': () => makePptx({ slides: [{ title: 'Roadmap', body: ['Launch the ferry service in spring'] }] }),
  'figures.xlsx': () =>
    makeXlsx({
      sheets: [
        {
          name: 'Sales',
          rows: [
            ['Region', 'Total'],
            ['North', 1200],
          ],
        },
      ],
    }),
  'page.html': () => makeHtml('<h1>Harbour</h1><p>The lower quay floods at high tide.</p>'),
  'scan.png': () =>
    renderTextImage('Zebras graze near the volcano', { format: 'png', width: SCAN_WIDTH, height: SCAN_HEIGHT }),
  'readme.txt': () => 'Plain text travels as a text memory, as before.',
}
const SKIPPED: Record<string, { content: string; reason: RegExp }> = {
  'archive.xyz': { content: 'what is this', reason: /unknown extension \.xyz/ },
  'empty.txt': { content: '', reason: /empty file/ },
}
/** Named like a PDF, holding text: the server reads the bytes and refuses it (415). */
const MISNAMED = 'fake.pdf'

let sandbox: Sandbox
let server: RunningServer
let embedder: FakeEmbedder
let user: CliUser
let spaceId: string

interface BatchResult {
  file: string
  contentType?: string
  status: string
  memoryId?: string
  memory?: any
  reason?: string
}

beforeAll(async () => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  embedder = await startFakeEmbedder()
  server = await startServer(sandbox, { tls: false, dataDir: sandbox.makeDir('data') })
  await user.ok(['init', '--server', server.address])
  const embedderId = await createFakeEmbedderWithCli((args) => user.ok(args), embedder)
  spaceId =
    // Chunks no longer than a page of the fixtures, with no overlap: each PDF page is a chunk of its own.
    (
      await user.ok([
        'space',
        'create',
        '--name',
        'documents',
        '--embedder',
        embedderId,
        '--chunk-size',
        '80',
        '--chunk-overlap',
        '0',
        '-o',
        'json',
      ])
    ).json<{ spaceId: string }>().spaceId
}, 180_000)

afterAll(async () => {
  await embedder?.close()
  await cleanUp([server], sandbox)
}, 30_000)

function writeFolder(name: string, files: Record<string, Uint8Array | string>): string {
  const dir = sandbox.makeDir(name)
  for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), content)
  return dir
}

describe('memsvc memory create-batch with documents', { timeout: TEST_TIMEOUT_MS }, () => {
  let results: BatchResult[]
  const byName = (name: string) => results.find((result) => path.basename(result.file) === name)!

  it('stores every readable file until COMPLETED, skips the unknown and the empty one, reports the refused one; exit 1', async () => {
    const readable = Object.fromEntries(Object.entries(READABLE).map(([name, make]) => [name, make()]))
    const skipped = Object.fromEntries(Object.entries(SKIPPED).map(([name, { content }]) => [name, content]))
    writeFolder('docs', { ...readable, ...skipped, [MISNAMED]: 'plain text pretending to be a PDF' })
    const run = await user.run(
      [
        'memory',
        'create-batch',
        '--space',
        spaceId,
        'docs',
        '--wait',
        '--page-images',
        '--concurrency',
        '3',
        '-o',
        'json',
      ],
      {},
      BATCH_TIMEOUT_MS,
    )
    expect(run.code, run.stderr).toBe(EXIT.FAILED)
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(
      /^error: 3 of 10 files were skipped or failed \(2 skipped, 1 refused, 0 FAILED\)/,
    )
    const output = run.json<{ results: BatchResult[]; counts: Record<string, number> }>()
    results = output.results
    expect(results.map((result) => path.basename(result.file)).sort()).toEqual(
      [...Object.keys(READABLE), ...Object.keys(SKIPPED), MISNAMED].sort(),
    )
    expect(output.counts).toEqual({ files: 10, stored: 7, completed: 7, skipped: 2, refused: 1, failed: 0 })
    for (const name of Object.keys(READABLE)) {
      const result = byName(name)
      expect(result, name).toMatchObject({ status: 'COMPLETED', memoryId: expect.any(String) })
      expect(result.memory.chunkCount, name).toBeGreaterThan(0)
      expect(result.memory.metadata, name).toEqual({ file: path.join('docs', name) })
    }
    for (const [name, { reason }] of Object.entries(SKIPPED)) {
      expect(byName(name), name).toMatchObject({ status: 'SKIPPED' })
      expect(byName(name).reason, name).toMatch(reason)
      expect(byName(name).memoryId, name).toBeUndefined()
    }
    expect(byName(MISNAMED)).toMatchObject({ status: 'REFUSED', contentType: 'application/pdf' })
    expect(byName(MISNAMED).reason).toMatch(/UNSUPPORTED_MEDIA_TYPE: .*application\/pdf.*text\/plain/)

    const pdf = byName('report.pdf').memory
    expect(pdf).toMatchObject({ fileName: 'report.pdf', contentType: 'application/pdf' })
    expect(pdf.extraction.pages).toHaveLength(2)
    expect(pdf.extraction.pages.every((page: any) => page.method === 'TEXT' && page.imageStored)).toBe(true)
    expect(byName('scan.png').memory.extraction.pages[0].method).toBe('OCR')
    expect(byName('readme.txt').memory).toMatchObject({ contentType: 'text/plain' })
    expect(byName('readme.txt').memory.fileName).toBeUndefined()
  })

  it('in a table: progress per file on stderr (stages, then done or the reason), a summary row per file on stdout', async () => {
    writeFolder('more', {
      'brief.html': makeHtml('<h2>Tides</h2><p>Spring tides reach the upper quay.</p>'),
      'summary.md': '# Summary\n\nThe quay and the tides, in short.',
      'big.html': makeHtml(`<p>${'word '.repeat((2 * MIB) / 5)}</p>`),
    })
    fs.mkdirSync(path.join(sandbox.dir, 'more', 'sub'))
    fs.writeFileSync(path.join(sandbox.dir, 'more', 'sub', 'deeper.txt'), 'only with --recursive')
    const run = await user.run(
      ['memory', 'create-batch', '--space', spaceId, 'more', '--wait', '--max-upload-mb', '1'],
      {},
      BATCH_TIMEOUT_MS,
    )
    expect(run.code, run.stderr).toBe(EXIT.FAILED)
    // Not a terminal: one line per stage of each file.
    expect(run.stderr).toMatch(/^more\/brief\.html: uploading /m)
    expect(run.stderr).toMatch(/^more\/brief\.html: done \(\d+ chunks?\)$/m)
    expect(run.stderr).toMatch(/^more\/big\.html: skipped: too large: 2\.0 MB is over --max-upload-mb 1$/m)
    expect(run.stderr).toMatch(/1 subfolder\(s\) not read \(add --recursive\): more\/sub/)
    expect(run.stdout).toMatch(/^FILE\s+TYPE\s+MEMORY ID\s+STATUS\s+CHUNKS\s+PAGES\s+REASON/m)
    expect(run.stdout).toMatch(/more\/brief\.html\s+html\s+[0-9a-f-]{36}\s+COMPLETED\s+\d+/)
    expect(run.stdout).toMatch(/more\/summary\.md\s+markdown\s+[0-9a-f-]{36}\s+COMPLETED/)
    expect(run.stdout).toMatch(/more\/big\.html\s+html\s+SKIPPED\s+too large/)
    expect(run.stdout).not.toContain('deeper.txt')

    const recursive = await user.run(
      ['memory', 'create-batch', '--space', spaceId, path.join('more', 'sub'), 'more/summary.md', '-r', '-o', 'json'],
      {},
      BATCH_TIMEOUT_MS,
    )
    expect(recursive.code, recursive.stderr).toBe(EXIT.OK)
    expect(recursive.json<{ results: BatchResult[] }>().results.map((result) => result.file)).toEqual([
      'more/sub/deeper.txt',
      'more/summary.md',
    ])
  })

  it('memory create --file uploads one document; bad options are refused before anything is sent (exit 2)', async () => {
    const created = await user.ok([
      'memory',
      'create',
      '--space',
      spaceId,
      '--file',
      'docs/notes.docx',
      '--ocr',
      'off',
      '--wait',
      '-o',
      'json',
    ])
    expect(created.json()).toMatchObject({
      processingStatus: 'COMPLETED',
      fileName: 'notes.docx',
      documentOptions: { ocr: 'OFF' },
    })
    for (const [args, message] of [
      [['--ocr', 'sometimes'], /--ocr "sometimes": must be one of auto, on, off/],
      [['--concurrency', '0'], /--concurrency 0: must be from 1 to 16/],
      [['--page-image-dpi', '72'], /--page-image-dpi needs --page-images/],
      [['--metadata', '[1]'], /--metadata: must be a JSON object/],
    ] as const) {
      const refused = await user.run(['memory', 'create-batch', '--space', spaceId, 'docs', ...args])
      expect({ code: refused.code, stdout: refused.stdout }, args.join(' ')).toEqual({
        code: EXIT.BAD_INPUT,
        stdout: '',
      })
      expect(refused.stderr).toMatch(message)
    }
  })

  it('memory content gives back the uploaded bytes; memory page-image a PNG of a PDF page', async () => {
    const pdf = byName('report.pdf')
    const saved = await user.ok(['memory', 'content', pdf.memoryId!, '--file', 'copy.pdf', '-o', 'json'])
    expect(saved.json()).toMatchObject({ contentType: 'application/pdf', fileName: 'report.pdf' })
    expect(fs.readFileSync(path.join(sandbox.dir, 'copy.pdf'))).toEqual(
      fs.readFileSync(path.join(sandbox.dir, 'docs', 'report.pdf')),
    )
    const piped = await user.run(['memory', 'content', byName('readme.txt').memoryId!])
    expect(piped.stdout).toBe(READABLE['readme.txt']!())

    await user.ok(['memory', 'page-image', pdf.memoryId!, '2', '--file', 'page-2.png'])
    expect(fs.readFileSync(path.join(sandbox.dir, 'page-2.png')).subarray(0, PNG_MAGIC.length)).toEqual(PNG_MAGIC)
    const missing = await user.run(['memory', 'page-image', pdf.memoryId!, '9', '--file', 'page-9.png'])
    expect(missing.code).toBe(EXIT.FAILED)
    expect(fs.existsSync(path.join(sandbox.dir, 'page-9.png'))).toBe(false)
  })

  it('memory get shows the document and its pages; retrieve names the page of a PDF chunk', async () => {
    const shown = await user.ok(['memory', 'get', byName('report.pdf').memoryId!])
    expect(shown.stdout).toMatch(/file\s+report\.pdf/)
    expect(shown.stdout).toMatch(/pages\s+2 pages/)
    const retrieved = await user.ok(['memory', 'retrieve', '--space', spaceId, 'lighthouses night ferries reef'])
    expect(retrieved.stdout).toMatch(/\[report\.pdf p\.2\] Lighthouses guide the night ferries/)
    const events = (
      await user.ok(['memory', 'retrieve', '--space', spaceId, 'ferry service spring', '--size', '20', '-o', 'json'])
    ).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const slideChunk = events.find((event) => event.retrievedItem?.chunk.memoryId === byName('deck.pptx').memoryId)
    expect(slideChunk?.retrievedItem.chunk.source).toMatchObject({ slide: 1 })
  })
})
