/**
 * Every non-JavaScript file the server needs at run time. The build embeds each one
 * as a SEA asset under its key; from source the same key resolves to the repo path.
 */
export const ASSET_SOURCES = {
  // Compiled by the build from third_party/uWebSockets.js (scripts/build/uws-addon.ts).
  'uws.node': 'dist/uws.node',
  'pglite.wasm': 'node_modules/@electric-sql/pglite/dist/pglite.wasm',
  'initdb.wasm': 'node_modules/@electric-sql/pglite/dist/initdb.wasm',
  'pglite.data': 'node_modules/@electric-sql/pglite/dist/pglite.data',
  // pgvector for the embedded database, as PGlite loads it (a gzipped tar of the extension's files).
  'pglite-vector.tar.gz': 'node_modules/@electric-sql/pglite-pgvector/dist/vector.tar.gz',
  'descriptor.binpb': 'dist/descriptor.binpb',
  // The web console (scripts/build/console.ts bundles src/console into dist/console).
  'console/index.html': 'dist/console/index.html',
  'console/console.js': 'dist/console/console.js',
  'console/console.css': 'dist/console/console.css',
  // Local embedding (src/providers/local): the inference threads' code, bundled on its own by the build, and
  // onnxruntime-node's addon with the library it links, extracted beside each other at first use (onnxruntime-addon.ts).
  'inference-worker.cjs': 'dist/inference-worker.cjs',
  'onnxruntime_binding.node': 'node_modules/onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node',
  'libonnxruntime.so.1': 'node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1',
  // Documents (src/documents): the extraction threads' code and the OCR threads' code, each bundled on its own by
  // the build; @napi-rs/canvas's addon (page rendering, image decoding), extracted at first use (document-assets.ts);
  // tesseract's WebAssembly core, the SIMD + LSTM-only build that tesseract.js itself picks on Node 24; and the
  // English model, 4.0.0_best_int (3 MB; the 10.9 MB 4.0.0 adds the legacy engine, which memsvc does not run).
  'extraction-worker.cjs': 'dist/extraction-worker.cjs',
  'ocr-thread.cjs': 'dist/ocr-thread.cjs',
  'skia.linux-x64-gnu.node': 'node_modules/@napi-rs/canvas-linux-x64-gnu/skia.linux-x64-gnu.node',
  'tesseract-core.wasm': 'node_modules/tesseract.js-core/tesseract-core-relaxedsimd-lstm.wasm',
  'eng.traineddata.gz': 'node_modules/@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz',
} as const

export type AssetName = keyof typeof ASSET_SOURCES

/** The addon and its library, extracted into one directory (the addon finds the library beside itself). */
export const ONNX_RUNTIME_ASSETS = ['onnxruntime_binding.node', 'libonnxruntime.so.1'] as const satisfies AssetName[]

/**
 * Directories embedded file by file, as `<key>/<file name>` assets (pdfjs reads them by URL, so they are
 * extracted to the cache together: src/runtime/document-assets.ts). pdfjs needs the standard fonts to draw
 * PDFs that name one of the 14 base fonts without embedding it, the CMaps to read CJK text encoded through a
 * predefined CMap, and its WebAssembly decoders for JPEG 2000 and JBIG2 scans and ICC colour.
 */
export const ASSET_DIRECTORIES = {
  'pdfjs-standard-fonts': 'node_modules/pdfjs-dist/standard_fonts',
  'pdfjs-cmaps': 'node_modules/pdfjs-dist/cmaps',
  'pdfjs-wasm': 'node_modules/pdfjs-dist/wasm',
} as const

export type AssetDirectoryName = keyof typeof ASSET_DIRECTORIES
