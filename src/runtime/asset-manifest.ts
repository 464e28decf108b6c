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
} as const

export type AssetName = keyof typeof ASSET_SOURCES
