// Bundles the server into one CommonJS file for the standalone executable (SEA).
//
// Inside a SEA, the main script's require() reaches only Node's builtins, so the
// bundle must contain every package and must not leave behind any require() or
// import() of anything else. checkBundle() enforces that.
import fs from 'node:fs'
import { isBuiltin } from 'node:module'
import path from 'node:path'
import * as esbuild from 'esbuild'

/** The repository root (this file is scripts/build/bundle.ts). */
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..')

export interface BundleOptions {
  entry: string
  outfile: string
  version: string
  /** The uWebSockets.js sources the addon is built from (third_party/uWebSockets.js/sources.json). */
  uwsVersion: string
}

export interface BundleResult {
  outfile: string
  bytes: number
  metafile: esbuild.Metafile
}

/**
 * yargs 18 and PGlite read import.meta.url, which a CJS bundle does not have. The
 * banner computes it once from __filename (the executable itself inside a SEA), and
 * `define` points every import.meta.url at it.
 */
const IMPORT_META_URL_VARIABLE = '__import_meta_url'
/**
 * The banner's first statement notes when the bundle began to run, which splits the time
 * before READY into Node's boot and the modules' evaluation (src/lifecycle/startup-timeline.ts).
 */
const BANNER = `globalThis.__memsvcBundleStartMs = performance.now(); var ${IMPORT_META_URL_VARIABLE} = require("url").pathToFileURL(__filename).href;`

interface SourcePatch {
  /** Files (absolute paths) the patch applies to. */
  files: RegExp
  find: string
  replace: string
  why: string
}

/**
 * Source rewrites for code paths that would reach outside the bundle. Each one is a
 * path memsvc never takes; the stub fails loudly instead of trying to load a package
 * that is not there.
 */
const SOURCE_PATCHES: SourcePatch[] = [
  {
    files: /[\\/]@electric-sql[\\/]pglite[\\/]dist[\\/].*\.js$/,
    find: 'require("ws")',
    replace:
      '(()=>{throw new Error("memsvc: PGlite WebSocket sockets are not available in the standalone executable")})()',
    why:
      "Emscripten's SOCKFS loads the ws package through a createRequire()-made require that esbuild cannot see; " +
      'PGlite only uses it for socket emulation, which memsvc does not use (pglite-socket serves a Unix socket instead).',
  },
  ...[
    'let{createRequire:e}=await import("node:module");var require=e(import.meta.url)',
    'const{createRequire}=await import("node:module");var require=createRequire(import.meta.url)',
  ].map(
    (find): SourcePatch => ({
      files: /[\\/]@electric-sql[\\/]pglite[\\/]dist[\\/].*\.js$/,
      find,
      replace: '',
      why:
        'Emscripten makes a require() of its own with createRequire, declared with var: once import() is a require() ' +
        "(see bundle(), for the code cache) the var shadows the bundle's require throughout the function before it is " +
        "set. The bundle's require reaches the builtins Emscripten loads just as well.",
    }),
  ),
]

interface ModuleSubstitute {
  /** The import as the importing file writes it. */
  specifier: RegExp
  /** Files (absolute paths) whose import is substituted. */
  importers: RegExp
  /** The module (relative to the repository root) bundled in its place. */
  replacement: string
  why: string
}

/**
 * Modules bundled in place of a package's own. Each replacement exports what the importer
 * uses of the original, and works: none is a stub.
 */
const MODULE_SUBSTITUTES: ModuleSubstitute[] = [
  {
    specifier: /^\.\.\/validation\/ajv-provider\.js$/,
    importers: /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/](server|client)[\\/]index\.js$/,
    replacement: 'src/transport/mcp/sdk-default-validator.ts',
    why:
      "The MCP SDK's Server imports Ajv as its default JSON Schema validator. memsvc always passes its own (built on zod, " +
      'which the SDK already bundles), so Ajv would be dead weight, and its code generator carries require("ajv/dist/runtime/…") ' +
      "strings that checkBundle() rightly cannot tell from real loads. The substitute exports the zod-based validator under Ajv's name.",
  },
]

function moduleSubstitutePlugin(substitutes: ModuleSubstitute[]): esbuild.Plugin {
  return {
    name: 'memsvc-module-substitutes',
    setup(build) {
      for (const substitute of substitutes) {
        build.onResolve({ filter: substitute.specifier }, (args) =>
          substitute.importers.test(args.importer) ? { path: path.resolve(ROOT, substitute.replacement) } : undefined,
        )
      }
    },
  }
}

/** Every patch whose files match is applied, in order (esbuild takes only the first onLoad that answers). */
function sourcePatchPlugin(patches: SourcePatch[]): esbuild.Plugin {
  return {
    name: 'memsvc-source-patches',
    setup(build) {
      const filter = new RegExp(patches.map((patch) => `(?:${patch.files.source})`).join('|'))
      build.onLoad({ filter }, async (args) => {
        const original = await fs.promises.readFile(args.path, 'utf8')
        let text = original
        for (const patch of patches)
          if (patch.files.test(args.path) && text.includes(patch.find))
            text = text.split(patch.find).join(patch.replace)
        return text === original ? undefined : { contents: text, loader: 'js' }
      })
    },
  }
}

/**
 * onnxruntime-node's dist/binding.js requires its addon by a fixed path under node_modules
 * (`../bin/napi-v6/<platform>/<arch>/onnxruntime_binding.node`), which a standalone executable
 * does not have. The inference threads' bundle takes this file in its place: it loads the
 * addon that the server's thread extracted from the executable (src/runtime/onnxruntime-addon.ts).
 */
const ONNX_BINDING_SUBSTITUTE: ModuleSubstitute = {
  specifier: /^\.\/binding$/,
  importers: /[\\/]onnxruntime-node[\\/]dist[\\/]backend\.js$/,
  replacement: 'src/providers/local/onnxruntime-binding.ts',
  why: "The original requires the addon from node_modules; in the executable it is extracted to the cache and dlopen'ed.",
}

export interface WorkerBundleOptions {
  entry: string
  outfile: string
}

/**
 * @napi-rs/canvas's js-binding.js requires the skia addon from node_modules (its platform package,
 * or a .node file beside it), which esbuild cannot bundle and a standalone executable does not have.
 * Every bundle that can reach @napi-rs/canvas takes this file in its place: it dlopens the addon
 * that src/runtime/document-assets.ts extracts from the executable into the per-user cache.
 */
const NAPI_CANVAS_BINDING_SUBSTITUTE: ModuleSubstitute = {
  specifier: /^\.\/js-binding(\.js)?$/,
  importers: /[\\/]@napi-rs[\\/]canvas[\\/][^\\/]+\.js$/,
  replacement: 'src/runtime/napi-canvas-binding.ts',
  why: "The original requires the addon from node_modules; in the executable it is extracted to the cache and dlopen'ed.",
}

/**
 * Rewrites for pdfjs in the extraction threads' bundle. pdfjs reaches @napi-rs/canvas through a
 * require() of its own making (createRequire), which esbuild cannot see and checkBundle() rightly
 * refuses; and it imports its worker half, and two fallback decoders, by URL, which a bundle
 * cannot serve. The threads load pdfjs's worker half themselves (globalThis.pdfjsWorker) and
 * always give pdfjs its wasm decoders, so those imports are never taken.
 */
const PDFJS_FILES = /[\\/]pdfjs-dist[\\/]legacy[\\/]build[\\/]pdf(\.worker)?\.mjs$/
const PDFJS_SOURCE_PATCHES: SourcePatch[] = [
  {
    files: PDFJS_FILES,
    find: 'const require = process.getBuiltinModule("module").createRequire(import.meta.url);',
    replace: '',
    why:
      "pdfjs's own require() for @napi-rs/canvas: without it, the plain require() that follows is the bundle's, " +
      'which esbuild resolves to the bundled @napi-rs/canvas (and its addon substitute).',
  },
  {
    files: PDFJS_FILES,
    find: `await import(
      /*webpackIgnore: true*/
      /*@vite-ignore*/
      this.workerSrc)`,
    replace: '(()=>{throw new Error("memsvc: pdfjs\'s worker half is loaded by the extraction thread")})()',
    why: 'The fake worker is found through globalThis.pdfjsWorker (src/documents/extraction-worker.ts); never imported.',
  },
  {
    files: PDFJS_FILES,
    find: `await import(
    /*webpackIgnore: true*/
    /*@vite-ignore*/
    \`\${WasmImage.#wasmUrl}\${this._noWasmFilename}\`)`,
    replace: '(()=>{throw new Error("memsvc: pdfjs\'s pure-JS image decoders are not bundled")})()',
    why: "The JavaScript fallbacks of pdfjs's JPEG 2000 and JBIG2 decoders: memsvc always ships the wasm ones.",
  },
  {
    files: PDFJS_FILES,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the pdfjs source to find holds ${…} literally.
    find: 'const wrapper = `await import("${new URL(src, window.location).href}");`;',
    replace: 'const wrapper = "";',
    why: 'A browser-only path (cross-origin workers): text that checkBundle() would take for an import() of a URL.',
  },
]

/** What the threads' bundles define like the server's, so that src/runtime reads the same inside them. */
function threadDefines(options: { version: string; uwsVersion: string }): Record<string, string> {
  return {
    'import.meta.url': IMPORT_META_URL_VARIABLE,
    __MEMSVC_VERSION__: JSON.stringify(options.version),
    __MEMSVC_UWS_VERSION__: JSON.stringify(options.uwsVersion),
  }
}

export interface DocumentWorkerBundleOptions extends WorkerBundleOptions {
  version: string
  uwsVersion: string
}

/**
 * One of the document threads (src/documents/extraction-worker.ts, ocr-thread.ts), bundled on
 * its own like the inference threads: a SEA's thread runs from source text. They read assets
 * themselves (tesseract's core and models, the canvas addon, pdfjs's resources), so they get the
 * server's import.meta.url banner and version defines, and the @napi-rs/canvas and pdfjs rewrites.
 */
export async function bundleDocumentWorker(options: DocumentWorkerBundleOptions): Promise<BundleResult> {
  const result = await esbuild.build({
    ...seaBundleOptions(options),
    banner: { js: `var ${IMPORT_META_URL_VARIABLE} = require("url").pathToFileURL(__filename).href;` },
    define: threadDefines(options),
    plugins: [sourcePatchPlugin(PDFJS_SOURCE_PATCHES), moduleSubstitutePlugin([NAPI_CANVAS_BINDING_SUBSTITUTE])],
  })
  checkExternals(result.metafile)
  checkBundle(fs.readFileSync(options.outfile, 'utf8'))
  return { outfile: options.outfile, bytes: fs.statSync(options.outfile).size, metafile: result.metafile }
}

/** What every bundle inside the SEA is built with. */
function seaBundleOptions(options: { entry: string; outfile: string }) {
  return {
    entryPoints: [options.entry],
    outfile: options.outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    // The SEA main script is CommonJS (Node's single executable applications run one CommonJS script); bundle() defines import.meta.url.
    format: 'cjs',
    // Nothing external: inside the SEA there is no node_modules to fall back on.
    external: [],
    // Identifiers are kept so that checkBundle() can still recognise require() and
    // stack traces stay readable; whitespace and syntax minification do the rest.
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: false,
    legalComments: 'none',
    sourcemap: false,
    metafile: true,
    logLevel: 'warning',
  } satisfies esbuild.BuildOptions
}

/**
 * The inference threads' code (src/providers/local/inference-worker.ts), bundled on its own:
 * a worker thread of a SEA runs from source text (new Worker(text, {eval: true})), and only
 * these threads load onnxruntime, so the server's bundle carries none of it. CommonJS, every
 * package inside, checked like the main bundle.
 */
export async function bundleInferenceWorker(options: WorkerBundleOptions): Promise<BundleResult> {
  const result = await esbuild.build({
    ...seaBundleOptions(options),
    plugins: [moduleSubstitutePlugin([ONNX_BINDING_SUBSTITUTE])],
  })
  checkExternals(result.metafile)
  checkBundle(fs.readFileSync(options.outfile, 'utf8'))
  const inputs = Object.keys(result.metafile.inputs)
  if (inputs.some((input) => /onnxruntime-node[\\/]dist[\\/]binding\.js$/.test(input)))
    throw new Error(
      "the inference worker bundle still holds onnxruntime-node's binding.js: the substitute did not apply",
    )
  return { outfile: options.outfile, bytes: fs.statSync(options.outfile).size, metafile: result.metafile }
}

export async function bundle(options: BundleOptions): Promise<BundleResult> {
  const result = await esbuild.build({
    ...seaBundleOptions(options),
    banner: { js: BANNER },
    // import() becomes a require() in a promise: Node cannot run a script with import() from the SEA's
    // code cache (scripts/build/sea.ts), and everything is in the bundle or a builtin anyway.
    supported: { 'dynamic-import': false },
    define: {
      'import.meta.url': IMPORT_META_URL_VARIABLE,
      __MEMSVC_VERSION__: JSON.stringify(options.version),
      __MEMSVC_UWS_VERSION__: JSON.stringify(options.uwsVersion),
    },
    plugins: [
      sourcePatchPlugin(SOURCE_PATCHES),
      moduleSubstitutePlugin([...MODULE_SUBSTITUTES, NAPI_CANVAS_BINDING_SUBSTITUTE]),
    ],
  })
  checkExternals(result.metafile)
  checkBundle(fs.readFileSync(options.outfile, 'utf8'))
  return { outfile: options.outfile, bytes: fs.statSync(options.outfile).size, metafile: result.metafile }
}

/** Everything esbuild itself left external must be a builtin. */
function checkExternals(metafile: esbuild.Metafile): void {
  const offenders = new Set<string>()
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) {
      if (imported.external && !isBuiltin(imported.path)) offenders.add(`${imported.path} (${imported.kind})`)
    }
  }
  if (offenders.size > 0)
    throw new Error(`the bundle leaves non-builtin modules external: ${[...offenders].join(', ')}`)
}

/** `require("x")` / `import("x")` not preceded by a dot or identifier character (so not a method call). */
const LITERAL_LOAD = /(?<![\w$.])(require|import)\s*\(\s*(["'`])([^"'`]+)\2\s*\)/g
/** A bare require(...) whose argument is not a string literal: nothing could satisfy it in a SEA. */
const COMPUTED_REQUIRE = /(?<![\w$.])require\s*\(\s*(?!["'`)])/g
const CONTEXT_CHARS = 60

/**
 * Scans the bundle text for loads esbuild could not see (for example a require made
 * by createRequire). Inside a SEA these would fail at run time, so they fail the build.
 */
export function checkBundle(code: string): void {
  const problems: string[] = []
  for (const match of code.matchAll(LITERAL_LOAD)) {
    const [, kind, , specifier] = match
    if (!isBuiltin(specifier!)) problems.push(`${kind}("${specifier}") near: ${excerpt(code, match.index)}`)
  }
  for (const match of code.matchAll(COMPUTED_REQUIRE)) {
    if (isMethodDefinition(code, match.index + match[0].length - 1)) continue
    problems.push(`computed require() near: ${excerpt(code, match.index)}`)
  }
  if (problems.length > 0) {
    throw new Error(`the bundle loads modules that a standalone executable cannot reach:\n  ${problems.join('\n  ')}`)
  }
}

/** `require(a, b) {` is a method named require (yargs has one), not a call. */
function isMethodDefinition(code: string, openParen: number): boolean {
  let depth = 0
  for (let index = openParen; index < code.length; index++) {
    const char = code[index]
    if (char === '(') depth++
    else if (char === ')' && --depth === 0) return /^\s*\{/.test(code.slice(index + 1, index + 16))
  }
  return false
}

function excerpt(code: string, index: number): string {
  return JSON.stringify(code.slice(Math.max(0, index - CONTEXT_CHARS), index + CONTEXT_CHARS))
}
