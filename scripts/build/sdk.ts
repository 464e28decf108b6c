// Builds the TypeScript SDK (sdk/, published as @memsvc/client) into sdk/dist: one ESM and
// one CommonJS bundle of sdk/src (with the generated protobuf code inside; @grpc/grpc-js and
// @bufbuild/protobuf stay dependencies) and type declarations from tsc. The package is
// versioned with the server: its package.json version is set to the root one here.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import * as esbuild from 'esbuild'

export interface SdkBuildOptions {
  root: string
  /** The root package.json version, without the commit. */
  version: string
}

export interface SdkBuildResult {
  esm: string
  cjs: string
  types: string
  /** True when sdk/package.json had another version and was rewritten. */
  versionSynced: boolean
}

/** The dependencies the bundles leave to the package manager (listed in sdk/package.json). */
const EXTERNAL = ['@grpc/grpc-js', '@bufbuild/protobuf', '@bufbuild/protobuf/*']

function syncVersion(packageFile: string, version: string): boolean {
  const manifest = JSON.parse(fs.readFileSync(packageFile, 'utf8')) as { version: string }
  if (manifest.version === version) return false
  manifest.version = version
  fs.writeFileSync(packageFile, `${JSON.stringify(manifest, null, 2)}\n`)
  return true
}

export async function buildSdk(options: SdkBuildOptions): Promise<SdkBuildResult> {
  const sdkDir = path.join(options.root, 'sdk')
  const distDir = path.join(sdkDir, 'dist')
  fs.rmSync(distDir, { recursive: true, force: true })
  const versionSynced = syncVersion(path.join(sdkDir, 'package.json'), options.version)
  const common: esbuild.BuildOptions = {
    entryPoints: [path.join(sdkDir, 'src', 'index.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    define: { MEMSVC_SDK_VERSION: JSON.stringify(options.version) },
    logLevel: 'warning',
    legalComments: 'none',
  }
  const esm = path.join(distDir, 'index.mjs')
  const cjs = path.join(distDir, 'index.cjs')
  await esbuild.build({ ...common, format: 'esm', outfile: esm })
  await esbuild.build({ ...common, format: 'cjs', outfile: cjs })
  const tsc = path.join(options.root, 'node_modules', 'typescript', 'bin', 'tsc')
  execFileSync(process.execPath, [tsc, '-p', path.join(sdkDir, 'tsconfig.json')], {
    cwd: options.root,
    stdio: 'inherit',
  })
  const types = path.join(distDir, 'types', 'sdk', 'src', 'index.d.ts')
  if (!fs.existsSync(types)) throw new Error(`tsc wrote no ${path.relative(options.root, types)}`)
  return { esm, cjs, types, versionSynced }
}
