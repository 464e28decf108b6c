// npm run release: packages the built dist/ (npm run build) as the air-gapped release
//   dist/release/memsvc-<version>-linux-x64.tar.gz   one top directory holding
//     memsvc, licenses/, memsvc.service, memsvc.env.example, INSTALL.txt,
//     and models/NAME/ for each `--model DIR` (npm run release -- --model DIR [--model DIR2])
//     and for the default model the build converts (dist/models/use-lite-512; leave it out
//     with --no-default-model), each with its LICENSE and NOTICE
//   dist/release/SHA256SUMS                          `sha256sum -c` format
// Everything a host needs is inside: nothing is fetched at install or run time. A bundled
// model is checked first (loaded, a sentence embedded); `memsvc init` on the target host
// registers it as the default LOCAL embedder.
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_MODEL_NAME } from '../scripts/default-model/default-model.js'
import { renderEnvFile } from '../src/install/env-file.js'
import { EXECUTABLE_NAME, LICENSES_DIR, MODELS_DIR } from '../src/install/releases.js'
import { DEFAULT_GRPC_PORT, DEFAULT_PREFIX, DEFAULT_REST_PORT } from '../src/install/system-install.js'
import { renderUnit, UNIT_NAME } from '../src/install/unit-file.js'
import { LocalModels } from '../src/providers/local/local-models.js'
import { MODEL_NAME_PATTERN, MODEL_NAME_RULE, readModelDirectory } from '../src/providers/local/model-directory.js'
import { installModelFiles } from '../src/providers/local/model-store.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(ROOT, 'dist')
const OUT = path.join(DIST, 'release')
const PLATFORM = 'linux-x64'
const DEFAULT_SHUTDOWN_TIMEOUT_SEC = 30
const BYTES_PER_MB = 1024 * 1024

function installText(version: string, tarball: string, top: string): string {
  return `memsvc ${version} (${PLATFORM})

This directory is complete: the executable, the licences it reads from licenses/
beside it, a systemd unit and an example settings file. Nothing is downloaded.

Check the download (next to the tarball):
  sha256sum -c SHA256SUMS

Install as a systemd service (as root):
  tar -xzf ${tarball} && cd ${top}
  ./memsvc system install --dry-run      # every step, nothing changed
  ./memsvc system install                # options: --prefix --user --rest-port --grpc-port --db-url --debug
  memsvc system health --server https://localhost:${DEFAULT_GRPC_PORT} --insecure

It installs ${DEFAULT_PREFIX}/releases/<version>/ (this executable and licenses/),
${DEFAULT_PREFIX}/current -> that release, /usr/local/bin/memsvc, the user memsvc,
/var/lib/memsvc (0700, the data), /etc/memsvc/memsvc.env (0640, settings and a
generated metrics secret; never overwritten) and /etc/systemd/system/${UNIT_NAME}
(${UNIT_NAME} here is the same unit for the default prefix).

Upgrade: run "system install" from a newer bundle (settings and data are kept, the
previous release stays for rollback), or: memsvc upgrade --from <newer tarball>
Remove:  memsvc system uninstall            (keeps settings and data)
         memsvc system uninstall --purge    (removes them too)

Run without installing: ./memsvc serve      (data in ~/.local/share/memsvc)

Embedding models in models/ (if any) run inside memsvc: "memsvc init" registers each
as a LOCAL embedder, the default of spaces created without one. Add more later with
"memsvc model add DIR --data-dir /var/lib/memsvc" (as root or the memsvc user).
`
}

/** The model directories to bundle: the build's default model unless --no-default-model, then each --model DIR. */
function modelArguments(args: string[]): string[] {
  const dirs: string[] = []
  let defaultModel = true
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === '--model' && args[index + 1]) dirs.push(path.resolve(args[++index]!))
    else if (arg.startsWith('--model=')) dirs.push(path.resolve(arg.slice('--model='.length)))
    else if (arg === '--no-default-model') defaultModel = false
    else throw new Error(`unknown argument ${arg}; the release takes --model DIR (repeatable) and --no-default-model`)
  }
  return defaultModel ? [path.join(DIST, MODELS_DIR, DEFAULT_MODEL_NAME), ...dirs] : dirs
}

/**
 * Checks each model (it loads and embeds a sentence, in an inference thread as the server
 * runs it) and copies its files into <stage>/models/<directory name>.
 */
async function bundleModels(dirs: string[], stage: string): Promise<string[]> {
  const local = new LocalModels({
    modelDirectories: [],
    threads: 1,
    maxQueuedBatches: 1,
    memoryBoundBytes: Number.MAX_SAFE_INTEGER,
  })
  try {
    const lines: string[] = []
    for (const dir of dirs) {
      const name = path.basename(dir)
      if (!MODEL_NAME_PATTERN.test(name))
        throw new Error(`--model ${dir}: the directory name must be ${MODEL_NAME_RULE}`)
      if (!fs.existsSync(dir))
        throw new Error(
          `${dir} is missing: ${name === DEFAULT_MODEL_NAME ? 'run "npm run build" first' : 'no such model'}`,
        )
      const files = readModelDirectory(dir, name)
      const described = await local.describe(files)
      const target = path.join(stage, MODELS_DIR, name)
      // Its LICENSE and NOTICE go with it (readModelDirectory lists them among its files).
      installModelFiles(files, target, false)
      lines.push(
        `model ${name}: ${described.dimensions} dimensions, ${described.pooling} pooling, ${described.maxTokens} tokens`,
      )
    }
    return lines
  } finally {
    await local.close()
  }
}

function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')
}

async function main(): Promise<void> {
  const modelDirs = modelArguments(process.argv.slice(2))
  const executable = path.join(DIST, EXECUTABLE_NAME)
  const licenses = path.join(DIST, LICENSES_DIR)
  for (const needed of [executable, licenses])
    if (!fs.existsSync(needed)) throw new Error(`${needed} is missing: run "npm run build" first`)
  // The first line is the version; the second names the runtime.
  const version = execFileSync(executable, ['--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } })
    .split('\n')[0]!
    .trim()
  const top = `memsvc-${version}-${PLATFORM}`
  const tarball = `${top}.tar.gz`

  fs.rmSync(OUT, { recursive: true, force: true })
  const stage = path.join(OUT, top)
  fs.mkdirSync(stage, { recursive: true })
  fs.copyFileSync(executable, path.join(stage, EXECUTABLE_NAME))
  fs.chmodSync(path.join(stage, EXECUTABLE_NAME), 0o755)
  fs.cpSync(licenses, path.join(stage, LICENSES_DIR), { recursive: true })
  const unit = renderUnit({
    version,
    executable: path.join(DEFAULT_PREFIX, 'current', EXECUTABLE_NAME),
    envFile: '/etc/memsvc/memsvc.env',
    user: 'memsvc',
    restPort: DEFAULT_REST_PORT,
    grpcPort: DEFAULT_GRPC_PORT,
    shutdownTimeoutSec: DEFAULT_SHUTDOWN_TIMEOUT_SEC,
  })
  fs.writeFileSync(path.join(stage, UNIT_NAME), unit, { mode: 0o644 })
  fs.writeFileSync(
    path.join(stage, 'memsvc.env.example'),
    renderEnvFile({
      restPort: DEFAULT_REST_PORT,
      grpcPort: DEFAULT_GRPC_PORT,
      shutdownTimeoutSec: DEFAULT_SHUTDOWN_TIMEOUT_SEC,
      debug: false,
    }),
    { mode: 0o644 },
  )
  fs.writeFileSync(path.join(stage, 'INSTALL.txt'), installText(version, tarball, top), { mode: 0o644 })
  const modelLines = await bundleModels(modelDirs, stage)

  // Same bytes for the same inputs: sorted entries, no build-machine owners, one fixed time.
  const mtime = `@${Math.floor(fs.statSync(executable).mtimeMs / 1000)}`
  execFileSync(
    'tar',
    ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=${mtime}`, '-czf', tarball, top],
    { cwd: OUT },
  )
  fs.rmSync(stage, { recursive: true })
  fs.writeFileSync(path.join(OUT, 'SHA256SUMS'), `${sha256(path.join(OUT, tarball))}  ${tarball}\n`)

  const listing = execFileSync('tar', ['-tvzf', tarball], { cwd: OUT, encoding: 'utf8' })
  console.log(listing.trimEnd())
  const size = fs.statSync(path.join(OUT, tarball)).size / BYTES_PER_MB
  console.log(`\n${path.relative(ROOT, path.join(OUT, tarball))}  ${size.toFixed(1)} MB`)
  console.log(fs.readFileSync(path.join(OUT, 'SHA256SUMS'), 'utf8').trimEnd())
  for (const line of modelLines) console.log(line)
}

main().catch((error: unknown) => {
  console.error(`release failed: ${(error as Error).message}`)
  process.exit(1)
})
