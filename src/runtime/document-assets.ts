import path from 'node:path'
import { ASSET_DIRECTORIES, type AssetDirectoryName } from './asset-manifest.js'
import { readAsset, readAssetDirectory } from './assets.js'
import { extractToCache } from './cache-files.js'
import { isStandalone, sourceRoot } from './environment.js'

/**
 * The files document extraction reads from disk, for the standalone executable: @napi-rs/canvas's
 * native addon (a shared library loads only from a file) and the fonts, CMaps and WebAssembly
 * decoders pdfjs fetches by URL. They are written once per content into the per-user cache, as
 * the onnxruntime addon is (onnxruntime-addon.ts). From source they are read where npm put them.
 */

const CANVAS_ADDON = 'skia.linux-x64-gnu.node'

let canvasAddon: string | undefined

/**
 * The skia addon @napi-rs/canvas binds to, extracted on first call (35 MB, once per version).
 * Only the standalone executable asks (src/documents/napi-canvas-binding.ts); from source
 * @napi-rs/canvas finds its platform package in node_modules by itself.
 */
export function extractCanvasAddon(): string {
  canvasAddon ??= path.join(extractToCache('napi-canvas', [[CANVAS_ADDON, readAsset(CANVAS_ADDON)]]), CANVAS_ADDON)
  return canvasAddon
}

/** pdfjs's getDocument() options that name its resource directories; pdfjs wants each to end with a slash. */
export interface PdfjsResourceUrls {
  standardFontDataUrl: string
  cMapUrl: string
  wasmUrl: string
}

const PDFJS_DIRECTORIES = {
  standardFontDataUrl: 'pdfjs-standard-fonts',
  cMapUrl: 'pdfjs-cmaps',
  wasmUrl: 'pdfjs-wasm',
} as const satisfies Record<keyof PdfjsResourceUrls, AssetDirectoryName>

let pdfjsResources: PdfjsResourceUrls | undefined

/**
 * Where pdfjs finds its standard fonts, CMaps and wasm decoders: node_modules/pdfjs-dist from
 * source; in the executable, a cache directory they are extracted to on first call (4 MB).
 * Plain paths, not file: URLs: pdfjs reads them with fs in Node.
 */
export function pdfjsResourceUrls(): PdfjsResourceUrls {
  if (pdfjsResources) return pdfjsResources
  const entries = Object.entries(PDFJS_DIRECTORIES) as Array<[keyof PdfjsResourceUrls, AssetDirectoryName]>
  if (!isStandalone) {
    pdfjsResources = Object.fromEntries(
      entries.map(([option, directory]) => [option, `${path.join(sourceRoot, ASSET_DIRECTORIES[directory])}/`]),
    ) as unknown as PdfjsResourceUrls
    return pdfjsResources
  }
  const files = entries.flatMap(([, directory]) =>
    readAssetDirectory(directory).map(([name, content]) => [`${directory}/${name}`, content] as const),
  )
  const root = extractToCache('pdfjs', files)
  pdfjsResources = Object.fromEntries(
    entries.map(([option, directory]) => [option, `${path.join(root, directory)}/`]),
  ) as unknown as PdfjsResourceUrls
  return pdfjsResources
}
