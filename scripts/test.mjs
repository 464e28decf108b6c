// npm test: everything the tests need on a fresh machine of this kind, then the build
// (the end-to-end tests run dist/memsvc), the type check (vitest strips types without
// checking them; it needs the code the build generates), the formatter's check, the OpenAPI linter on the document
// the build wrote, then every test.
//   - PostgreSQL on 127.0.0.1:5432 is started if it is down (the machine has it installed).
//   - Debian packages the tests use are installed if missing (we run as root there):
//     prometheus for promtool, chromium for the console's browser tests, wrk and
//     nghttp2-client (h2load) for the benchmark harness's smoke test; for the install and
//     release tests systemd (systemd-analyze, systemd-notify), postgresql-client (psql),
//     util-linux (unshare), iproute2 (ip) and python3 (a stand-in sd_notify socket); a font
//     (fonts-dejavu-core) for the text images the OCR tests draw.
//     build-essential, which compiles the HTTP addon, is installed the same way by the build itself.
//   - pgvector is built from third_party/ and installed into that PostgreSQL if it lacks it.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { ensurePgvector } from './install-pgvector.mjs'

const REQUIRED_PACKAGES = [
  { command: 'promtool', pkg: 'prometheus' },
  { command: 'chromium', pkg: 'chromium' },
  { command: 'wrk', pkg: 'wrk' },
  { command: 'h2load', pkg: 'nghttp2-client' },
  { command: 'systemd-analyze', pkg: 'systemd' },
  { command: 'psql', pkg: 'postgresql-client' },
  { command: 'unshare', pkg: 'util-linux' },
  { command: 'ip', pkg: 'iproute2' },
  { command: 'python3', pkg: 'python3' },
  // The OCR tests draw their text images with a system font (@napi-rs/canvas finds it through fontconfig).
  { file: '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', pkg: 'fonts-dejavu-core' },
]

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
}

function run(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { stdio: 'inherit', ...options })
}

function ensurePostgres() {
  if (spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status === 0) return
  const clusters = fs.existsSync('/etc/postgresql') ? fs.readdirSync('/etc/postgresql') : []
  if (clusters.length === 0) {
    console.warn(
      'PostgreSQL is not installed here: the PostgreSQL half of the suites will fail; set MEMSVC_TEST_ENGINES=embedded to run the embedded half only',
    )
    return
  }
  run('pg_ctlcluster', ['--skip-systemctl-redirect', clusters[0], 'main', 'start'])
}

function ensurePackages() {
  const missing = REQUIRED_PACKAGES.filter((entry) =>
    entry.file ? !fs.existsSync(entry.file) : !has(entry.command),
  ).map((entry) => entry.pkg)
  if (missing.length === 0) return
  if (process.getuid?.() !== 0 || !has('apt-get')) {
    console.warn(
      `missing ${missing.join(', ')}; install them for the full suite (tests that need them say so and skip)`,
    )
    return
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  run('apt-get', ['update', '-qq'], { env })
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env })
}

ensurePostgres()
ensurePackages()
ensurePgvector()
run('npm', ['run', 'build'])
run('npm', ['run', 'typecheck'])
run('npm', ['run', 'format:check'])
// redocly.yaml holds the rules and turns telemetry off; the environment silences the update check too, so the lint runs offline.
run('npx', ['redocly', 'lint', 'dist/openapi.json', '--format=stylish'], {
  env: {
    ...process.env,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
  },
})
const vitest = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: 'inherit' })
process.exit(vitest.status ?? 1)
