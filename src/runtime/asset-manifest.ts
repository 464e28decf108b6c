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
} as const

export type AssetName = keyof typeof ASSET_SOURCES

/** The addon and its library, extracted into one directory (the addon finds the library beside itself). */
export const ONNX_RUNTIME_ASSETS = ['onnxruntime_binding.node', 'libonnxruntime.so.1'] as const satisfies AssetName[]
