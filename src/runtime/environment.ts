import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

declare const __MEMSVC_VERSION__: string | undefined

const requireFromHere = createRequire(import.meta.url)

interface SeaModule {
  isSea(): boolean
  getAsset(key: string): ArrayBuffer
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
export const VERSION: string =
  typeof __MEMSVC_VERSION__ === 'string' ? __MEMSVC_VERSION__ : readSourceVersion()

/** The directory holding the executable (standalone) or the repository (source). */
export const installDir = isStandalone ? path.dirname(process.execPath) : sourceRoot
