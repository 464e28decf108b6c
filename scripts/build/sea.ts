// Turns the bundle into a Node single executable application (SEA): a copy of the
// node binary with the bundle and its assets injected as one blob.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

/** The fuse Node checks to know a blob was injected; must match the node binary. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
/** The ELF section name Node looks for. */
const SEA_RESOURCE = 'NODE_SEA_BLOB'
/** rwxr-xr-x: the executable is meant to be run by anyone who can read it. */
const EXECUTABLE_MODE = 0o755

export interface SeaOptions {
  bundle: string
  /** Asset key → absolute path of the file to embed. */
  assets: Record<string, string>
  /** Where sea-config.json and the blob are written. */
  workDir: string
  output: string
  /** The node binary to copy; it must be the one the bundle and uWS addon target. */
  nodeBinary: string
}

interface Postject {
  inject(file: string, resource: string, data: Buffer, options: { sentinelFuse: string }): Promise<void>
}

/** Fails early with a clear message instead of producing an executable that cannot start. */
export function checkNodeBinary(nodeBinary: string): void {
  const binary = fs.readFileSync(nodeBinary)
  if (!binary.includes(SEA_FUSE)) {
    throw new Error(`${nodeBinary} has no SEA fuse (${SEA_FUSE}); it cannot become a standalone executable`)
  }
}

export function writeSeaConfig(options: SeaOptions): { configFile: string; blob: string } {
  for (const [name, file] of Object.entries(options.assets)) {
    if (!fs.existsSync(file)) throw new Error(`SEA asset ${name} is missing: ${file}`)
  }
  const blob = path.join(options.workDir, 'memsvc.blob')
  const configFile = path.join(options.workDir, 'sea-config.json')
  const config = {
    main: options.bundle,
    output: blob,
    disableExperimentalSEAWarning: true,
    // V8's compiled code for the bundle, made at build time, so that a start does not compile the
    // whole script first. Node cannot run import() from it: the bundle has none (scripts/build/bundle.ts).
    useCodeCache: true,
    assets: options.assets,
  }
  fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`)
  return { configFile, blob }
}

export function buildSeaBlob(nodeBinary: string, configFile: string): void {
  // Node's only output on success says where the blob went; show it only on failure.
  const result = spawnSync(nodeBinary, ['--experimental-sea-config', configFile], { encoding: 'utf8' })
  if (result.status !== 0) {
    throw new Error(
      `node --experimental-sea-config failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}`,
    )
  }
}

/**
 * LIEF (compiled into postject) warns once per ELF note section of the node binary
 * that it cannot name. The warnings are harmless (the Node docs show them too) and
 * would drown the build output, so only they are dropped.
 */
const HARMLESS_POSTJECT_WARNING = /^warning: Can't find string offset for section name/

async function withoutHarmlessWarnings<T>(run: () => Promise<T>): Promise<T> {
  const original = console.warn
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && HARMLESS_POSTJECT_WARNING.test(args[0])) return
    original(...args)
  }
  try {
    return await run()
  } finally {
    console.warn = original
  }
}

export async function injectSeaBlob(options: SeaOptions, blob: string): Promise<void> {
  // Write next to the target and rename at the end, so a failed build never leaves a
  // half-injected executable at the final path.
  const partial = `${options.output}.partial`
  fs.rmSync(partial, { force: true })
  fs.copyFileSync(options.nodeBinary, partial)
  fs.chmodSync(partial, EXECUTABLE_MODE)
  const postject = createRequire(import.meta.url)('postject') as Postject
  await withoutHarmlessWarnings(() =>
    postject.inject(partial, SEA_RESOURCE, fs.readFileSync(blob), { sentinelFuse: SEA_FUSE }),
  )
  fs.renameSync(partial, options.output)
  fs.chmodSync(options.output, EXECUTABLE_MODE)
}
