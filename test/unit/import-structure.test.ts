import fs from 'node:fs'
import path from 'node:path'
import * as esbuild from 'esbuild'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')

/** Every .ts file under src/, with the src/ files it imports (type-only imports included: they tie modules together too). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.startsWith('generated')) continue
    const absolute = path.join(SRC, file)
    const imported = ts
      .preProcessFile(fs.readFileSync(absolute, 'utf8'), true, true)
      .importedFiles.map((entry) => entry.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.relative(SRC, path.resolve(path.dirname(absolute), name)).replace(/\.js$/, '.ts'))
      .filter((name) => !name.startsWith('generated'))
    graph.set(file, imported)
  }
  return graph
}

/** Each import cycle once, as the chain of files that closes it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const done = new Set<string>()
  const onPath: string[] = []
  const visit = (file: string) => {
    const open = onPath.indexOf(file)
    if (open >= 0) {
      found.push([...onPath.slice(open), file])
      return
    }
    if (done.has(file)) return
    onPath.push(file)
    for (const next of graph.get(file) ?? []) visit(next)
    onPath.pop()
    done.add(file)
  }
  for (const file of graph.keys()) visit(file)
  return found
}

describe('import structure of src/', () => {
  const graph = importGraph()

  it('has no import cycles', () => {
    expect(graph.size).toBeGreaterThan(50)
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([])
  })

  // The request path runs transport -> domain -> providers and db; jobs sit beside the transports, calling the
  // domain. Below them all: the pure chunking and document libraries, validation, secrets and the process's plumbing.
  const requestPath = /^(domain|providers|db|transport|server|jobs|cli|console|install)\//
  const layerRules: Array<[folder: string, mayNotImport: RegExp]> = [
    ['domain/', /^(transport|server|jobs|cli|console)\//],
    ['providers/', /^(domain|db|transport|server|jobs|cli|console)\//],
    ['db/', /^(domain|providers|transport|server|jobs|cli|console)\//],
    ['jobs/', /^(transport|server|cli|console)\//],
    ['transport/', /^(db|providers|server|jobs|cli)\//],
    // Of all src/, chunking reads only the import-free limits.
    ['chunking/', /^(?!chunking\/|validation\/limits\.ts$)/],
    // Document extraction is a library below the request path, like chunking: bytes in, text and sections out.
    ...[
      'documents/',
      'validation/',
      'secrets/',
      'errors/',
      'config/',
      'lifecycle/',
      'observability/',
      'runtime/',
      'tls/',
    ].map((folder): [string, RegExp] => [folder, requestPath]),
    // install/ is the library of `memsvc system install`: it fails as the commands do (docs/architecture.md).
    ['install/', /^(?!cli\/exit-codes\.ts$)(domain|providers|db|transport|server|jobs|cli|console)\//],
  ]

  it.each(layerRules)('keeps %s below the layers that call it', (folder, mayNotImport) => {
    const upward = [...graph]
      .filter(([file]) => file.startsWith(folder))
      .flatMap(([file, imports]) =>
        imports.filter((name) => mayNotImport.test(name)).map((name) => `${file} -> ${name}`),
      )
    expect(upward).toEqual([])
  })

  it('lets the browser console bundle, from outside src/console, only files that import nothing', async () => {
    const bundle = await esbuild.build({
      entryPoints: [path.join(SRC, 'console/main.ts')],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'browser',
      logLevel: 'silent',
    })
    const fromServer = Object.keys(bundle.metafile.inputs).filter((input) => !input.startsWith('src/console/'))
    const shared = ['validation/limits.ts', 'validation/registry-values.ts']
    expect(fromServer.sort()).toEqual(shared.map((file) => `src/${file}`))
    for (const file of shared) expect(graph.get(file), file).toEqual([])
  })

  it('finds a cycle when there is one', () => {
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ])
    expect(cycles(looped)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  })
})
