// The web console: a static browser app embedded in the executable (SEA assets
// console/*, built by scripts/build/console.ts) and served under /console/.
//
// The JS and CSS are served under names carrying a hash of their bytes, computed here
// when they are first read, so they can be cached forever ("immutable"); index.html
// refers to them by those names and is revalidated on every load ("no-cache"). Every
// response carries a strict Content-Security-Policy: the app has no inline script or
// style and talks to nothing but this server.
import crypto from 'node:crypto'
import { AppError } from '../../../errors/app-error.js'
import type { AssetName } from '../../../runtime/asset-manifest.js'
import { readAsset } from '../../../runtime/assets.js'
import type { Answer } from '../openapi/operation.js'
import type { RestResponse } from '../rest-messages.js'
import type { RestRoute } from '../rest-route.js'

export const CONSOLE_PATH = '/console/'

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

const IMMUTABLE = 'public, max-age=31536000, immutable'
const REVALIDATE = 'no-cache'
/** Hex digits of the SHA-256 kept in an asset's served name. */
const HASH_LENGTH = 16

/** Placeholders in src/console/index.html that are replaced by the hashed asset URLs. */
const PLACEHOLDERS = { script: '%CONSOLE_JS%', style: '%CONSOLE_CSS%' } as const

interface ServedFile {
  body: string
  contentType: string
}

interface ConsoleFiles {
  index: string
  /** Hashed file name (e.g. console.3f9a….js) → file. */
  assets: Map<string, ServedFile>
}

function hashedName(base: string, extension: string, body: string): string {
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, HASH_LENGTH)
  return `${base}.${hash}.${extension}`
}

function loadConsoleFiles(read: (name: AssetName) => Buffer): ConsoleFiles {
  const script = read('console/console.js').toString('utf8')
  const style = read('console/console.css').toString('utf8')
  const template = read('console/index.html').toString('utf8')
  const scriptName = hashedName('console', 'js', script)
  const styleName = hashedName('console', 'css', style)
  for (const placeholder of Object.values(PLACEHOLDERS)) {
    if (!template.includes(placeholder)) throw new Error(`console/index.html lacks the placeholder ${placeholder}`)
  }
  const index = template
    .replaceAll(PLACEHOLDERS.script, `assets/${scriptName}`)
    .replaceAll(PLACEHOLDERS.style, `assets/${styleName}`)
  return {
    index,
    assets: new Map([
      [scriptName, { body: script, contentType: 'text/javascript; charset=utf-8' }],
      [styleName, { body: style, contentType: 'text/css; charset=utf-8' }],
    ]),
  }
}

/** Reads the embedded files on first use (a server started from source without a build still starts). */
function lazyConsoleFiles(read: (name: AssetName) => Buffer): () => ConsoleFiles {
  let files: ConsoleFiles | undefined
  return () => {
    if (files) return files
    try {
      files = loadConsoleFiles(read)
    } catch (error) {
      throw new AppError('UNAVAILABLE', `the web console is not available in this build: ${(error as Error).message}`)
    }
    return files
  }
}

const files = lazyConsoleFiles(readAsset)

const page = (): RestResponse => ({
  status: 200,
  contentType: 'text/html; charset=utf-8',
  headers: { ...SECURITY_HEADERS, 'cache-control': REVALIDATE },
  text: files().index,
})

const PAGE_ANSWER: Answer = { description: 'The console page.', content: { 'text/html': { type: 'string' } } }
/** Static files: no key, and served through a drain (see DrainExemption). */
const CONSOLE_FILE = { drainExempt: 'console-file', method: 'GET' } as const
const SERVED_AS_IS = { tag: 'console', examples: [{}] }

export const CONSOLE_ROUTES: RestRoute[] = [
  {
    ...CONSOLE_FILE,
    pattern: '/console',
    openapi: {
      ...SERVED_AS_IS,
      operationId: 'consoleRedirect',
      summary: 'Redirect to the web console',
      answers: { 301: { description: 'To /console/.', headers: ['Location'] } },
      exampleStatus: 301,
    },
    handle: () => ({
      status: 301,
      headers: { ...SECURITY_HEADERS, location: CONSOLE_PATH, 'cache-control': REVALIDATE },
    }),
  },
  {
    ...CONSOLE_FILE,
    pattern: CONSOLE_PATH,
    openapi: {
      ...SERVED_AS_IS,
      operationId: 'console',
      summary: 'The web console',
      answers: { 200: PAGE_ANSWER },
      exampleStatus: 200,
    },
    handle: page,
  },
  {
    ...CONSOLE_FILE,
    pattern: `${CONSOLE_PATH}index.html`,
    openapi: {
      ...SERVED_AS_IS,
      operationId: 'consoleIndex',
      summary: 'The web console (by file name)',
      answers: { 200: PAGE_ANSWER },
      exampleStatus: 200,
    },
    handle: page,
  },
  {
    ...CONSOLE_FILE,
    pattern: `${CONSOLE_PATH}assets/:name`,
    openapi: {
      operationId: 'consoleAsset',
      tag: 'console',
      summary: 'A console script or stylesheet, by the hashed name the page refers to',
      answers: {
        200: {
          description: 'The file; cached for good (its name changes with its bytes).',
          content: { 'text/javascript': { type: 'string' }, 'text/css': { type: 'string' } },
        },
      },
      errors: ['NOT_FOUND'],
      // No asset has this hash: the example shows the answer to a stale name.
      examples: [{ path: { name: 'console.0000000000000000.js' } }],
      exampleStatus: 404,
    },
    handle: (request) => {
      const file = files().assets.get(request.params.name ?? '')
      if (!file) throw new AppError('NOT_FOUND', `no console asset ${request.params.name}`)
      return {
        status: 200,
        contentType: file.contentType,
        headers: { ...SECURITY_HEADERS, 'cache-control': IMMUTABLE },
        text: file.body,
      }
    },
  },
]
