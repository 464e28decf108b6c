// The console's memory pages in headless Chromium against the built executable (run
// "npm run build" first), with a local embedding server and a local chat server: a space
// created in the console, memories added and followed until COMPLETED, one deleted, its
// content viewed, then the Retrieve page showing streamed results and the LLM's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  chromiumAvailable,
  launchBrowser,
  type Page,
  type PageProblems,
  type TestBrowser,
  watchPage,
} from '../support/browser.js'
import {
  createSandbox,
  killAllProcesses,
  request,
  type Sandbox,
  type ServerProcess,
  servePlaintextEmbedded,
} from '../support/executable.js'
import { type FakeEmbedder, startFakeEmbedder } from '../support/fake-embedder.js'
import { expectedAnswer, type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'

const START_TIMEOUT_MS = 60_000
const TEST_TIMEOUT_MS = 60_000
const SCREENSHOT_DIR = process.env.MEMSVC_SCREENSHOT_DIR ?? '/tmp'
/** Chromium logs every non-2xx fetch as a console error; for the API these are answers the console handles. */
const API_ANSWER = /^Failed to load resource: the server responded with a status of (\d{3})/
const SMALL_DIMENSIONS = 8
const MEMORIES = [
  { text: 'Paris is the capital of France. It lies on the river Seine.', metadata: { city: 'Paris', year: 2024 } },
  { text: 'Tokyo is the capital of Japan and its largest city.', metadata: { city: 'Tokyo', year: 2023 } },
  { text: 'Nairobi is the capital of Kenya, close to the equator.', metadata: { city: 'Nairobi', year: 2025 } },
]

let sandbox: Sandbox
let server: ServerProcess
let embedder: FakeEmbedder
let chat: FakeRerankerLlm
let browser: TestBrowser
let page: Page
let watched: PageProblems
let base: string
let rootKey: string
let embedderId: string
let secondEmbedderId: string
let llmId: string
/** Set when the server has the rerankers API (/v1/rerankers). */
let rerankerId: string | undefined
/** API answers Chromium logged as errors, e.g. "404 /v1/rerankers"; checked against what the tests provoked. */
const apiErrorAnswers: string[] = []

const labelled = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`)

async function screenshot(name: string): Promise<string> {
  const file = `${SCREENSHOT_DIR}/memsvc-console-${name}.png`
  await page.screenshot({ path: file, fullPage: true })
  return file
}

async function goTo(section: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: section, exact: true }).click()
  await expect.poll(() => page.locator('h2.page-title').first().textContent()).toBe(section)
}

/** Every input, select and textarea on the page has an accessible label. */
async function unlabelledControls(): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('input, select, textarea'))
      .filter((element) => {
        const control = element as HTMLInputElement
        if (control.type === 'hidden' || control.closest('[aria-hidden="true"]')) return false
        return (
          (control.labels?.length ?? 0) === 0 &&
          !control.getAttribute('aria-label') &&
          !control.getAttribute('aria-labelledby')
        )
      })
      .map((element) => element.outerHTML.slice(0, 120)),
  )
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
const statusesShown = () => memoryRows().locator('[data-testid="memory-status"]').allTextContents()

describe.skipIf(!chromiumAvailable())(
  'web console: spaces, memories and retrieval (headless Chromium, built executable)',
  { timeout: TEST_TIMEOUT_MS },
  () => {
    beforeAll(async () => {
      sandbox = createSandbox()
      embedder = await startFakeEmbedder()
      chat = await startFakeRerankerLlm()
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
      embedderId = registered.json.embedderId
      const llm = await api('POST', '/v1/llms', {
        displayName: 'local chat',
        providerType: 'VLLM',
        endpointUrl: chat.url,
        modelIdentifier: 'fake-chat',
      })
      expect(llm.status).toBe(201)
      llmId = llm.json.llmId
      // A second embedder (the same server answering with fewer dimensions), added to the space later.
      const second = await api('POST', '/v1/embedders', {
        displayName: 'small words',
        providerType: 'TEI',
        endpointUrl: `${embedder.url}/dims/${SMALL_DIMENSIONS}`,
        modelIdentifier: 'hashed-bow-small',
        dimensionality: SMALL_DIMENSIONS,
      })
      expect(second.status).toBe(201)
      secondEmbedderId = second.json.embedderId
      const reranker = await api('POST', '/v1/rerankers', {
        displayName: 'local rerank',
        providerType: 'TEI',
        endpointUrl: chat.url,
        modelIdentifier: 'fake-rerank',
      })
      if (reranker.status === 201) rerankerId = reranker.json.rerankerId
      else expect(reranker.status).toBe(404)
      browser = await launchBrowser()
      page = await browser.context.newPage()
      watched = await watchPage(page, (message) => {
        const match = API_ANSWER.exec(message.text())
        const url = message.location().url
        if (!match || !url.startsWith(base) || !new URL(url).pathname.startsWith('/v1/')) return false
        apiErrorAnswers.push(`${match[1]} ${new URL(url).pathname}`)
        return true
      })
    }, START_TIMEOUT_MS + 30_000)

    afterAll(async () => {
      await browser?.close()
      await server?.stop()
      await embedder?.close()
      await chat?.close()
      killAllProcesses()
      sandbox?.remove()
    })

    it('signs in and the Spaces page says there are no spaces yet', async () => {
      await page.goto(`${base}/console/`)
      await page.getByLabel(labelled('API key')).fill(rootKey)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.getByTestId('version').waitFor()
      await goTo('Spaces')
      await expect.poll(() => page.locator('main').textContent()).toContain('No spaces yet')
    })

    it('creates a space with the registered embedder, a weight, recursive chunking and labels; a bad chunking is shown at its field', async () => {
      await page.getByRole('link', { name: 'Create a space', exact: true }).click()
      await page.getByLabel(labelled('Name')).fill('cities')
      expect(await unlabelledControls()).toEqual([])
      await page.getByLabel(labelled('Labels')).fill('team=console')
      const box = page.getByRole('checkbox', { name: /^local words/ })
      expect(await box.isChecked()).toBe(true)
      await page.getByLabel('Weight of local words').fill('2')
      await page.getByLabel(labelled('Chunk size')).fill('200')
      await page.getByLabel(labelled('Chunk overlap')).fill('200')
      await page.getByRole('button', { name: 'Create space', exact: true }).click()
      // Overlap must be smaller than the size: the server's 400 names the field, shown beside it.
      const overlapError = page.locator('[data-field="defaultChunkingConfig.recursive.chunkOverlap"] .field-error')
      await expect.poll(() => overlapError.textContent()).toMatch(/smaller than chunkSize/)
      expect(apiErrorAnswers).toContain('400 /v1/spaces')
      await screenshot('space-create')

      await page.getByLabel(labelled('Chunk overlap')).fill('20')
      await page.getByRole('button', { name: 'Create space', exact: true }).click()
      await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('cities')
      const spaces = (await api<{ spaces: any[] }>('GET', '/v1/spaces')).json.spaces
      expect(spaces).toHaveLength(1)
      expect(spaces[0]).toMatchObject({
        name: 'cities',
        labels: { team: 'console' },
        publicRead: false,
        textSearchLanguage: 'english',
        spaceEmbedders: [{ embedderId, defaultRetrievalWeight: 2, indexState: 'READY' }],
      })
      expect(spaces[0].defaultChunkingConfig.recursive).toMatchObject({ chunkSize: 200, chunkOverlap: 20 })
      const embedders = page.getByRole('table', { name: 'Embedders of this space' })
      expect(await embedders.locator(`tr[data-embedder-id="${embedderId}"]`).textContent()).toMatch(
        /local words.*2.*READY/,
      )
      await page.getByRole('table', { name: 'Memories' }).or(page.getByText('No memories in this space yet')).waitFor()
      expect(await unlabelledControls()).toEqual([])
    })

    it('edits the space: public read and labels are saved, an empty name is refused at its field', async () => {
      const settings = page.getByRole('region', { name: 'Settings' })
      await settings.getByRole('button', { name: 'Edit', exact: true }).click()
      const form = page.getByRole('form', { name: 'Edit space' })
      await form.getByLabel(labelled('Name')).fill('')
      await form.getByRole('button', { name: 'Save changes', exact: true }).click()
      await expect.poll(() => form.locator('[data-field="name"] .field-error').textContent()).toMatch(/\S/)
      await form.getByLabel(labelled('Name')).fill('cities')
      await form.getByRole('checkbox', { name: 'Public read', exact: true }).check()
      await form.getByLabel(labelled('Labels')).fill('team=console\nenv=e2e')
      expect(await unlabelledControls()).toEqual([])
      await form.getByRole('button', { name: 'Save changes', exact: true }).click()
      await expect
        .poll(() => page.getByRole('region', { name: 'Settings' }).textContent())
        .toContain('Public read: other users may retrieve from it')
      expect(await page.getByRole('region', { name: 'Settings' }).textContent()).toContain('env=e2e')
      const saved = (await api<{ spaces: any[] }>('GET', '/v1/spaces')).json.spaces[0]
      expect(saved).toMatchObject({ name: 'cities', publicRead: true, labels: { team: 'console', env: 'e2e' } })
    })

    it('adds memories with metadata, shows them PENDING or PROCESSING and refreshes until every one is COMPLETED', async () => {
      // Hold the embedder's answers so the page is seen with unfinished memories first.
      const release = embedder.hold()
      for (const memory of MEMORIES) {
        await page.getByLabel(labelled('Content')).fill(memory.text)
        await page.getByLabel(labelled('Metadata (JSON)')).fill(JSON.stringify(memory.metadata))
        await page.getByRole('button', { name: 'Add memory', exact: true }).click()
        await expect.poll(() => page.getByLabel(labelled('Content')).inputValue()).toBe('')
      }
      await expect.poll(() => memoryRows().count()).toBe(MEMORIES.length)
      const unfinished = await statusesShown()
      expect(unfinished.every((status) => status === 'PENDING' || status === 'PROCESSING')).toBe(true)
      await expect.poll(() => page.getByTestId('memory-summary').textContent()).toMatch(/refreshing/)
      await screenshot('memories-processing')
      release()
      await expect
        .poll(statusesShown, { timeout: 30_000, interval: 500 })
        .toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED'])
      await expect.poll(() => page.getByTestId('memory-summary').textContent()).toBe('3 shown: 3 completed')
      // Newest first, with the metadata and a chunk count from the server.
      expect(await memoryRows().first().textContent()).toContain('"city":"Nairobi"')
      for (const count of await memoryRows().locator('td[data-col="chunks"]').allTextContents())
        expect(Number(count)).toBeGreaterThan(0)
      // The status filter asks the server for one status.
      await page.getByLabel('Status', { exact: true }).selectOption('FAILED')
      await expect.poll(() => page.locator('main').textContent()).toContain('No failed memories in this space.')
      await page.getByLabel('Status', { exact: true }).selectOption('COMPLETED')
      await expect.poll(() => memoryRows().count()).toBe(MEMORIES.length)
      await page.getByLabel('Status', { exact: true }).selectOption('')
      await expect.poll(() => memoryRows().count()).toBe(MEMORIES.length)
    })

    it('adds a second embedder to the space: BACKFILLING with progress, then READY; and removes it again after confirming', async () => {
      const embedders = page.getByRole('table', { name: 'Embedders of this space' })
      const release = embedder.hold()
      try {
        await page.getByLabel(labelled('Embedder to add')).selectOption(secondEmbedderId)
        await page.getByRole('button', { name: 'Add embedder', exact: true }).click()
        const row = embedders.locator(`tr[data-embedder-id="${secondEmbedderId}"]`)
        await expect.poll(() => row.locator('td[data-col="index"]').textContent()).toMatch(/BACKFILLING/)
        expect(await row.locator('td[data-col="index"]').textContent()).toMatch(/\d+ \/ 3 memories/)
        await screenshot('space-backfilling')
      } finally {
        release()
      }
      const row = embedders.locator(`tr[data-embedder-id="${secondEmbedderId}"]`)
      await expect
        .poll(() => row.locator('td[data-col="index"]').textContent(), { timeout: 30_000, interval: 500 })
        .toMatch(/^READY\s*3 \/ 3 memories$/)
      // Every embedder is in the space: nothing more to add.
      expect(await page.getByRole('form', { name: 'Add an embedder' }).count()).toBe(0)

      await row.getByRole('button', { name: 'Remove', exact: true }).click()
      await page.getByRole('dialog').getByRole('button', { name: 'Remove embedder', exact: true }).click()
      await expect.poll(() => embedders.locator('tbody tr').count()).toBe(1)
      // The last one may go too (the space would then be searched by keywords only).
      expect(await embedders.locator('tbody tr').getByRole('button', { name: 'Remove', exact: true }).count()).toBe(1)
      expect(
        (
          await api('GET', `/v1/spaces/${(await api<{ spaces: any[] }>('GET', '/v1/spaces')).json.spaces[0].spaceId}`)
        ).json.spaceEmbedders.map((entry: any) => entry.embedderId),
      ).toEqual([embedderId])
    })

    it('a memory with metadata that is not a JSON object is refused before sending, at its field', async () => {
      await page.getByLabel(labelled('Content')).fill('Lima is the capital of Peru.')
      await page.getByLabel(labelled('Metadata (JSON)')).fill('["not", "an object"]')
      await page.getByRole('button', { name: 'Add memory', exact: true }).click()
      await expect.poll(() => page.locator('[data-field="metadata"] .field-error').textContent()).toMatch(/JSON object/)
      expect(await memoryRows().count()).toBe(MEMORIES.length)
      await page.getByLabel(labelled('Metadata (JSON)')).fill('')
      await page.getByLabel(labelled('Content')).fill('')
    })

    it('a memory the embedder fails on shows FAILED with the reason', async () => {
      embedder.plan({ kind: 'status', status: 400, message: 'input too long for this model' })
      await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
      await page.getByLabel(labelled('Content')).fill('This one fails at the embedder.')
      await page.getByRole('button', { name: 'Add memory', exact: true }).click()
      // Debug mode shows the create call as curl with its body, and the raw 201 answer.
      const panel = page.getByRole('complementary', { name: 'Debug' })
      // The log holds the memories created before debug mode was on too: wait for this one's entry on top.
      const created = panel.locator('details.debug-entry').filter({ hasText: 'Create memory' }).first()
      await expect
        .poll(() => created.getByTestId('debug-curl').textContent())
        .toContain('"originalContent":"This one fails at the embedder."')
      await expect.poll(() => created.getByTestId('debug-status').textContent()).toBe('201 Created')
      expect(await created.getByTestId('debug-curl').textContent()).toMatch(/^curl -sS -X POST '.*\/v1\/memories'/)
      expect(JSON.parse((await created.getByTestId('debug-response').textContent())!)).toMatchObject({
        processingStatus: 'PENDING',
      })
      const failed = memoryRows().first()
      await expect
        .poll(() => failed.locator('[data-testid="memory-status"]').textContent(), { timeout: 30_000, interval: 500 })
        .toBe('FAILED')
      expect(
        await panel.locator('details.debug-entry').filter({ hasText: 'Refresh memories' }).count(),
      ).toBeGreaterThan(0)
      await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
      expect(await failed.getByTestId('memory-error').textContent()).toMatch(/400|input too long/)
      await screenshot('memories')
      // It goes again: the retrieval below needs only the three cities.
      await failed.getByRole('button', { name: 'Delete', exact: true }).click()
      await page.getByRole('dialog').getByRole('button', { name: 'Delete memory', exact: true }).click()
      await expect.poll(() => memoryRows().count()).toBe(MEMORIES.length)
    })

    it('views a memory with its content, and deletes one from the list after confirming', async () => {
      const tokyoRow = memoryRows().filter({ hasText: 'Tokyo' })
      await tokyoRow.getByRole('link', { name: 'View', exact: true }).click()
      await expect.poll(() => page.getByTestId('memory-content').textContent()).toBe(MEMORIES[1]!.text)
      expect(await page.locator('main').textContent()).toContain('COMPLETED')
      await screenshot('memory')
      await page.locator('.breadcrumb').getByRole('link', { name: 'cities', exact: true }).click()
      await expect.poll(() => memoryRows().count()).toBe(MEMORIES.length)

      const parisRow = memoryRows().filter({ hasText: 'Paris' })
      const parisId = (await parisRow.getAttribute('data-memory-id'))!
      await parisRow.getByRole('button', { name: 'Delete', exact: true }).click()
      const dialog = page.getByRole('dialog')
      expect(await dialog.textContent()).toContain(parisId)
      await dialog.getByRole('button', { name: 'Cancel', exact: true }).click()
      expect(await memoryRows().count()).toBe(MEMORIES.length)
      await parisRow.getByRole('button', { name: 'Delete', exact: true }).click()
      await dialog.getByRole('button', { name: 'Delete memory', exact: true }).click()
      await expect.poll(() => memoryRows().count()).toBe(MEMORIES.length - 1)
      expect((await api('GET', `/v1/memories/${parisId}`)).status).toBe(404)
    })

    it('retrieve: results appear as they stream, with scores and their memory, before the LLM answer, which follows', async () => {
      await goTo('Retrieve')
      // No rerankers API on this server yet: the field is a free-text id and the page still works.
      await page.getByLabel(labelled('Message')).fill('Tokyo, the largest city of Japan')
      expect(await unlabelledControls()).toEqual([])
      expect(await page.getByRole('checkbox', { name: 'cities', exact: true }).isChecked()).toBe(true)
      await page.getByLabel(labelled('Number of results')).fill('2')
      await page.getByLabel(labelled('LLM')).selectOption(llmId)
      await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
      const release = chat.hold()
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      const results = page.getByRole('list', { name: 'Retrieved chunks' }).locator('li')
      await expect.poll(() => results.count()).toBe(2)
      // The items are shown while the LLM has not answered yet.
      expect(await page.getByTestId('llm-answer-slot').textContent()).toMatch(/Waiting for the LLM answer/)
      expect(await page.getByTestId('llm-answer').count()).toBe(0)
      const first = results.first()
      expect(await first.getByTestId('chunk-text').textContent()).toContain('Tokyo')
      expect(Number(await first.getByTestId('score').textContent())).toBeGreaterThan(0)
      expect(await first.getByTestId('memory-link').getAttribute('href')).toMatch(
        /^#\/spaces\/[0-9a-f-]{36}\/memories\/[0-9a-f-]{36}$/,
      )
      expect(await first.textContent()).toContain('"city":"Tokyo"')
      await screenshot('retrieve-streaming')
      release()
      const answer = await page.getByTestId('llm-answer').textContent({ timeout: 15_000 })
      expect(answer).toBe(expectedAnswer(chat.requests.at(-1)!.body.messages.at(-1).content))
      expect(answer).toContain('Tokyo')
      await expect.poll(() => page.getByTestId('retrieve-progress').textContent()).toBe('2 results and an answer.')

      // Debug mode: the curl command with -N, and the raw NDJSON lines in order.
      const entry = page.getByRole('complementary', { name: 'Debug' }).locator('details.debug-entry[open]').first()
      const curl = (await entry.getByTestId('debug-curl').textContent())!
      expect(curl).toMatch(/^curl -sS -N -X POST '.*\/v1\/memories:retrieve'/)
      expect(curl).toContain(`"llmId":"${llmId}"`)
      expect(curl).not.toContain(rootKey)
      const lines = (await entry.getByTestId('debug-response').textContent())!
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
      expect(lines.map((line) => Object.keys(line)[0])).toEqual([
        'resultSetBoundary',
        'memoryDefinition',
        'retrievedItem',
        'memoryDefinition',
        'retrievedItem',
        'resultSetBoundary',
        'abstractReply',
      ])
      expect(await entry.locator('summary').textContent()).toContain('200 OK')
      await screenshot('retrieve')
      await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
    })

    it('retrieve: Stop ends a stream that waits for the LLM; the results so far stay, marked incomplete', async () => {
      const release = chat.hold()
      try {
        await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
        await expect.poll(() => page.getByTestId('llm-answer-slot').textContent()).toMatch(/Waiting for the LLM answer/)
        await page.getByRole('button', { name: 'Stop', exact: true }).click()
        await expect
          .poll(() => page.locator('.retrieve-results').textContent())
          .toContain('Incomplete: stopped before the end')
        expect(await page.getByRole('list', { name: 'Retrieved chunks' }).locator('li').count()).toBe(2)
        expect(await page.getByRole('button', { name: 'Stop', exact: true }).isVisible()).toBe(false)
        expect(await page.getByRole('button', { name: 'Retrieve', exact: true }).isEnabled()).toBe(true)
      } finally {
        release()
      }
    })

    it('retrieve: a failing LLM shows the results, then the stream status as an error; a bad filter is shown at its field', async () => {
      chat.plan({ kind: 'status', status: 400, message: 'model refused' })
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      const status = page.getByTestId('stream-status')
      await expect.poll(() => status.count(), { timeout: 15_000 }).toBe(1)
      expect(await status.textContent()).toMatch(/UNAVAILABLE: the LLM did not answer/)
      expect(await page.getByRole('list', { name: 'Retrieved chunks' }).locator('li').count()).toBe(2)
      // The error comes after the results on the page.
      const order = await page.evaluate(() => {
        const list = document.querySelector('ol.results')!
        const error = document.querySelector('[data-testid="stream-status"]')!
        return list.compareDocumentPosition(error) & Node.DOCUMENT_POSITION_FOLLOWING
      })
      expect(order).toBeTruthy()
      await screenshot('retrieve-status')

      await page.getByLabel(labelled('LLM')).selectOption('')
      await page.getByLabel(labelled('Filter')).fill("val('$.city') = ")
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      await expect.poll(() => page.locator('[data-field="filter"] .field-error').textContent()).toMatch(/\S/)
      expect(apiErrorAnswers).toContain('400 /v1/memories:retrieve')

      await page.getByLabel(labelled('Filter')).fill("val('$.city') = 'Nairobi'")
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      await expect.poll(() => page.getByTestId('retrieve-progress').textContent()).toBe('1 result.')
      expect(await page.getByRole('list', { name: 'Retrieved chunks' }).locator('li').first().textContent()).toContain(
        'Nairobi',
      )
    })

    it('retrieve with a registered reranker chosen from the list: the reranked results stream in', async (test) => {
      if (!rerankerId) test.skip('this server has no rerankers API')
      await goTo('Spaces')
      await goTo('Retrieve')
      await page.getByLabel(labelled('Message')).fill('Kenya equator')
      await page.getByLabel(labelled('Reranker')).selectOption(rerankerId!)
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      await expect.poll(() => page.getByTestId('retrieve-progress').textContent()).toMatch(/^\d+ results?\.$/)
      const first = page.getByRole('list', { name: 'Retrieved chunks' }).locator('li').first()
      expect(await first.getByTestId('chunk-text').textContent()).toContain('Nairobi')
      expect(chat.requests.some((request) => request.path.endsWith('/rerank'))).toBe(true)
    })

    it('deletes the space after confirming; the page made no request outside the server and logged no problem', async () => {
      await goTo('Spaces')
      const row = page.getByRole('table', { name: 'Spaces' }).locator('tbody tr').filter({ hasText: 'cities' })
      expect(await row.textContent()).toMatch(/local words.*READY/)
      await screenshot('spaces')
      await row.getByRole('button', { name: 'Delete', exact: true }).click()
      await page.getByRole('dialog').getByRole('button', { name: 'Delete space', exact: true }).click()
      await expect.poll(() => page.locator('main').textContent()).toContain('No spaces yet')
      expect((await api<{ spaces: unknown[] }>('GET', '/v1/spaces')).json.spaces).toEqual([])
      expect(watched.problems).toEqual([])
      expect(watched.requests.every((url) => url.startsWith(base))).toBe(true)
      // A server without the rerankers API answers 404 to its list, which the Retrieve page tolerates.
      expect(new Set(apiErrorAnswers.filter((answer) => answer !== '404 /v1/rerankers'))).toEqual(
        new Set(['400 /v1/spaces', '400 /v1/memories:retrieve']),
      )
    })

    it('creates a keyword-only space in French with no embedder chosen; retrieval finds its memory and says no vector search ran', async () => {
      await goTo('Spaces')
      await page.getByRole('link', { name: 'Create a space', exact: true }).click()
      await page.getByLabel(labelled('Name')).fill('notes')
      const language = page.getByLabel(labelled('Keyword language'))
      expect(await language.inputValue()).toBe('english')
      await language.fill('french')
      await page.getByRole('checkbox', { name: /^local words/ }).uncheck()
      expect(await unlabelledControls()).toEqual([])
      await page.getByRole('button', { name: 'Create space', exact: true }).click()
      await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('notes')
      await expect.poll(() => page.locator('[data-embedders="none"]').textContent()).toContain('keywords only')
      expect(await page.getByRole('region', { name: 'Settings' }).textContent()).toContain('french')
      const space = (await api<{ spaces: any[] }>('GET', '/v1/spaces')).json.spaces.find(
        (item) => item.name === 'notes',
      )
      expect(space).toMatchObject({ spaceEmbedders: [], textSearchLanguage: 'french' })

      await page.getByLabel(labelled('Content')).fill('Les océans couvrent la plus grande partie de la planète.')
      await page.getByRole('button', { name: 'Add memory', exact: true }).click()
      await expect.poll(statusesShown, { timeout: 30_000, interval: 500 }).toEqual(['COMPLETED'])

      await goTo('Retrieve')
      await page.getByLabel(labelled('Message')).fill('océan')
      // The only space now ('cities' was deleted above), so it is chosen already.
      expect(await page.getByRole('checkbox', { name: 'notes', exact: true }).isChecked()).toBe(true)
      await page.getByRole('button', { name: 'Retrieve', exact: true }).click()
      const results = page.getByRole('list', { name: 'Retrieved chunks' }).locator('li')
      await expect.poll(() => results.count()).toBe(1)
      expect(await results.first().getByTestId('chunk-text').textContent()).toContain('océans')
      expect(await page.getByTestId('retrieve-notice').textContent()).toContain('no vector search ran')
      await screenshot('retrieve-keyword-only')
      expect((await api('DELETE', `/v1/spaces/${space.spaceId}`)).status).toBe(204)
    })

    it('pages: "Load more" brings the next spaces and the next memories', async () => {
      const PAGE = 50
      const spaceIds: string[] = []
      for (let index = 0; index <= PAGE; index++) {
        const created = await api('POST', '/v1/spaces', {
          name: `page-${String(index).padStart(2, '0')}`,
          spaceEmbedders: [{ embedderId }],
        })
        expect(created.status).toBe(201)
        spaceIds.push(created.json.spaceId)
      }
      const batch = await api('POST', '/v1/memories:batchCreate', {
        requests: Array.from({ length: PAGE + 5 }, (_, index) => ({
          spaceId: spaceIds[0],
          originalContent: `note number ${index}`,
        })),
      })
      expect(batch.status).toBe(200)

      await page.reload()
      await goTo('Spaces')
      const spaceRows = page.getByRole('table', { name: 'Spaces' }).locator('tbody tr')
      await expect.poll(() => spaceRows.count()).toBe(PAGE)
      await page.getByRole('button', { name: 'Load more', exact: true }).click()
      await expect.poll(() => spaceRows.count()).toBe(PAGE + 1)
      expect(await page.getByRole('button', { name: 'Load more', exact: true }).count()).toBe(0)

      await page.getByRole('link', { name: 'page-00', exact: true }).click()
      await expect.poll(() => memoryRows().count()).toBe(PAGE)
      await page.getByRole('button', { name: 'Load more', exact: true }).click()
      await expect.poll(() => memoryRows().count()).toBe(PAGE + 5)
      await expect.poll(statusesShown, { timeout: 30_000, interval: 500 }).toEqual(Array(PAGE + 5).fill('COMPLETED'))
      expect(watched.problems).toEqual([])
    })
  },
)
