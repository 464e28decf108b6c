// The web console in headless Chromium against the built executable (run "npm run build"
// first). One server and one browser for the whole file; the tests run in order, like a
// person's session: initialise, sign in, work with keys, debug mode, registries (embedders,
// LLMs, rerankers), users, and drain last (it takes the server out of service).
import fs from 'node:fs'
import path from 'node:path'
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
import { type FakeRerankerLlm, startFakeRerankerLlm } from '../support/fake-reranker-llm.js'
import { writeTinyEmbeddingModel } from '../support/tiny-embedding-model.js'

const START_TIMEOUT_MS = 60_000
const SCREENSHOT_DIR = process.env.MEMSVC_SCREENSHOT_DIR ?? '/tmp'
const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
/** Chromium logs every non-2xx fetch as a console error; for the API these are answers the console handles. */
const API_ANSWER = /^Failed to load resource: the server responded with a status of (\d{3})/

let sandbox: Sandbox
let server: ServerProcess
let browser: TestBrowser
let page: Page
let watched: PageProblems
let base: string
let rootKey: string
/** API answers Chromium logged as errors, e.g. "404 /v1/embedders"; checked against what the tests provoked. */
const apiErrorAnswers: string[] = []

/** A control's label, exactly, allowing the " *" that marks a required field. */
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

function api(method: string, pathname: string, key: string | undefined, body?: unknown) {
  return request(`${base}${pathname}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

describe.skipIf(!chromiumAvailable())('web console (headless Chromium, built executable)', () => {
  beforeAll(async () => {
    sandbox = createSandbox()
    server = await servePlaintextEmbedded(sandbox, START_TIMEOUT_MS)
    base = server.restBase
    browser = await launchBrowser()
    page = await browser.context.newPage()
    watched = await watchPage(page, (message) => {
      const match = API_ANSWER.exec(message.text())
      const url = message.location().url
      if (!match || !url.startsWith(base)) return false
      const pathname = new URL(url).pathname
      if (!pathname.startsWith('/v1/') && pathname !== '/readyz' && pathname !== '/startupz') return false
      apiErrorAnswers.push(`${match[1]} ${pathname}`)
      return true
    })
  }, START_TIMEOUT_MS + 30_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    killAllProcesses()
    sandbox?.remove()
  })

  it('serves /console/ from the executable with a strict CSP, content types and cache headers', async () => {
    const redirect = await request(`${base}/console`)
    expect(redirect.status).toBe(301)
    expect(redirect.headers.location).toBe('/console/')

    const index = await request(`${base}/console/`)
    expect(index.status).toBe(200)
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(index.headers['content-security-policy']).toBe(EXPECTED_CSP)
    expect(index.headers['cache-control']).toBe('no-cache')
    expect(index.headers['x-frame-options']).toBe('DENY')
    expect(index.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i)
    expect(index.body).not.toMatch(/(?:src|href)=["'](?:https?:)?\/\//i)

    const assets = [...index.body.matchAll(/(?:src|href)="(assets\/console\.[0-9a-f]{16}\.(js|css))"/g)]
    expect(assets.map((match) => match[2]).sort()).toEqual(['css', 'js'])
    for (const [, file, extension] of assets) {
      const asset = await request(`${base}/console/${file}`)
      expect(asset.status).toBe(200)
      expect(asset.headers['content-type']).toBe(
        extension === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      )
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(asset.headers['content-security-policy']).toBe(EXPECTED_CSP)
    }
    expect((await request(`${base}/console/assets/console.0000000000000000.js`)).status).toBe(404)
  })

  it('a fresh server offers initialisation and shows the root key once, with a copy button and a warning', async () => {
    await page.goto(`${base}/console`)
    expect(page.url()).toBe(`${base}/console/`)
    await page.getByRole('button', { name: 'Initialise this server', exact: true }).click()
    const keyField = page.getByLabel(labelled('Root API key'))
    await expect.poll(() => keyField.inputValue()).toMatch(/^msk_[0-9A-Za-z]{40,}$/)
    rootKey = await keyField.inputValue()
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/shown only this once/)
    await page.getByRole('button', { name: 'Copy key', exact: true }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rootKey)
    await screenshot('root-key')

    // Reloading does not bring it back: the server is initialised and asks for a key.
    await page.reload()
    await page.getByLabel(labelled('API key')).waitFor()
    expect(await page.content()).not.toContain(rootKey)
    expect(await page.getByRole('button', { name: 'Initialise this server', exact: true }).count()).toBe(0)
  })

  it('signs in with an API key kept in sessionStorage only (never localStorage or the URL)', async () => {
    await page.getByLabel(labelled('API key')).fill('msk_not-a-real-key')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    const fieldError = page.locator('[data-field="apiKey"] .field-error')
    await expect.poll(() => fieldError.textContent()).toMatch(/not valid/)
    expect(await page.getByLabel(labelled('API key')).getAttribute('aria-invalid')).toBe('true')

    await page.getByLabel(labelled('API key')).fill(rootKey)
    await page.getByLabel(labelled('API key')).press('Enter')
    await page.getByTestId('version').waitFor()
    expect(await page.evaluate(() => Object.values(sessionStorage))).toContain(rootKey)
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(rootKey)
    expect(page.url()).not.toContain(rootKey)
    expect(watched.requests.some((url) => url.includes(rootKey))).toBe(false)
  })

  it('overview: version, lifecycle state, readiness and counts of keys, embedders, LLMs and rerankers', async () => {
    const info = JSON.parse((await api('GET', '/v1/system/info', undefined)).body) as { version: string }
    await expect.poll(() => page.getByTestId('version').textContent()).toBe(info.version)
    expect(await page.getByTestId('lifecycle-state').textContent()).toBe('READY')
    // Readiness also follows the server's periodic database check, which can blip on a loaded machine.
    await expect
      .poll(
        async () => {
          const readiness = await page.getByTestId('readiness').textContent()
          if (readiness !== 'Ready') {
            await page.getByRole('button', { name: 'Refresh', exact: true }).click()
            await page.getByTestId('readiness').waitFor()
          }
          return readiness
        },
        { timeout: 15_000, interval: 1_000 },
      )
      .toBe('Ready')
    const counts = page.getByRole('group', { name: 'Counts' })
    expect(await counts.getByRole('article', { name: 'API keys' }).locator('.count').textContent()).toBe('1')
    for (const name of ['Embedders', 'LLMs', 'Rerankers']) {
      const text = await counts.getByRole('article', { name }).locator('.count').textContent()
      // A number once the registry APIs are served, otherwise said plainly.
      expect(text).toMatch(/^(\d+|Not available on this server)$/)
    }
    await screenshot('overview')
  })

  it('API keys: create one and see it once, deactivate it (it stops working), edit its labels, delete it with confirmation', async () => {
    await goTo('API keys')
    await page.getByLabel(labelled('Labels')).fill('env=e2e\nteam=console')
    const expiry = new Date(Date.now() + 7 * 24 * 3600 * 1000)
    const local = new Date(expiry.getTime() - expiry.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
    await page.getByLabel(labelled('Expires at (optional)')).fill(local)
    await page.getByRole('button', { name: 'Create API key', exact: true }).click()
    const newKey = page.getByTestId('new-key')
    const raw = await newKey.getByLabel(labelled('API key')).inputValue()
    expect(raw).toMatch(/^msk_/)
    expect(await newKey.textContent()).toMatch(/shown only once/)
    expect((await api('GET', '/v1/users/me', raw)).status).toBe(200)

    const row = page.locator(`tr[data-key-prefix="${raw.slice(0, 12)}"]`)
    await expect.poll(() => row.locator('td[data-col="status"]').textContent()).toBe('Active')
    expect(await row.textContent()).toContain('env=e2e')
    await screenshot('api-keys')

    await newKey.getByRole('button', { name: 'Done: hide the key', exact: true }).click()
    expect(await page.content()).not.toContain(raw)

    await row.getByRole('button', { name: 'Deactivate', exact: true }).click()
    await expect.poll(() => row.locator('td[data-col="status"]').textContent()).toBe('Inactive')
    expect((await api('GET', '/v1/users/me', raw)).status).toBe(401)
    await row.getByRole('button', { name: 'Activate', exact: true }).click()
    await expect.poll(() => row.locator('td[data-col="status"]').textContent()).toBe('Active')
    await row.getByRole('button', { name: 'Deactivate', exact: true }).click()
    await expect.poll(() => row.locator('td[data-col="status"]').textContent()).toBe('Inactive')

    await row.getByRole('button', { name: 'Edit labels', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: /Labels of/ })
    await dialog.getByLabel(labelled('Labels')).fill('env=e2e\nBad Key=1')
    await dialog.getByRole('button', { name: 'Save labels', exact: true }).click()
    await expect.poll(() => dialog.locator('[data-field="labels"] .field-error').textContent()).toMatch(/label keys/)
    await dialog.getByLabel(labelled('Labels')).fill('env=e2e\nowner=ops')
    await dialog.getByRole('button', { name: 'Save labels', exact: true }).click()
    await expect.poll(() => row.textContent()).toContain('owner=ops')
    expect(await row.textContent()).not.toContain('team=console')

    await row.getByRole('button', { name: 'Delete', exact: true }).click()
    const confirm = page.getByRole('dialog', { name: /Delete API key/ })
    // Escape cancels: nothing is deleted.
    await page.keyboard.press('Escape')
    expect(await confirm.count()).toBe(0)
    expect(await row.count()).toBe(1)
    await row.getByRole('button', { name: 'Delete', exact: true }).click()
    await page
      .getByRole('dialog', { name: /Delete API key/ })
      .getByRole('button', { name: 'Delete key', exact: true })
      .click()
    await expect.poll(() => row.count()).toBe(0)
    const listed = JSON.parse((await api('GET', '/v1/apikeys', rootKey)).body) as { keys: Array<{ keyPrefix: string }> }
    expect(listed.keys.map((key) => key.keyPrefix)).not.toContain(raw.slice(0, 12))
  })

  it('debug mode shows each action as curl (key masked unless revealed) and its raw JSON response with the HTTP status', async () => {
    await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
    expect(await page.getByRole('button', { name: 'Debug mode', exact: true }).getAttribute('aria-pressed')).toBe(
      'true',
    )
    const panel = page.getByRole('complementary', { name: 'Debug' })
    await page.getByLabel(labelled('Labels')).fill('purpose=debug-demo')
    await page.getByRole('button', { name: 'Create API key', exact: true }).click()
    const raw = await page.getByTestId('new-key').getByLabel(labelled('API key')).inputValue()

    const entry = panel.locator('details.debug-entry[open]').first()
    await expect.poll(() => entry.locator('summary').textContent()).toContain('Create API key')
    expect(await entry.getByTestId('debug-status').textContent()).toBe('201 Created')
    const curl = (await entry.getByTestId('debug-curl').textContent())!
    expect(curl).toContain(`curl -sS -X POST '${base}/v1/apikeys'`)
    expect(curl).toContain('-H "Authorization: Bearer $MEMSVC_API_KEY"')
    expect(curl).toContain(`-d '{"labels":{"purpose":"debug-demo"}}'`)
    expect(curl).not.toContain(rootKey)
    const response = JSON.parse((await entry.getByTestId('debug-response').textContent())!) as {
      apiKeyMetadata: { labels: unknown }
      rawApiKey: string
    }
    expect(response.apiKeyMetadata.labels).toEqual({ purpose: 'debug-demo' })
    // The one-time key is not kept in the debug log.
    expect(response.rawApiKey).not.toContain(raw)
    await screenshot('debug-mode')

    await panel.getByRole('button', { name: 'Reveal API key', exact: true }).click()
    expect(await entry.getByTestId('debug-curl').textContent()).toContain(`-H 'Authorization: Bearer ${rootKey}'`)
    await entry.getByRole('button', { name: /Copy curl/ }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(`Bearer ${rootKey}`)
    await panel.getByRole('button', { name: 'Hide API key', exact: true }).click()
    expect(await entry.getByTestId('debug-curl').textContent()).not.toContain(rootKey)

    // An error answer is shown raw, with its status.
    await page.getByLabel(labelled('Labels')).fill('UPPER=case')
    await page.getByRole('button', { name: 'Create API key', exact: true }).click()
    const failed = panel.locator('details.debug-entry[open]').first()
    await expect.poll(() => failed.getByTestId('debug-status').textContent()).toBe('400 Bad Request')
    const error = JSON.parse((await failed.getByTestId('debug-response').textContent())!) as {
      error: { status: string; details: Array<{ field: string }> }
    }
    expect(error.error.status).toBe('INVALID_ARGUMENT')
    expect(error.error.details[0]!.field).toMatch(/^labels/)
    expect(await page.locator('[data-field="labels"] .field-error').textContent()).toMatch(/label keys/)
    await page.getByLabel(labelled('Labels')).fill('')

    await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
    expect(await panel.count()).toBe(0)
  })

  it('embedders: provider defaults, a server validation error next to its field, fixed and registered; detail, edit, delete', async () => {
    const secret = 'provider-secret-e2e-123'
    await goTo('Embedders')
    await expect.poll(() => page.locator('main').textContent()).toMatch(/No embedders registered/)
    await page.getByRole('link', { name: 'Register an embedder' }).click()
    const form = page.locator('form.registry-form')
    await form.waitFor()

    // The API path follows the provider's default (validation/registry-values.ts) until it is edited by hand.
    const provider = form.getByLabel(labelled('Provider type'))
    const apiPath = form.getByLabel(labelled('API path'))
    for (const [value, path] of [
      ['TEI', '/embed'],
      ['VENDORD', '/v2/embed'],
      ['VLLM', '/embeddings'],
      ['TEI', '/embed'],
    ]) {
      await provider.selectOption(value!)
      expect(await apiPath.inputValue()).toBe(path)
    }
    expect(await form.getByRole('checkbox', { name: 'Text' }).isChecked()).toBe(true)
    expect(await form.getByLabel(labelled('Distribution type')).inputValue()).toBe('DENSE')

    await form.getByLabel(labelled('Display name')).fill('MiniLM on TEI')
    await form.getByLabel(labelled('Model identifier')).fill('sentence-transformers/all-MiniLM-L6-v2')
    await form.getByLabel(labelled('Dimensionality')).fill('384')
    await form.getByLabel(labelled('Max sequence length')).fill('512')
    await form.getByLabel(labelled('Labels')).fill('team=search')
    // A URL the browser accepts but the server refuses: credentials do not belong in it.
    await form.getByLabel(labelled('Endpoint URL')).fill('http://user:hunter2@tei.internal:8080')
    await form.getByRole('radio', { name: 'Inline API key' }).check()
    await form.getByLabel(labelled('API key (secret)')).fill(secret)
    await form.getByRole('button', { name: 'Register embedder', exact: true }).click()

    const endpointError = form.locator('[data-field="endpointUrl"] .field-error')
    await expect.poll(() => endpointError.textContent()).toMatch(/must not carry a user name or password/)
    expect(await form.getByLabel(labelled('Endpoint URL')).getAttribute('aria-invalid')).toBe('true')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('endpointUrl')
    expect(await form.locator('.form-summary').textContent()).toMatch(/400 INVALID_ARGUMENT/)
    await screenshot('embedder-validation')

    await form.getByLabel(labelled('Endpoint URL')).fill('http://tei.internal:8080')
    await form.getByRole('button', { name: 'Register embedder', exact: true }).click()
    await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('MiniLM on TEI')
    const settings = page.getByRole('region', { name: 'Settings' })
    expect(await settings.textContent()).toContain('/embed')
    expect(await settings.textContent()).toMatch(
      /Inline API key in Authorization \(Bearer …\) · fingerprint [0-9a-f]{8}/,
    )
    expect(await page.content()).not.toContain(secret)
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    const stored = JSON.parse((await api('GET', `/v1/embedders/${id}`, rootKey)).body) as {
      dimensionality: number
      maxSequenceLength: number
      labels: unknown
      credentials: { kind: string; apiKey: { secretFingerprint: string } }
    }
    expect(stored).toMatchObject({
      dimensionality: 384,
      maxSequenceLength: 512,
      labels: { team: 'search' },
      credentials: { kind: 'API_KEY' },
    })

    // Edit: only what changed is sent; the stored secret is kept when none is typed.
    await page.getByRole('link', { name: 'Edit', exact: true }).click()
    await form.waitFor()
    expect(await form.getByLabel(labelled('Provider type')).isDisabled()).toBe(true)
    await form.getByLabel(labelled('Display name')).fill('MiniLM (TEI)')
    await form.getByRole('button', { name: 'Save changes', exact: true }).click()
    await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('MiniLM (TEI)')
    const edited = JSON.parse((await api('GET', `/v1/embedders/${id}`, rootKey)).body) as typeof stored
    expect(edited.credentials.apiKey.secretFingerprint).toBe(stored.credentials.apiKey.secretFingerprint)

    await goTo('Embedders')
    const row = page.locator(`tr[data-id="${id}"]`)
    await row.waitFor()
    expect(await row.textContent()).toContain('MiniLM (TEI)')
    await row.getByRole('button', { name: 'Delete', exact: true }).click()
    await page
      .getByRole('dialog', { name: /Delete embedder/ })
      .getByRole('button', { name: 'Delete embedder', exact: true })
      .click()
    await expect.poll(() => row.count()).toBe(0)
    expect((await api('GET', `/v1/embedders/${id}`, rootKey)).status).toBe(404)
  })

  it('embedders: a LOCAL model needs only a name and a model; no endpoint, credentials or dimensionality to give', async () => {
    // A model in the server's data directory, found by name (test/support/tiny-embedding-model.ts).
    writeTinyEmbeddingModel({ dir: path.join(sandbox.dir, 'data', 'models', 'tiny') })
    await goTo('Embedders')
    await page.getByRole('link', { name: 'Register an embedder' }).click()
    const form = page.locator('form.registry-form')
    await form.waitFor()
    await form.getByLabel(labelled('Provider type')).selectOption('LOCAL')
    expect(await form.getByLabel(labelled('Endpoint URL')).isVisible()).toBe(false)
    expect(await form.getByRole('radio', { name: 'Inline API key' }).isVisible()).toBe(false)
    expect(
      await form.getByLabel(labelled('Dimensionality')).evaluate((input) => (input as HTMLInputElement).required),
    ).toBe(false)
    await form.getByLabel(labelled('Display name')).fill('tiny in memsvc')
    await form.getByLabel(labelled('Model identifier')).fill('tiny')
    await form.getByRole('button', { name: 'Register embedder', exact: true }).click()
    await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('tiny in memsvc')
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    const stored = JSON.parse((await api('GET', `/v1/embedders/${id}`, rootKey)).body)
    expect(stored).toMatchObject({
      providerType: 'LOCAL',
      endpointUrl: 'local://in-process',
      dimensionality: 32,
      credentials: { kind: 'NONE' },
    })
    expect((await api('DELETE', `/v1/embedders/${id}`, rootKey)).status).toBe(204)
  })

  it('LLMs: capability toggles, sampling ranges as input limits, errors next to their fields, registered', async () => {
    await goTo('LLMs')
    await page.getByRole('link', { name: 'Register an LLM' }).click()
    const form = page.locator('form.registry-form')
    await form.waitFor()
    expect(await form.getByLabel(labelled('API path')).inputValue()).toBe('/v1/chat/completions')
    const capabilities = form.getByRole('group', { name: 'Capabilities' }).last()
    const checked = await capabilities
      .getByRole('checkbox')
      .evaluateAll((boxes) =>
        boxes.filter((box) => (box as HTMLInputElement).checked).map((box) => (box as HTMLInputElement).value),
      )
    expect(checked).toEqual(['supportsChat', 'supportsSamplingParameters', 'supportsSystemMessages'])
    const ranges = await form
      .locator('input[name^="defaultSamplingParams."]')
      .evaluateAll((inputs) =>
        Object.fromEntries(
          inputs.map((input) => [
            (input as HTMLInputElement).name.split('.')[1],
            [(input as HTMLInputElement).min, (input as HTMLInputElement).max],
          ]),
        ),
      )
    expect(ranges).toMatchObject({
      temperature: ['0', '2'],
      topP: ['0', '1'],
      frequencyPenalty: ['-2', '2'],
      presencePenalty: ['-2', '2'],
      maxTokens: ['1', '2147483647'],
      topK: ['1', '2147483647'],
    })

    await form.getByLabel(labelled('Provider type')).selectOption('OLLAMA')
    await form.getByLabel(labelled('Display name')).fill('Llama 3.1 on Ollama')
    await form.getByLabel(labelled('Model identifier')).fill('llama3.1:8b')
    await form.getByLabel(labelled('Endpoint URL')).fill('http://localhost:11434')
    await capabilities.getByRole('checkbox', { name: 'Streaming' }).check()
    await form.getByLabel(labelled('Temperature')).fill('2.5')
    await form.getByLabel(labelled('Client config (JSON)')).fill('{not json')
    await form.getByRole('button', { name: 'Register LLM', exact: true }).click()
    // Out of range: caught in the browser, shown the same way as the server's errors.
    await expect
      .poll(() => form.locator('[data-field="defaultSamplingParams.temperature"] .field-error').textContent())
      .toMatch(/2/)
    await form.getByLabel(labelled('Temperature')).fill('0.7')
    await form.getByRole('button', { name: 'Register LLM', exact: true }).click()
    // Not valid JSON: only the server knows; its error lands next to the field it names.
    await expect.poll(() => form.locator('[data-field="clientConfig"] .field-error').textContent()).toMatch(/JSON/)
    expect(await form.locator('[data-field="defaultSamplingParams.temperature"] .field-error').isHidden()).toBe(true)
    await form.getByLabel(labelled('Client config (JSON)')).fill('{"keepAlive": "5m"}')
    await form.getByLabel(labelled('Stop sequences')).fill('</s>\nUser:')
    await form.getByRole('radio', { name: 'Cloud application default credentials' }).check()
    await form.getByLabel(labelled('Quota project')).fill('my-project')
    await form.getByRole('button', { name: 'Register LLM', exact: true }).click()
    await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('Llama 3.1 on Ollama')
    const settings = await page.getByRole('region', { name: 'Settings' }).textContent()
    expect(settings).toContain('Streaming: yes')
    expect(settings).toContain('temperature=0.7')
    expect(settings).toContain('quota project my-project')
    await screenshot('llm-detail')

    // Editing without changing anything sends nothing: the form reads back exactly what is stored.
    await page.getByRole('link', { name: 'Edit', exact: true }).click()
    await form.waitFor()
    expect(await form.getByLabel(labelled('Temperature')).inputValue()).toBe('0.7')
    expect(await capabilities.getByRole('checkbox', { name: 'Streaming' }).isChecked()).toBe(true)
    await form.getByRole('button', { name: 'Save changes', exact: true }).click()
    await expect.poll(() => page.getByRole('status').last().textContent()).toBe('Nothing changed')
    // A change to one sampling value is saved.
    await page.getByRole('link', { name: 'Edit', exact: true }).click()
    await form.waitFor()
    await form.getByLabel(labelled('Top-p')).fill('0.9')
    await form.getByRole('button', { name: 'Save changes', exact: true }).click()
    await expect.poll(() => page.getByRole('region', { name: 'Settings' }).textContent()).toContain('topP=0.9')
    expect(await page.getByRole('region', { name: 'Settings' }).textContent()).toContain('temperature=0.7')
  })

  it('rerankers: provider defaults, registered against a local rerank server, probed on demand (seen in debug mode), deleted', async () => {
    const provider: FakeRerankerLlm = await startFakeRerankerLlm()
    try {
      await goTo('Rerankers')
      await expect.poll(() => page.locator('main').textContent()).toMatch(/No rerankers registered/)
      await page.getByRole('link', { name: 'Register a reranker' }).click()
      const form = page.locator('form.registry-form')
      await form.waitFor()
      const providerType = form.getByLabel(labelled('Provider type'))
      const apiPath = form.getByLabel(labelled('API path'))
      for (const [value, path] of [
        ['TEI', '/rerank'],
        ['VENDORD', '/v2/rerank'],
        ['VLLM', '/v1/rerank'],
      ]) {
        await providerType.selectOption(value!)
        expect(await apiPath.inputValue()).toBe(path)
      }
      // Only the fields every registration has: no embedder or LLM settings.
      expect(await form.getByLabel(labelled('Dimensionality')).count()).toBe(0)
      expect(await form.getByLabel(labelled('Max context length')).count()).toBe(0)
      await form.getByLabel(labelled('Display name')).fill('BGE reranker')
      await form.getByLabel(labelled('Model identifier')).fill('BAAI/bge-reranker-base')
      await form.getByLabel(labelled('Endpoint URL')).fill(provider.url)
      await form.getByRole('button', { name: 'Register reranker', exact: true }).click()
      await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('BGE reranker')
      expect(await page.getByRole('region', { name: 'Settings' }).textContent()).toContain('/v1/rerank')
      const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)

      await page.getByRole('button', { name: 'Debug mode', exact: true }).click()
      const panel = page.getByRole('complementary', { name: 'Debug' })
      await page.getByRole('button', { name: 'Probe now', exact: true }).click()
      await expect
        .poll(() => panel.getByTestId('debug-curl').allTextContents())
        .toContainEqual(expect.stringContaining(`-X POST '${base}/v1/rerankers/${id}:probe'`))
      await expect.poll(() => page.getByTestId('last-probe').textContent(), { timeout: 30_000 }).toMatch(/^OK/)
      expect(
        provider.requests.some((sent) => sent.path === '/v1/rerank' && sent.body.model === 'BAAI/bge-reranker-base'),
      ).toBe(true)
      await screenshot('reranker-detail')
      await page.getByRole('button', { name: 'Debug mode', exact: true }).click()

      await goTo('Rerankers')
      const row = page.locator(`tr[data-id="${id}"]`)
      await row.waitFor()
      expect(await row.textContent()).toContain('BGE reranker')
      await row.getByRole('button', { name: 'Delete', exact: true }).click()
      await page
        .getByRole('dialog', { name: /Delete reranker/ })
        .getByRole('button', { name: 'Delete reranker', exact: true })
        .click()
      await expect.poll(() => row.count()).toBe(0)
      expect((await api('GET', `/v1/rerankers/${id}`, rootKey)).status).toBe(404)
    } finally {
      await provider.close()
    }
  })

  it('users (admins): create a user and manage their keys', async () => {
    await goTo('Users')
    await page.getByLabel(labelled('Username')).fill('alice')
    await page.getByLabel(labelled('Display name')).fill('Alice Example')
    await page.getByRole('button', { name: 'Create user', exact: true }).click()
    const row = page.locator('tr', { hasText: 'alice' })
    await row.waitFor()
    expect(await row.textContent()).toContain('Alice Example')
    // A duplicate username is refused, with the reason shown.
    await page.getByLabel(labelled('Username')).fill('alice')
    await page.getByRole('button', { name: 'Create user', exact: true }).click()
    await expect.poll(() => page.locator('.form-summary').textContent()).toMatch(/409/)

    await row.getByRole('link', { name: 'API keys' }).click()
    await expect.poll(() => page.locator('h2.page-title').textContent()).toBe('API keys')
    expect(await page.getByText('Keys of alice').count()).toBe(1)
    await page.getByRole('button', { name: 'Create API key', exact: true }).click()
    const raw = await page.getByTestId('new-key').getByLabel(labelled('API key')).inputValue()
    const me = JSON.parse((await api('GET', '/v1/users/me', raw)).body) as { username: string }
    expect(me.username).toBe('alice')
  })

  it('works by keyboard: skip link, visible focus, labelled controls on every page', async () => {
    await page.goto(`${base}/console/#/overview`)
    await page.reload()
    await page.getByTestId('version').waitFor()
    await page.keyboard.press('Tab')
    const skip = await page.evaluate(() => ({
      text: document.activeElement?.textContent,
      outline: getComputedStyle(document.activeElement!).outlineStyle,
    }))
    expect(skip).toEqual({ text: 'Skip to content', outline: 'solid' })
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')

    // Keyboard only: from the navigation to the API keys page, then create a key.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'API keys' }).focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('API keys')
    // The form renders after the page's first API answer; on a loaded machine that is after the heading took focus.
    await page.locator('[name="labels"]').waitFor()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('labels')
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid')
    await page.keyboard.type('via=keyboard')
    // The date-time field has a tab stop per part (month, day, …): Tab on until the button.
    for (
      let presses = 0;
      presses < 12 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Create API key';
      presses++
    ) {
      await page.keyboard.press('Tab')
    }
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Create API key')
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid')
    await page.keyboard.press('Enter')
    await page.getByTestId('new-key').waitFor()
    expect(await page.evaluate(() => document.activeElement?.textContent)).toMatch(/^New API key msk_/)

    for (const section of ['Overview', 'API keys', 'Embedders', 'LLMs', 'Rerankers', 'Users', 'System']) {
      await goTo(section)
      await page.waitForLoadState('networkidle')
      expect({ section, unlabelled: await unlabelledControls() }).toEqual({ section, unlabelled: [] })
    }
    await page.goto(`${base}/console/#/embedders/new`)
    await page.locator('form.registry-form').waitFor()
    expect(await unlabelledControls()).toEqual([])
    await page.goto(`${base}/console/#/llms/new`)
    await page.locator('form.registry-form').waitFor()
    expect(await unlabelledControls()).toEqual([])
    await page.goto(`${base}/console/#/rerankers/new`)
    await page.locator('form.registry-form').waitFor()
    expect(await unlabelledControls()).toEqual([])
  })

  it('system page: server information, probes, and drain (with confirmation and a reason) when the server has it', async () => {
    await page.goto(`${base}/console/#/system`)
    await goTo('System')
    await expect.poll(() => page.getByTestId('system-state').textContent()).toBe('READY')
    const drainAnswer = (await api('GET', '/v1/admin:drain', rootKey)).status
    const drain = page.getByTestId('drain')
    if (drainAnswer === 404) {
      await expect.poll(() => drain.textContent()).toMatch(/Drain is not available on this server/)
      expect(await drain.getByRole('button').count()).toBe(0)
      await screenshot('system')
      return
    }
    await drain.getByRole('button', { name: 'Drain server…', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Drain this server?' })
    await dialog.getByLabel(/Reason/).fill('console e2e test')
    await dialog.getByRole('button', { name: 'Drain server', exact: true }).click()
    await expect.poll(() => drain.textContent()).toMatch(/State: (DRAINING|QUIESCED)/)
    await expect.poll(() => page.getByTestId('system-state').textContent()).toMatch(/DRAINING|QUIESCED/)
    expect((await request(`${base}/readyz`)).status).toBe(503)
    expect(server.hasLogged(/console e2e test/)).toBe(true)
    await screenshot('system')
  })

  it('no console errors, CSP violations or requests to any other host on any page', () => {
    expect(watched.problems).toEqual([])
    const origin = new URL(base).origin
    expect(watched.requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([])
    // The only API errors Chromium logged are the ones the tests provoked or the console handles.
    for (const answer of apiErrorAnswers) {
      expect(answer).toMatch(
        /^(400 \/v1\/(apikeys(\/[0-9a-f-]{36})?|embedders|llms)|401 \/v1\/users\/me|409 \/v1\/users|40[45] \/v1\/admin:drain|503 \/(readyz|startupz))$/,
      )
    }
    for (const file of fs.readdirSync(SCREENSHOT_DIR).filter((name) => name.startsWith('memsvc-console-')))
      expect(fs.statSync(`${SCREENSHOT_DIR}/${file}`).size).toBeGreaterThan(1000)
  })
})
