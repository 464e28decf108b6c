// Headless Chromium for the console's browser tests: Debian's /usr/bin/chromium driven
// by playwright-core (which downloads nothing). Each launch gets a fresh profile
// directory, and background traffic (updates, sync, safe browsing…) is switched off so
// that the only requests are the ones the page makes.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Browser, type BrowserContext, type ConsoleMessage, chromium, type Page } from 'playwright-core'

export const CHROMIUM_PATH = process.env.MEMSVC_CHROMIUM ?? '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM_PATH)
}

export interface TestBrowser {
  context: BrowserContext
  close(): Promise<void>
}

/** A persistent context on a new, empty profile directory, removed again by close(). */
export async function launchBrowser(
  options: { viewport?: { width: number; height: number } } = {},
): Promise<TestBrowser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: options.viewport ?? { width: 1280, height: 860 },
    // Clipboard access for the copy buttons (the page still falls back without it).
    permissions: ['clipboard-read', 'clipboard-write'],
  })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      fs.rmSync(userDataDir, { recursive: true, force: true })
    },
  }
}

export interface PageProblems {
  /** Console errors and warnings, uncaught exceptions and CSP violations. */
  problems: string[]
  /** Every URL the page requested. */
  requests: string[]
}

/**
 * Records what a page does wrong: console errors/warnings, uncaught exceptions, CSP
 * violations (reported by the page itself through an init script, which CDP injects
 * regardless of the page's CSP) and every request, so a test can assert none left
 * the server. `allow` decides which console messages are expected (e.g. Chromium's
 * "Failed to load resource" line for an API error the test provoked on purpose).
 */
export async function watchPage(
  page: Page,
  allow: (message: ConsoleMessage) => boolean = () => false,
): Promise<PageProblems> {
  const watched: PageProblems = { problems: [], requests: [] }
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || '(inline)'}`)
    })
  })
  page.on('console', (message) => {
    if ((message.type() === 'error' || message.type() === 'warning') && !allow(message)) {
      watched.problems.push(`console.${message.type()}: ${message.text()} (${message.location().url})`)
    }
  })
  page.on('pageerror', (error) => watched.problems.push(`uncaught: ${error.message}`))
  page.on('request', (request) => watched.requests.push(request.url()))
  return watched
}

export type { Browser, BrowserContext, Page }
