// Builds the vendored pgvector (third_party/pgvector-*.tar.gz) and installs it into the
// machine's PostgreSQL when `CREATE EXTENSION vector` is not available there: Debian 12
// ships no pgvector package for PostgreSQL 15, and the memory tests need it. Idempotent:
// once the extension is available this only asks PostgreSQL and returns.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const TARBALL = path.join(ROOT, 'third_party', 'pgvector-0.8.6.tar.gz')
/** What the build needs beyond a compiler: the server headers and PGXS makefiles of that major version. */
const BUILD_PACKAGES = (major) => [`postgresql-server-dev-${major}`, 'build-essential']

function psql(query) {
  const result = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'postgres', '-tAc', query], {
    encoding: 'utf8',
  })
  return result.status === 0 ? result.stdout.trim() : undefined
}

export function vectorAvailable() {
  return psql("select count(*) from pg_available_extensions where name = 'vector'") === '1'
}

function run(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { stdio: 'inherit', ...options })
}

export function ensurePgvector() {
  if (vectorAvailable()) return
  const major = psql('show server_version_num')?.slice(0, -4)
  if (!major) {
    console.warn('PostgreSQL does not answer on 127.0.0.1:5432: cannot check for pgvector')
    return
  }
  const pgConfig = `/usr/lib/postgresql/${major}/bin/pg_config`
  if (
    !fs.existsSync(path.join(`/usr/include/postgresql/${major}/server`, 'postgres.h')) ||
    spawnSync('sh', ['-c', 'command -v make && command -v gcc'], { stdio: 'ignore' }).status !== 0
  ) {
    if (process.getuid?.() !== 0) {
      console.warn(
        `pgvector is missing from PostgreSQL ${major}: install ${BUILD_PACKAGES(major).join(' ')} and run npm test again (the memory tests on PostgreSQL will fail)`,
      )
      return
    }
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    run('apt-get', ['update', '-qq'], { env })
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...BUILD_PACKAGES(major)], { env })
  }
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-pgvector-'))
  try {
    run('tar', ['-xzf', TARBALL, '-C', workDir, '--strip-components=1'])
    // OPTFLAGS='' leaves out -march=native: the library may be copied to another machine's PostgreSQL.
    run('make', ['-s', `PG_CONFIG=${pgConfig}`, 'OPTFLAGS=', `-j${Math.max(1, os.availableParallelism?.() ?? 2)}`], {
      cwd: workDir,
    })
    run('make', ['-s', `PG_CONFIG=${pgConfig}`, 'install'], { cwd: workDir })
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true })
  }
  if (!vectorAvailable())
    throw new Error('pgvector was built and installed, yet PostgreSQL does not list the vector extension')
}

if (import.meta.url === `file://${process.argv[1]}`) ensurePgvector()
