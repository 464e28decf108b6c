import fs from 'node:fs'
import path from 'node:path'
import { ASSET_DIRECTORIES, ASSET_SOURCES, type AssetDirectoryName, type AssetName } from './asset-manifest.js'
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

/** The asset key of one file of an embedded directory (the build embeds each file under this key). */
export function directoryAssetKey(directory: AssetDirectoryName, fileName: string): string {
  return `${directory}/${fileName}`
}

/** Every file of an embedded directory (standalone) or of its source directory, by file name, sorted. */
export function readAssetDirectory(directory: AssetDirectoryName): Array<[fileName: string, content: Buffer]> {
  const embedded = isStandalone ? sea : undefined
  if (embedded) {
    const prefix = directoryAssetKey(directory, '')
    return embedded
      .getAssetKeys()
      .filter((key) => key.startsWith(prefix))
      .sort()
      .map((key) => [key.slice(prefix.length), Buffer.from(embedded.getAsset(key))])
  }
  const source = path.join(sourceRoot, ASSET_DIRECTORIES[directory])
  return fs
    .readdirSync(source)
    .sort()
    .map((fileName) => [fileName, fs.readFileSync(path.join(source, fileName))])
}
