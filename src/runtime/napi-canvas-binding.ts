/**
 * Stands in for @napi-rs/canvas's js-binding.js in the standalone executable's bundles
 * (scripts/build/bundle.ts, NAPI_CANVAS_BINDING_SUBSTITUTE). The original looks for the skia
 * addon under node_modules (its platform package), which a SEA does not have. Here the addon
 * is loaded from the per-user cache, where it is extracted from the executable on first use
 * (document-assets.ts); its exports are the original's, so the rest of @napi-rs/canvas runs
 * unchanged. Any thread may load it: extraction writes the file once, atomically.
 *
 * CommonJS on purpose: @napi-rs/canvas requires this module and reads whatever the addon
 * exports, which an ES module would have to list name by name.
 */

const { extractCanvasAddon } = require('./document-assets.js') as typeof import('./document-assets.js')

const addon = { exports: {} as Record<string, unknown> }
const addonFile = extractCanvasAddon()
try {
  process.dlopen(addon, addonFile)
} catch (error) {
  throw new Error(`cannot load the canvas addon from ${addonFile}: ${(error as Error).message}`, { cause: error })
}

module.exports = addon.exports
