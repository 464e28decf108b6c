import fs from 'node:fs'
import path from 'node:path'
import { ASSET_SOURCES, type AssetName } from './asset-manifest.js'
import { isStandalone, sea, sourceRoot } from './environment.js'

/** Reads an embedded asset (standalone) or its source file (running from source). */
export function readAsset(name: AssetName): Buffer<ArrayBuffer> {
  if (isStandalone && sea) return Buffer.from(sea.getAsset(name))
  const file = path.join(sourceRoot, ASSET_SOURCES[name])
  try {
    return fs.readFileSync(file) as Buffer<ArrayBuffer>
  } catch (error) {
    throw new Error(`asset ${name} not found at ${file}; run "npm run build" first`, { cause: error })
  }
}
