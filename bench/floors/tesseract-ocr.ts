// Floor for OCR: tesseract.js alone through its public API (createWorker, createScheduler),
// N workers with the English model memsvc bundles (4.0.0_best_int, LSTM only) read from
// node_modules, offline, recognising the given page images. Each worker first reads one
// page unmeasured (its start-up and first-call costs; memsvc's engine is warmed the same
// way); the time is from the first measured job to the last one's text. Prints one
// BENCH_RESULT line.
//   --images a.jpg,b.jpg,…  --workers N
import fs from 'node:fs'
import path from 'node:path'
import { createScheduler, createWorker, OEM } from 'tesseract.js'
import { floorArgs } from './floor-common.js'

const MS_PER_SECOND = 1000
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..')
/** Where memsvc's bundled eng.traineddata.gz comes from (src/runtime/asset-manifest.ts). */
const LANGUAGE_PATH = path.join(REPO_ROOT, 'node_modules', '@tesseract.js-data', 'eng', '4.0.0_best_int')

const options = floorArgs(['images', 'workers'])
const images = options.images!.split(',').map((file) => fs.readFileSync(file))
const workerCount = Number(options.workers)

const initialising = performance.now()
const workers = await Promise.all(
  Array.from({ length: workerCount }, () =>
    createWorker('eng', OEM.LSTM_ONLY, { langPath: LANGUAGE_PATH, cacheMethod: 'none', gzip: true }),
  ),
)
const initSeconds = (performance.now() - initialising) / MS_PER_SECOND
await Promise.all(workers.map((worker) => worker.recognize(images[0]!)))
const scheduler = createScheduler()
for (const worker of workers) scheduler.addWorker(worker)

const started = performance.now()
const pages = await Promise.all(images.map((image) => scheduler.addJob('recognize', image)))
const seconds = (performance.now() - started) / MS_PER_SECOND
const characters = pages.reduce((total, page) => total + page.data.text.trim().length, 0)
const meanConfidence = pages.reduce((total, page) => total + page.data.confidence, 0) / pages.length
await scheduler.terminate()
process.stdout.write(
  `BENCH_RESULT ${JSON.stringify({ pages: pages.length, seconds, initSeconds, characters, meanConfidence })}\n`,
)
