// Converts the default model on its own, as the build does (npm run build runs it as one step):
//   node --import tsx scripts/default-model/cli.ts [--models-dir DIR] [--force]
// DIR defaults to dist/models. It reads only node_modules, so it runs with no network
// (e.g. under `unshare -n`).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildDefaultModel } from './default-model.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const MS_PER_SECOND = 1000

const { values } = parseArgs({
  options: { 'models-dir': { type: 'string' }, force: { type: 'boolean', default: false } },
})
const started = performance.now()
const result = buildDefaultModel({
  root: ROOT,
  modelsDir: path.resolve(values['models-dir'] ?? path.join(ROOT, 'dist', 'models')),
  force: values.force,
})
const seconds = ((performance.now() - started) / MS_PER_SECOND).toFixed(2)
console.log(`${result.converted ? 'converted' : 'up to date'}: ${result.dir} (${seconds} s)`)
