// LOCAL embedders in the built executable: dist/memsvc, copied into a directory with no
// node_modules, checks and adds a model (`memsvc model add`, `model list`), then, inside a
// network namespace with no network (unshare -n), serves, initialises (which registers the
// model as the default LOCAL embedder), stores memories and finds them by VECTOR search.
// The onnxruntime addon and its library come out of the executable into the per-user cache.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser, EXIT, expectError } from '../support/cli.js'
import { createSandbox, killAllProcesses, type Sandbox } from '../support/executable.js'
import { hasCommand } from '../support/installed.js'
import { writeTinyEmbeddingModel } from '../support/tiny-embedding-model.js'

const run = promisify(execFile)
const TEST_TIMEOUT_MS = 240_000
/** Polls of `system health` (0.5 s apart) before the server inside the namespace counts as failed. */
const READY_POLLS = 300

let sandbox: Sandbox
let user: CliUser
let dataDir: string

beforeAll(() => {
  sandbox = createSandbox()
  user = new CliUser(sandbox)
  dataDir = sandbox.makeDir('data')
  writeTinyEmbeddingModel({ dir: path.join(sandbox.dir, 'exports', 'tiny-export') })
  // As `npm run release -- --model DIR` bundles one: models/ next to the executable.
  writeTinyEmbeddingModel({ dir: path.join(sandbox.dir, 'models', 'bundled'), dimensions: 16, seed: 3 })
  const broken = writeTinyEmbeddingModel({ dir: path.join(sandbox.dir, 'exports', 'broken'), modelFile: 'model.onnx' })
  fs.writeFileSync(path.join(broken.dir, broken.modelFile), 'not an ONNX graph')
})

afterAll(() => {
  killAllProcesses()
  sandbox?.remove()
})

describe('LOCAL embedders in the executable', { timeout: TEST_TIMEOUT_MS }, () => {
  it('model add checks a model (loads it, embeds a sentence) and copies it into <data-dir>/models; list shows it', async () => {
    const added = await user.ok([
      'model',
      'add',
      path.join(sandbox.dir, 'exports', 'tiny-export'),
      '--name',
      'tiny',
      '--data-dir',
      dataDir,
      '-o',
      'json',
    ])
    expect(added.json()).toMatchObject({
      name: 'tiny',
      dimensions: 32,
      pooling: 'mean',
      normalize: true,
      maxTokens: 128,
    })
    expect(fs.existsSync(path.join(dataDir, 'models', 'tiny', 'onnx', 'model.onnx'))).toBe(true)
    // The addon and its library were written once into the sandbox's cache, beside each other.
    const cache = path.join(sandbox.env.XDG_CACHE_HOME!, 'memsvc')
    const extracted = fs.readdirSync(cache).find((name) => name.startsWith('onnxruntime-'))
    expect(fs.readdirSync(path.join(cache, extracted!)).sort()).toEqual([
      'libonnxruntime.so.1',
      'onnxruntime_binding.node',
    ])

    const listed = await user.ok(['model', 'list', '--data-dir', dataDir, '-o', 'json'])
    expect(listed.json<{ models: unknown[] }>().models).toEqual([
      expect.objectContaining({
        name: 'tiny',
        where: 'data-dir',
        description: expect.objectContaining({ dimensions: 32 }),
      }),
      expect.objectContaining({
        name: 'bundled',
        where: 'bundled',
        description: expect.objectContaining({ dimensions: 16 }),
      }),
    ])
    const table = await user.ok(['model', 'list', '--data-dir', dataDir])
    expect(table.stdout).toMatch(/^NAME +DIM +SIZE +POOLING/)
    expect(table.stdout).toMatch(/\ntiny +32 +\S+ kB +mean /)
  })

  it('model add refuses a model that does not load, and one that is not there, with one line each', async () => {
    const broken = await user.run(['model', 'add', path.join(sandbox.dir, 'exports', 'broken'), '--data-dir', dataDir])
    expectError(broken, EXIT.FAILED, /cannot load the model .*model\.onnx/)
    const missing = await user.run(['model', 'add', path.join(sandbox.dir, 'nowhere'), '--data-dir', dataDir])
    expectError(missing, EXIT.FAILED, /model directory .*nowhere does not exist/)
    expect(fs.readdirSync(path.join(dataDir, 'models'))).toEqual(['tiny'])
  })

  it('serves, initialises and retrieves by VECTOR with the LOCAL model, with no network at all', async () => {
    if (!hasCommand('unshare') || !hasCommand('ip'))
      throw new Error('unshare (util-linux) and ip (iproute2) are needed')
    const server = 'http://127.0.0.1:9090'
    const script = [
      'set -e',
      'ip link set lo up',
      'echo "links: $(ip -o link show | cut -d: -f2 | tr -d " " | tr "\\n" " ")"',
      `./memsvc serve --tls-disabled --rest-port 8080 --grpc-port 9090 --data-dir "${dataDir}" 2>"${dataDir}/server.log" &`,
      'server=$!',
      'polls=0',
      `until ./memsvc system health --server ${server} >/dev/null 2>&1; do`,
      `  polls=$((polls + 1)); if [ $polls -ge ${READY_POLLS} ]; then kill $server; cat "${dataDir}/server.log" >&2; exit 9; fi; sleep 0.5`,
      'done',
      `./memsvc init --server ${server} -o json > init.json`,
      // The "tiny" one: its id is the embedderId of the object whose modelIdentifier is tiny (no jq on every host).
      `embedder=$(./memsvc embedder list --server ${server} --provider-type LOCAL -o json | tr -d '\\n' | sed -n 's/.*"embedderId": "\\([^"]*\\)"[^{}]*"modelIdentifier": "tiny".*/\\1/p')`,
      `space=$(./memsvc space create --server ${server} --name notes --embedder "$embedder" -o json | sed -n 's/.*"spaceId": "\\([^"]*\\)".*/\\1/p' | head -1)`,
      `./memsvc memory create --server ${server} --space "$space" --wait "The Eiffel tower is an iron tower in Paris." >/dev/null`,
      `./memsvc memory create --server ${server} --space "$space" --wait "Prune the roses in spring, and water the garden." >/dev/null`,
      `./memsvc memory retrieve --server ${server} "which tower is in paris" --space "$space" --mode VECTOR -o json`,
      'kill -TERM $server; wait $server',
    ].join('\n')
    const { stdout } = await run('unshare', ['-n', 'sh', '-c', script], {
      cwd: sandbox.dir,
      env: sandbox.env,
      timeout: TEST_TIMEOUT_MS - 10_000,
    })
    const [links, ...events] = stdout.trim().split('\n')
    expect(links).toBe('links: lo ')
    const init = JSON.parse(fs.readFileSync(path.join(sandbox.dir, 'init.json'), 'utf8'))
    // init registered the data directory's model and the bundled one.
    expect(init.localEmbedders).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ modelIdentifier: 'tiny', dimensionality: 32 }),
        expect.objectContaining({ modelIdentifier: 'bundled', dimensionality: 16 }),
      ]),
    )
    const chunks = events
      .map((line) => JSON.parse(line))
      .flatMap((event) => (event.retrievedItem ? [event.retrievedItem.chunk.chunkText as string] : []))
    expect(chunks[0]).toBe('The Eiffel tower is an iron tower in Paris.')
    expect(chunks).toHaveLength(2)
    expect(fs.existsSync(path.join(sandbox.dir, 'node_modules'))).toBe(false)
  })
})
