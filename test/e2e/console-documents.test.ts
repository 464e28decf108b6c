// The console's document uploads in headless Chromium against the built executable (run
// "npm run build" first), with a local embedding server: a PDF chosen with the file picker
// (page images kept) and an HTML file dropped on the drop zone, each with its progress bar;
// the PDF followed until COMPLETED, its page table with the page images; the Retrieve page
// naming the page a chunk came from, with that page's image beside it; the space's OCR default.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  chromiumAvailable,
  launchBrowser,
  type Page,
  type PageProblems,
  type TestBrowser,
  watchPage,
} from '../support/browser.js'
import { makeHtml, makeTextPdf } from '../support/document-fixtures.js'
import {
  createSandbox,
  killAllProcesses,
  request,
  type Sandbox,
  type ServerProcess,
  servePlaintextEmbedded,
} from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'

const START_TIMEOUT_MS = 60_000
const TEST_TIMEOUT_MS = 90_000
const PROCESSED_TIMEOUT_MS = 60_000
const SCREENSHOT_DIR = process.env.MEMSVC_SCREENSHOT_DIR ?? '/tmp'
const PDF_PAGES = [
  ['Quarterly report', 'Revenue grew in the harbour district.'],
  ['Lighthouses guide the night ferries past the reef.'],
]

let sandbox: Sandbox
let server: ServerProcess
let embedder: FakeEmbedder
let browser: TestBrowser
let page: Page
let watched: PageProblems
let base: string
let rootKey: string
let spaceId: string

const labelled = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`)

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOT_DIR}/memsvc-console-${name}.png`, fullPage: true })
}

async function api<T = any>(method: string, pathname: string, body?: unknown): Promise<{ status: number; json: T }> {
  const answer = await request(`${base}${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${rootKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: answer.status, json: answer.body ? JSON.parse(answer.body) : undefined }
}

const memoryRows = () => page.getByRole('table', { name: 'Memories' }).locator('tbody tr')

/** Drops a file on the drop zone the way a browser does: a drop event carrying a DataTransfer with the file. */
async function dropFile(name: string, type: string, bytes: Uint8Array): Promise<void> {
  const transfer = await page.evaluateHandle(
    ({ name, type, base64 }) => {
      const data = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0))
      const dataTransfer = new DataTransfer()
      dataTransfer.items.add(new File([data], name, { type }))
      return dataTransfer
    },
    { name, type, base64: Buffer.from(bytes).toString('base64') },
  )
  await page.getByTestId('drop-zone').dispatchEvent('dragover', { dataTransfer: transfer })
  await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer: transfer })
}

describe.skipIf(!chromiumAvailable())(
  'web console: document uploads, pages and their images (headless Chromium, built executable)',
  { timeout: TEST_TIMEOUT_MS },
  () => {
    beforeAll(async () => {
      sandbox = createSandbox()
      embedder = await startFakeEmbedder()
      server = await servePlaintextEmbedded(sandbox, START_TIMEOUT_MS)
      base = server.restBase
      rootKey = JSON.parse((await request(`${base}/v1/system/init`, { method: 'POST' })).body).rootApiKey
      const registered = await api('POST', '/v1/embedders', {
        displayName: 'local words',
        providerType: 'TEI',
        endpointUrl: embedder.url,
        modelIdentifier: 'hashed-bow',
        dimensionality: embedder.dimensions,
      })
      expect(registered.status).toBe(201)
      // Chunks no longer than a page of the PDF, with no overlap: each page is a chunk of its own.
      const space = await api('POST', '/v1/spaces', {
        name: 'reports',
        spaceEmbedders: [{ embedderId: registered.json.embedderId }],
        defaultChunkingConfig: { recursive: { chunkSize: 80, chunkOverlap: 0 } },
      })
      expect(space.status).toBe(201)
      spaceId = space.json.spaceId
      browser = await launchBrowser()
      page = await browser.context.newPage()
      watched = await watchPage(page)
    }, START_TIMEOUT_MS + 30_000)

    afterAll(async () => {
      await browser?.close()
      await server?.stop()
      await embedder?.close()
      killAllProcesses()
      sandbox?.remove()
    })

    it('signs in and opens the space: the upload panel offers OCR and page-image options', async () => {
      await page.goto(`${base}/console/`)
      await page.getByLabel(labelled('API key')).fill(rootKey)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.getByTestId('version').waitFor()
      await page.goto(`${base}/console/#/spaces/${spaceId}`)
      await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('reports')
      const upload = page.getByRole('region', { name: 'Upload documents' })
      expect(await upload.getByLabel(labelled('OCR')).inputValue()).toBe('')
      expect(await upload.getByLabel(labelled('Page image DPI')).isDisabled()).toBe(true)
      expect(await page.getByRole('region', { name: 'Settings' }).textContent()).toContain('OCR default')
    })

    it('uploads a PDF chosen with the file picker, with page images: progress, then COMPLETED in the list', async () => {
      const upload = page.getByRole('region', { name: 'Upload documents' })
      await upload.getByLabel(labelled('OCR')).selectOption('AUTO')
      await upload.getByRole('checkbox', { name: /Keep an image of each PDF page/ }).check()
      await upload.getByLabel(labelled('Page image DPI')).fill('72')
      await page.getByTestId('upload-picker').setInputFiles({
        name: 'report.pdf',
        mimeType: 'application/pdf',
        buffer: Buffer.from(makeTextPdf(PDF_PAGES)),
      })
      const line = upload.locator('li.upload[data-file="report.pdf"]')
      await expect.poll(() => line.getByTestId('upload-state').textContent()).toBe('Stored')
      expect(await line.locator('progress').evaluate((bar: HTMLProgressElement) => bar.value === bar.max)).toBe(true)
      const row = memoryRows().filter({ hasText: 'report.pdf' })
      await expect
        .poll(() => row.getByTestId('memory-status').textContent(), { timeout: PROCESSED_TIMEOUT_MS, interval: 500 })
        .toBe('COMPLETED')
      const stored = (await api<{ memories: any[] }>('GET', `/v1/spaces/${spaceId}/memories`)).json.memories
      expect(stored).toHaveLength(1)
      expect(stored[0]).toMatchObject({
        fileName: 'report.pdf',
        contentType: 'application/pdf',
        documentOptions: { ocr: 'AUTO', extractPageImages: true, pageImageDpi: 72 },
      })
    })

    it('uploads an HTML file dropped on the drop zone; a file the server refuses shows its reason on its line', async () => {
      await dropFile(
        'harbour.html',
        'text/html',
        makeHtml('<h1>Harbour</h1><p>The lower quay floods at high tide.</p>'),
      )
      const upload = page.getByRole('region', { name: 'Upload documents' })
      await expect
        .poll(() => upload.locator('li.upload[data-file="harbour.html"]').getByTestId('upload-state').textContent())
        .toBe('Stored')
      await expect
        .poll(() => memoryRows().filter({ hasText: 'harbour.html' }).getByTestId('memory-status').textContent(), {
          timeout: PROCESSED_TIMEOUT_MS,
          interval: 500,
        })
        .toBe('COMPLETED')

      await dropFile('fake.pdf', 'application/pdf', new TextEncoder().encode('plain text, not a PDF'))
      const refused = upload.locator('li.upload[data-file="fake.pdf"]')
      await expect.poll(() => refused.getByTestId('upload-state').textContent()).toMatch(/^Failed: 415 /)
      expect(await refused.getByTestId('upload-state').textContent()).toContain('text/plain')
      await screenshot('document-uploads')
    })

    it('the PDF memory shows its file, a page table and, on request, a page image', async () => {
      await memoryRows().filter({ hasText: 'report.pdf' }).getByRole('link', { name: 'View', exact: true }).click()
      await expect.poll(() => page.getByTestId('memory-file').textContent()).toBe('report.pdf')
      const pages = page.getByRole('table', { name: 'Pages' }).locator('tbody tr')
      expect(await pages.count()).toBe(PDF_PAGES.length)
      expect(await pages.nth(1).locator('[data-col="method"]').textContent()).toBe('TEXT')
      expect(Number(await pages.nth(1).locator('[data-col="characters"]').textContent())).toBeGreaterThan(0)
      await pages.nth(1).getByRole('button', { name: 'Show page 2', exact: true }).click()
      const image = page.getByTestId('page-image-slot').getByTestId('page-image')
      await expect.poll(() => image.getAttribute('src')).toMatch(/^data:image\/png;base64,/)
      expect(await image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0)
      expect(await page.getByRole('button', { name: 'Download report.pdf', exact: true }).count()).toBe(1)
      await screenshot('document-memory')
    })

    it('retrieve shows the page a chunk came from, with that page image beside it', async () => {
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Retrieve', exact: true })
        .click()
      await page.getByLabel(labelled('Message')).fill('lighthouses guide the night ferries')
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      const first = page.getByRole('list', { name: 'Retrieved chunks' }).locator('li').first()
      await expect.poll(() => first.getByTestId('chunk-text').textContent()).toContain('Lighthouses')
      expect(await first.getByTestId('chunk-source').textContent()).toBe('report.pdf, page 2')
      await expect.poll(() => first.getByTestId('page-image').getAttribute('src')).toMatch(/^data:image\/png/)
      await screenshot('document-retrieve')
    })

    it('the OCR default is set when a space is edited; the page made no request outside the server and logged no problem', async () => {
      await page.goto(`${base}/console/#/spaces/${spaceId}`)
      const settings = page.getByRole('region', { name: 'Settings' })
      await settings.getByRole('button', { name: 'Edit', exact: true }).click()
      const form = page.getByRole('form', { name: 'Edit space' })
      await form.getByLabel(labelled('OCR default')).selectOption('ON')
      await form.getByRole('button', { name: 'Save changes', exact: true }).click()
      await expect.poll(async () => (await api('GET', `/v1/spaces/${spaceId}`)).json.defaultOcr).toBe('ON')
      expect(watched.problems.filter((problem) => !problem.includes('status of 415'))).toEqual([])
      expect(watched.requests.every((url) => url.startsWith(base) || url.startsWith('data:'))).toBe(true)
    })
  },
)
