import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

declare const __MEMSVC_VERSION__: string | undefined
declare const __MEMSVC_UWS_VERSION__: string | undefined

const requireFromHere = createRequire(import.meta.url)

interface SeaModule {
  isSea(): boolean
  getAsset(key: string): ArrayBuffer
  /** Node 24.8 and later. */
  getAssetKeys(): string[]
}

function loadSeaModule(): SeaModule | undefined {
  try {
    return requireFromHere('node:sea') as SeaModule
  } catch {
    return undefined
  }
}

export const sea = loadSeaModule()

/** True when running as the standalone executable. */
export const isStandalone = sea?.isSea() ?? false

/** The repository root when running from source (tsx, vitest). */
export const sourceRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

function readSourceVersion(): string {
  const manifest = requireFromHere(path.join(sourceRoot, 'package.json')) as { version: string }
  return `${manifest.version}-dev`
}

/** The build replaces __MEMSVC_VERSION__; from source we read package.json. */
export const VERSION: string = typeof __MEMSVC_VERSION__ === 'string' ? __MEMSVC_VERSION__ : readSourceVersion()

/** third_party/uWebSockets.js/sources.json says which uWS sources the addon is built from. */
function readSourceUwsVersion(): string {
  const sources = requireFromHere(path.join(sourceRoot, 'third_party', 'uWebSockets.js', 'sources.json')) as {
    version: string
  }
  return sources.version
}

/** The build replaces __MEMSVC_UWS_VERSION__; from source we read sources.json. */
export const UWS_VERSION: string =
  typeof __MEMSVC_UWS_VERSION__ === 'string' ? __MEMSVC_UWS_VERSION__ : readSourceUwsVersion()

export interface RuntimeInfo {
  node: string
  openssl: string
  uws: string
}

/** What the server runs on: reported by /v1/system/info and `memsvc --version`. */
export const RUNTIME: RuntimeInfo = { node: process.versions.node, openssl: process.versions.openssl, uws: UWS_VERSION }

/** `memsvc --version`: the version on the first line (scripts read that one), then the runtime. */
export const VERSION_TEXT = `${VERSION}\nruntime: Node.js ${RUNTIME.node}, OpenSSL ${RUNTIME.openssl}, uWebSockets.js ${RUNTIME.uws}`

/** The directory holding the executable (standalone) or the repository (source). */
export const installDir = isStandalone ? path.dirname(process.execPath) : sourceRoot
