import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES } from '../support/databases.js'
import {
  makeDocx,
  makeHtml,
  makeImagePdf,
  makePptx,
  makeTextPdf,
  makeXlsx,
  renderTextImage,
} from '../support/document-fixtures.js'
import {
  downloadGrpc,
  downloadRest,
  pageImageGrpc,
  retrieveChunks,
  settledDocument,
  transportOf,
  UPLOAD_WAYS,
  type UploadWay,
  uploadDocument,
} from '../support/document-uploads.js'
import { type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { FAST_MEMORY_JOBS, startMemoryFixture } from '../support/memory-fixture.js'
import { useFixture } from './case-table.js'

/** Small chunks, so that each fixture page, slide, sheet or section is a chunk of its own. */
const SMALL_CHUNKS = { recursive: { chunkSize: 60, chunkOverlap: 0 } }
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation'
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
/** OCR of a rendered text image of this size takes about a second (one tesseract thread). */
const SCAN_WIDTH = 1200
const SCAN_HEIGHT = 300

describe.each(ENGINES)('documents, happy cases (%s)', (engine) => {
  const fixture = useFixture(() => startMemoryFixture(engine, FAST_MEMORY_JOBS))
  let chat: FakeRerankerLlm
  beforeAll(async () => {
    chat = await startFakeRerankerLlm()
  })
  afterAll(async () => chat?.close())

  async function newSpace(name: string, fields: Record<string, unknown> = {}): Promise<string> {
    const created = await fixture().call(
      'rest',
      'createSpace',
      { name: `${name}-${crypto.randomUUID()}`, ...fields },
      fixture().alice.apiKey,
    )
    expect(created.status, created.message).toBe('OK')
    return created.body.spaceId
  }

  /** Uploads to a new space of alice's and waits for the memory to be COMPLETED. */
  async function stored(way: UploadWay, fields: Record<string, unknown>, bytes: Uint8Array, spaceFields = {}) {
    const spaceId = await newSpace('docs', spaceFields)
    const answer = await uploadDocument(
      fixture(),
      fixture().alice,
      way,
      { spaceId, chunkingConfig: SMALL_CHUNKS, ...fields },
      bytes,
    )
    expect(answer.status, answer.message).toBe('OK')
    const memory = await settledDocument(fixture(), answer.body.memoryId)
    expect(memory.processingStatus, memory.processingError).toBe('COMPLETED')
    return { spaceId, memory }
  }

  it.each(UPLOAD_WAYS)(
    'stores a two-page PDF sent %s; its chunks cite their pages; its bytes come back',
    async (way) => {
      const pdf = makeTextPdf([
        ['The lighthouse keeper logs the weather every evening.'],
        ['Europa hides an ocean under its ice shell.'],
      ])
      const { spaceId, memory } = await stored(way, { contentType: 'application/pdf', fileName: 'moons.pdf' }, pdf)
      expect(memory.fileName).toBe('moons.pdf')
      expect(memory.contentBytes).toBe(pdf.length)
      expect(memory.extraction.pages.map((page: { method: string }) => page.method)).toEqual(['TEXT', 'TEXT'])
      const [best] = await retrieveChunks(fixture(), fixture().alice, transportOf(way), spaceId, 'ocean under the ice')
      expect(best?.chunkText).toContain('Europa')
      expect(best?.source?.page).toBe(2)
      const rest = await downloadRest(fixture(), fixture().alice, memory.memoryId)
      expect(rest.status).toBe(200)
      expect(rest.headers.get('content-type')).toBe('application/pdf')
      expect(rest.headers.get('content-disposition')).toBe(
        `attachment; filename="moons.pdf"; filename*=UTF-8''moons.pdf`,
      )
      expect(Buffer.from(rest.bytes).equals(Buffer.from(pdf))).toBe(true)
      const grpc = await downloadGrpc(fixture(), fixture().alice, memory.memoryId)
      expect(grpc).toMatchObject({ contentType: 'application/pdf', fileName: 'moons.pdf', contentBytes: pdf.length })
      expect(grpc.bytes.equals(Buffer.from(pdf))).toBe(true)
    },
  )

  it('takes the type from the bytes when the upload names none (application/octet-stream)', async () => {
    const pdf = makeTextPdf([['A document whose type only its bytes tell.']])
    const { memory } = await stored('rest-raw', {}, pdf)
    expect(memory.contentType).toBe('application/pdf')
  })

  it.each(['rest', 'grpc'] as const)('cites the heading path of a DOCX chunk (%s)', async (transport) => {
    const docx = makeDocx({
      blocks: [
        { paragraph: 'Field guide', style: 'Heading1' },
        { paragraph: 'Birds', style: 'Heading2' },
        { paragraph: 'The kingfisher dives for minnows in the creek.' },
        { list: ['binoculars', 'notebook'] },
        {
          table: [
            ['Bird', 'Season'],
            ['Swift', 'Summer'],
          ],
        },
      ],
    })
    const way = transport === 'rest' ? 'rest-multipart' : 'grpc-stream'
    const { spaceId } = await stored(way, { contentType: DOCX, fileName: 'guide.docx' }, docx)
    const [best] = await retrieveChunks(fixture(), fixture().alice, transport, spaceId, 'kingfisher minnows')
    expect(best?.source?.headingPath).toEqual(['Field guide', 'Birds'])
  })

  it.each(['rest', 'grpc'] as const)('cites the slide of a PPTX chunk, notes included (%s)', async (transport) => {
    const pptx = makePptx({
      slides: [
        { title: 'Quarterly plan', body: ['Hire two engineers'] },
        { title: 'Risks', body: ['Supplier delays'], notes: 'Mention the harbour strike in Rotterdam.' },
      ],
    })
    const way = transport === 'rest' ? 'rest-raw' : 'grpc-bytes'
    const { spaceId, memory } = await stored(way, { contentType: PPTX, fileName: 'plan.pptx' }, pptx)
    expect(memory.extraction.pages).toHaveLength(2)
    const [best] = await retrieveChunks(fixture(), fixture().alice, transport, spaceId, 'harbour strike Rotterdam')
    expect(best?.source?.slide).toBe(2)
  })

  it.each(['rest', 'grpc'] as const)(
    'cites the sheet of an XLSX row, read with its headers (%s)',
    async (transport) => {
      const xlsx = makeXlsx({
        sheets: [
          {
            name: 'Staff',
            rows: [
              ['Name', 'Team'],
              ['Ada', 'Engines'],
            ],
          },
          {
            name: 'Budget',
            rows: [
              ['Item', 'Cost'],
              ['Telescope', 1200],
            ],
          },
        ],
      })
      const way = transport === 'rest' ? 'rest-base64' : 'grpc-stream'
      const { spaceId } = await stored(way, { contentType: XLSX, fileName: 'office.xlsx' }, xlsx)
      const [best] = await retrieveChunks(fixture(), fixture().alice, transport, spaceId, 'telescope')
      expect(best?.source?.sheet).toBe('Budget')
      expect(best?.chunkText).toContain('Item: Telescope')
    },
  )

  it.each(['rest', 'grpc'] as const)('reads an HTML page with its headings and tables (%s)', async (transport) => {
    const html = makeHtml(
      '<h1>Harbour</h1><h2>Tides</h2><p>High tide floods the lower quay twice a day.</p>' +
        '<table><tr><th>Day</th><th>Height</th></tr><tr><td>Monday</td><td>4.2 m</td></tr></table>' +
        '<script>ignored()</script>',
    )
    const way = transport === 'rest' ? 'rest-raw' : 'grpc-bytes'
    const { spaceId } = await stored(way, { contentType: 'text/html' }, html)
    const [best] = await retrieveChunks(fixture(), fixture().alice, transport, spaceId, 'lower quay floods')
    expect(best?.source?.headingPath).toEqual(['Harbour', 'Tides'])
  })

  it.each(['rest', 'grpc'] as const)(
    'finds a scanned image by a word OCR read in it (%s)',
    async (transport) => {
      const png = renderTextImage('Zebras graze near the volcano', {
        format: 'png',
        width: SCAN_WIDTH,
        height: SCAN_HEIGHT,
      })
      const way = transport === 'rest' ? 'rest-raw' : 'grpc-stream'
      const { spaceId, memory } = await stored(way, { contentType: 'image/png', fileName: 'scan.png' }, png)
      const [page] = memory.extraction.pages
      expect(page.method).toBe('OCR')
      expect(page.ocrConfidence).toBeGreaterThan(60)
      const [best] = await retrieveChunks(fixture(), fixture().alice, transport, spaceId, 'volcano')
      expect(best?.chunkText.toLowerCase()).toContain('volcano')
    },
    120_000,
  )

  it('reads a scanned PDF through OCR and serves its rendered pages as PNG on both transports', async () => {
    const jpeg = renderTextImage('Penguins nest on the glacier', { format: 'jpeg', width: 1700, height: 2200 })
    const pdf = makeImagePdf([jpeg])
    const { spaceId, memory } = await stored(
      'rest-raw',
      { contentType: 'application/pdf', fileName: 'scan.pdf', extractPageImages: true, pageImageDpi: 72 },
      pdf,
    )
    expect(memory.extraction.pages[0]).toMatchObject({ pageNumber: 1, method: 'OCR', imageStored: true })
    const [best] = await retrieveChunks(fixture(), fixture().alice, 'rest', spaceId, 'glacier')
    expect(best?.source?.page).toBe(1)
    const image = await fetch(`${fixture().server.restUrl}/v1/memories/${memory.memoryId}/pages/1/image`, {
      headers: { authorization: `Bearer ${fixture().alice.apiKey}` },
    })
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/png')
    const png = Buffer.from(await image.arrayBuffer())
    // A US letter page at 72 DPI: 612 × 792 pixels (PNG's IHDR holds them at bytes 16 and 20).
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([612, 792])
    const viaGrpc = await pageImageGrpc(fixture(), fixture().alice, memory.memoryId, 1)
    expect(viaGrpc.status).toBe('OK')
    expect(Buffer.from(viaGrpc.body.data).equals(png)).toBe(true)
  }, 120_000)

  it('leaves a document OCR is off for with the pages that have text, and says so of the others', async () => {
    const jpeg = renderTextImage('Nothing to read without OCR', { format: 'jpeg', width: 850, height: 1100 })
    const pdf = makeImagePdf([jpeg])
    const spaceId = await newSpace('no-ocr', { defaultOcr: 'OFF' })
    const answer = await uploadDocument(fixture(), fixture().alice, 'rest-raw', { spaceId }, pdf)
    expect(answer.status, answer.message).toBe('OK')
    expect(answer.body.documentOptions.ocr).toBe('OFF')
    const memory = await settledDocument(fixture(), answer.body.memoryId)
    expect(memory.processingStatus).toBe('FAILED')
    expect(memory.processingError).toMatch(/no text/i)
  })

  it('counts extracted documents and their pages by method in /metrics', async () => {
    const pdf = makeTextPdf([['Counted page one.'], ['Counted page two.']])
    await stored('rest-raw', { contentType: 'application/pdf' }, pdf)
    const metrics = await fetch(`${fixture().server.restUrl}/metrics`, {
      headers: { 'x-service-metrics-key': fixture().server.config.metrics.secret },
    })
    const text = await metrics.text()
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0)
    expect(value(/memsvc_documents_extracted_total\{kind="pdf",outcome="completed"\} (\d+)/)).toBeGreaterThanOrEqual(1)
    expect(value(/memsvc_document_pages_extracted_total\{method="TEXT"\} (\d+)/)).toBeGreaterThanOrEqual(2)
    expect(text).toContain('memsvc_document_extraction_duration_seconds_bucket{le="0.1",kind="pdf"}')
  })

  it('gives the LLM each passage with its file and page, to cite', async () => {
    const pdf = makeTextPdf([['Chapter one is about sheep.'], ['The comet returns every seventy-six years.']])
    const { spaceId } = await stored('rest-raw', { contentType: 'application/pdf', fileName: 'sky.pdf' }, pdf)
    const llm = await fixture().call(
      'rest',
      'createLlm',
      { displayName: 'chat', providerType: 'VLLM', endpointUrl: chat.url, modelIdentifier: 'fake-chat' },
      fixture().alice.apiKey,
    )
    expect(llm.status, llm.message).toBe('OK')
    const answer = await fixture().call(
      'rest',
      'retrieveMemories',
      {
        message: 'when does the comet return',
        spaceKeys: [{ spaceId }],
        mode: 'KEYWORD',
        postProcessor: { llmId: llm.body.llmId },
      },
      fixture().alice.apiKey,
    )
    expect(answer.status, answer.message).toBe('OK')
    const prompt = JSON.stringify(chat.requests.at(-1)?.body)
    expect(prompt).toContain('[1] (sky.pdf, page 2) The comet returns')
  })
})
