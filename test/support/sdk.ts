// Loads the BUILT SDK (sdk/dist, made by `npm run build`) through either entry point, typed by
// its sources: the tests exercise exactly what a user installs, ESM and CommonJS alike.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export type Sdk = typeof import('../../sdk/src/index.js')
export type EntryPoint = 'esm' | 'cjs'
export const ENTRY_POINTS: EntryPoint[] = ['esm', 'cjs']

const SDK_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'sdk', 'dist')
const FILES: Record<EntryPoint, string> = {
  esm: path.join(SDK_DIST, 'index.mjs'),
  cjs: path.join(SDK_DIST, 'index.cjs'),
}

export async function loadSdk(entry: EntryPoint): Promise<Sdk> {
  const file = FILES[entry]
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run "npm run build" first`)
  if (entry === 'cjs') return createRequire(import.meta.url)(file) as Sdk
  return (await import(pathToFileURL(file).href)) as Sdk
}

/** Collects a whole stream. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = []
  for await (const item of stream) items.push(item)
  return items
}
