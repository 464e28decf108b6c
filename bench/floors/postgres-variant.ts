// Which postgres.js a floor uses. "patched" is node_modules/postgres, which the build
// refuses to bundle without the queue patch (scripts/patch-postgres.mjs).
// "unpatched" is a private copy of the same package with the original 3.4.9 queue put
// back, for `--unpatched-soak`: it shows the degradation the patch removes, measured in
// the same run on the same machine.
import crypto from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type postgres from 'postgres'
import { postgresPatchStatus } from '../../scripts/patch-postgres.mjs'

export type PostgresVariant = 'patched' | 'unpatched'

const require = createRequire(import.meta.url)
/** The exports map hides src/: find the package directory from its CommonJS entry. */
const PACKAGE_DIR = path.resolve(path.dirname(require.resolve('postgres')), '..', '..')

/** src/queue.js exactly as postgres 3.4.9 ships it (Unlicense); checked against its digest below. */
const ORIGINAL_QUEUE = `export default Queue

function Queue(initial = []) {
  let xs = initial.slice()
  let index = 0

  return {
    get length() {
      return xs.length - index
    },
    remove: (x) => {
      const index = xs.indexOf(x)
      return index === -1
        ? null
        : (xs.splice(index, 1), x)
    },
    push: (x) => (xs.push(x), x),
    shift: () => {
      const out = xs[index++]

      if (index === xs.length) {
        index = 0
        xs = []
      } else {
        xs[index - 1] = undefined
      }

      return out
    }
  }
}
`
/** The same digest scripts/patch-postgres.mjs checks before it patches src/queue.js. */
const ORIGINAL_QUEUE_SHA256 = '15e6345adb6708bf3b99ad39fc2231c2fb61de5f6cba4b7a7a6be881482a4ec3'

type PostgresFactory = typeof postgres

export async function loadPostgres(variant: PostgresVariant): Promise<PostgresFactory> {
  const status = postgresPatchStatus()
  const installed = status.files.find((file) => file.file === 'src/queue.js')
  if (!installed?.patched)
    throw new Error('node_modules/postgres is not patched: run `node scripts/patch-postgres.mjs`')
  if (variant === 'patched') return (await import('postgres')).default

  const digest = crypto.createHash('sha256').update(ORIGINAL_QUEUE).digest('hex')
  if (digest !== ORIGINAL_QUEUE_SHA256)
    throw new Error(`the embedded original queue has sha256 ${digest}, not postgres 3.4.9's`)
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-unpatched-postgres-'))
  process.on('exit', () => fs.rmSync(copy, { recursive: true, force: true }))
  // package.json carries "type": "module", which src/*.js needs.
  fs.copyFileSync(path.join(PACKAGE_DIR, 'package.json'), path.join(copy, 'package.json'))
  fs.cpSync(path.join(PACKAGE_DIR, 'src'), path.join(copy, 'src'), { recursive: true })
  fs.writeFileSync(path.join(copy, 'src', 'queue.js'), ORIGINAL_QUEUE)
  return ((await import(pathToFileURL(path.join(copy, 'src', 'index.js')).href)) as { default: PostgresFactory })
    .default
}
