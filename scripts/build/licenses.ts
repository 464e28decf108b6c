// Gathers the licence texts of everything the executable contains: the packages
// esbuild bundled (read from its metafile, so the list is exact), the packages whose
// files are embedded as SEA assets (PGlite's wasm and data), the uWebSockets.js sources
// the addon is compiled from, PostgreSQL (compiled into PGlite's wasm) and Node.js (the
// executable is a node binary; its LICENSE covers the OpenSSL, zlib and libuv the addon uses).
import fs from 'node:fs'
import path from 'node:path'
import type { Metafile } from 'esbuild'
import { THIRD_PARTY_INDEX } from '../../src/domain/licenses.js'
import { readUwsSources, UWS_SOURCE_DIR } from './uws-addon.js'

export interface LicenseText {
  /** The file it came from, for the reader who wants to check. */
  source: string
  text: string
}

export interface Notice {
  name: string
  version: string
  /** SPDX expression. */
  license: string
  includedAs: string
  texts: LicenseText[]
}

/** The index the server counts (src/domain/licenses.ts reads it). */
export interface IndexEntry {
  name: string
  version: string
  license: string
}

const LICENSE_FILE = /^(licen[cs]e|copying|notice|copyright|unlicense)([-._].*)?$/i
const TEXTS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'license-texts')

interface VendoredText {
  file: string
  /** Where the text was taken from. */
  origin: string
  /** A file inside the package whose leading comment holds a further notice. */
  noticeInPackage?: string
}

/**
 * Packages that publish no licence file to npm. Their texts are kept in
 * scripts/build/license-texts; a new package without one fails the build.
 */
const VENDORED_TEXTS: Record<string, VendoredText> = {
  '@bufbuild/protobuf': {
    file: 'bufbuild-protobuf.txt',
    origin: 'LICENSE of github.com/bufbuild/protobuf-es',
    // "(Apache-2.0 AND BSD-3-Clause)": the BSD part is Google's protobuf code, whose
    // notice the package carries only as a source comment.
    noticeInPackage: 'dist/cjs/wire/varint.js',
  },
  postgres: { file: 'postgres-unlicense.txt', origin: 'the Unlicense, as declared in package.json' },
  // Both are published from github.com/microsoft/onnxruntime (js/node, js/common) under its LICENSE.
  'onnxruntime-node': { file: 'onnxruntime-LICENSE.txt', origin: 'LICENSE of github.com/microsoft/onnxruntime' },
  'onnxruntime-common': { file: 'onnxruntime-LICENSE.txt', origin: 'LICENSE of github.com/microsoft/onnxruntime' },
  // The bundled English OCR model: the package says MIT (no file); the model is the Tesseract project's (Apache-2.0).
  '@tesseract.js-data/eng': {
    file: 'tesseract-js-data-eng.txt',
    origin: 'the MIT licence as declared in package.json, and the Apache-2.0 of the Tesseract model inside',
  },
  // The skia addon's platform package, published from github.com/Brooooooklyn/canvas like @napi-rs/canvas (MIT).
  '@napi-rs/canvas-linux-x64-gnu': {
    file: 'napi-rs-canvas-LICENSE.txt',
    origin: 'LICENSE of @napi-rs/canvas 1.1.1, published from the same repository, github.com/Brooooooklyn/canvas',
  },
}

const POSTGRESQL_COPYRIGHT = 'PostgreSQL-COPYRIGHT.txt'
/** PGlite's wasm carries PostgreSQL's version string, e.g. "PostgreSQL 18.6 (PGlite 0.5.14)". */
const POSTGRESQL_VERSION = /PostgreSQL (\d+\.\d+) \(PGlite/

/** Where Node's own LICENSE (with its bundled dependencies' licences) is usually installed. */
function nodeLicenseCandidates(nodeBinary: string): string[] {
  const prefix = path.resolve(path.dirname(fs.realpathSync(nodeBinary)), '..')
  return [
    process.env.NODE_LICENSE_FILE ?? '',
    path.join(prefix, 'share', 'doc', 'node', 'LICENSE'), // nodejs.org tarballs
    path.join(prefix, 'share', 'doc', 'nodejs', 'LICENSE'), // NodeSource / Debian packages
    '/usr/share/doc/nodejs/LICENSE',
    path.join(prefix, 'LICENSE'),
  ].filter(Boolean)
}

/** node_modules/a/node_modules/@s/b/lib/x.js → node_modules/a/node_modules/@s/b */
export function packageDirOf(file: string): string | undefined {
  const normalised = file.split(path.sep).join('/')
  const marker = normalised.lastIndexOf('node_modules/')
  if (marker === -1) return undefined
  const rest = normalised.slice(marker + 'node_modules/'.length).split('/')
  const depth = rest[0]?.startsWith('@') ? 2 : 1
  return `${normalised.slice(0, marker)}node_modules/${rest.slice(0, depth).join('/')}`
}

/** Package directories (relative to root) of every bundled input file. */
export function bundledPackageDirs(metafile: Metafile): string[] {
  const dirs = new Set<string>()
  for (const input of Object.keys(metafile.inputs)) {
    const dir = packageDirOf(input)
    if (dir) dirs.add(dir)
  }
  return [...dirs].sort()
}

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T
}

interface PackageJson {
  name: string
  version: string
  license?: string | { type: string }
  licenses?: Array<{ type: string }>
}

function spdxOf(manifest: PackageJson): string {
  if (typeof manifest.license === 'string') return manifest.license
  if (manifest.license?.type) return manifest.license.type
  if (manifest.licenses?.length) return manifest.licenses.map((entry) => entry.type).join(' OR ')
  return 'UNKNOWN'
}

/** The consecutive `//` comment lines at the top of a file (after "use strict"). */
function leadingComment(file: string): string {
  const lines = fs.readFileSync(file, 'utf8').split('\n')
  const start = lines.findIndex((line) => line.startsWith('//'))
  const comment: string[] = []
  for (const line of lines.slice(start)) {
    if (!line.startsWith('//')) break
    comment.push(line.replace(/^\/\/ ?/, ''))
  }
  return comment.join('\n').trim()
}

function packageTexts(root: string, dir: string, manifest: PackageJson): LicenseText[] {
  const absolute = path.join(root, dir)
  const files = fs
    .readdirSync(absolute)
    .filter((name) => LICENSE_FILE.test(name) && fs.statSync(path.join(absolute, name)).isFile())
  if (files.length > 0) {
    return files
      .sort()
      .map((name) => ({ source: `${dir}/${name}`, text: fs.readFileSync(path.join(absolute, name), 'utf8').trim() }))
  }
  const vendored = VENDORED_TEXTS[manifest.name]
  if (!vendored) {
    throw new Error(
      `${manifest.name}@${manifest.version} (${dir}) ships no licence file; ` +
        `add its text to scripts/build/license-texts and to VENDORED_TEXTS in scripts/build/licenses.ts`,
    )
  }
  const texts = [
    {
      source: `scripts/build/license-texts/${vendored.file} (${vendored.origin})`,
      text: fs.readFileSync(path.join(TEXTS_DIR, vendored.file), 'utf8').trim(),
    },
  ]
  if (vendored.noticeInPackage) {
    texts.push({
      source: `${dir}/${vendored.noticeInPackage} (leading comment)`,
      text: leadingComment(path.join(absolute, vendored.noticeInPackage)),
    })
  }
  return texts
}

export function packageNotice(root: string, dir: string, includedAs: string): Notice {
  const manifest = readJson<PackageJson>(path.join(root, dir, 'package.json'))
  // An npm alias ("name": "npm:other@1.0.0") installs a package under another name;
  // say so, since that is the name people know it by.
  const installedAs = dir.slice(dir.lastIndexOf('node_modules/') + 'node_modules/'.length)
  const alias = installedAs === manifest.name ? '' : ` (installed as ${installedAs})`
  return {
    name: manifest.name,
    version: manifest.version,
    license: spdxOf(manifest),
    includedAs: includedAs + alias,
    texts: packageTexts(root, dir, manifest),
  }
}

/** PostgreSQL itself, which PGlite compiles to wasm; PGlite's package does not carry its licence. */
export function postgresqlNotice(root: string, pgliteWasm: string): Notice {
  const match = POSTGRESQL_VERSION.exec(fs.readFileSync(path.join(root, pgliteWasm), 'latin1'))
  if (!match) throw new Error(`cannot find the PostgreSQL version in ${pgliteWasm}`)
  return {
    name: 'PostgreSQL',
    version: match[1]!,
    license: 'PostgreSQL',
    includedAs: 'compiled to WebAssembly inside PGlite (embedded database)',
    texts: [
      {
        source: `scripts/build/license-texts/${POSTGRESQL_COPYRIGHT} (COPYRIGHT of the PostgreSQL source tree)`,
        text: fs.readFileSync(path.join(TEXTS_DIR, POSTGRESQL_COPYRIGHT), 'utf8').trim(),
      },
    ],
  }
}

/**
 * Libraries compiled into PGlite's wasm and its vector extension, whose npm packages ship
 * no notice for them: the Emscripten runtime with musl, and pgvector. Their texts are kept in license-texts/.
 */
const COMPILED_IN: Array<{ name: string; license: string; includedAs: string; file: string; origin: string }> = [
  {
    name: 'Emscripten runtime',
    license: 'MIT OR NCSA',
    includedAs: "compiled into PGlite's WebAssembly (embedded database)",
    file: 'emscripten-LICENSE.txt',
    origin: 'LICENSE of github.com/emscripten-core/emscripten',
  },
  {
    name: 'musl libc',
    license: 'MIT',
    includedAs: "C library compiled into PGlite's WebAssembly by Emscripten",
    file: 'musl-COPYRIGHT.txt',
    origin: 'system/lib/libc/musl/COPYRIGHT of the Emscripten source tree',
  },
  {
    name: 'pgvector',
    license: 'PostgreSQL',
    includedAs:
      "compiled into @electric-sql/pglite-pgvector's extension bundle (vector search in the embedded database)",
    file: 'pgvector-LICENSE.txt',
    origin: 'LICENSE of the pgvector v0.8.6 source release (third_party/pgvector-0.8.6.tar.gz)',
  },
]

export function compiledInNotices(): Notice[] {
  return COMPILED_IN.map((entry) => ({
    name: entry.name,
    version: 'as compiled into its host package',
    license: entry.license,
    includedAs: entry.includedAs,
    texts: [
      {
        source: `scripts/build/license-texts/${entry.file} (${entry.origin})`,
        text: fs.readFileSync(path.join(TEXTS_DIR, entry.file), 'utf8').trim(),
      },
    ],
  }))
}

/**
 * uWebSockets.js, uWebSockets and uSockets: compiled by the build into the native addon
 * from the archives in third_party/uWebSockets.js, each of which carries this LICENSE.
 */
export function uwsNotices(root: string): Notice[] {
  const licenseFile = path.join(UWS_SOURCE_DIR, 'LICENSE')
  const text = fs.readFileSync(path.join(root, licenseFile), 'utf8').trim()
  return readUwsSources(root).archives.map((archive) => ({
    name: archive.name,
    version: archive.topDir.slice(archive.name.length + 1),
    license: 'Apache-2.0',
    includedAs:
      'compiled into the native HTTP addon (REST listener), with the changes in third_party/uWebSockets.js/NOTES.md',
    texts: [{ source: `${licenseFile} (LICENSE of ${archive.file}; the three archives carry the same text)`, text }],
  }))
}

/** Node.js: the executable is a copy of the node binary. */
export function nodeNotice(nodeBinary: string, nodeVersion: string): Notice {
  const candidates = nodeLicenseCandidates(nodeBinary)
  const file = candidates.find(
    (candidate) => fs.existsSync(candidate) && fs.readFileSync(candidate, 'utf8').startsWith('Node.js is licensed'),
  )
  if (!file) {
    throw new Error(
      `cannot find the Node.js LICENSE (looked at ${candidates.join(', ')}); set NODE_LICENSE_FILE to its path`,
    )
  }
  return {
    name: 'Node.js',
    version: nodeVersion,
    license: 'MIT',
    includedAs: 'runtime: the executable is a copy of the node binary (its LICENSE covers the libraries Node bundles)',
    texts: [{ source: file, text: fs.readFileSync(file, 'utf8').trim() }],
  }
}

/** Same name and version reached through several node_modules paths: keep one. */
export function dedupe(notices: Notice[]): Notice[] {
  const byKey = new Map<string, Notice>()
  for (const notice of notices) {
    const key = `${notice.name}@${notice.version}`
    const seen = byKey.get(key)
    if (seen && !seen.includedAs.includes(notice.includedAs)) seen.includedAs += `; ${notice.includedAs}`
    if (!seen) byKey.set(key, { ...notice })
  }
  return [...byKey.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version))
}

/** A code fence longer than any backtick run in the text, so no licence can end it early. */
function fenceFor(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length))
  return '`'.repeat(longest + 1)
}

export function noticesMarkdown(product: string, notices: Notice[]): string {
  const lines = [
    '# Third-party notices',
    '',
    `${product} contains the following third-party software. Each entry gives the licence under which it is`,
    'used and the full licence and notice texts that came with it.',
    '',
    '| Package | Version | Licence | Included as |',
    '|---|---|---|---|',
    ...notices.map(
      (notice) =>
        `| ${notice.name} | ${notice.version} | ${notice.license} | ${notice.includedAs.replaceAll('|', '\\|')} |`,
    ),
    '',
  ]
  for (const notice of notices) {
    lines.push(
      '---',
      '',
      `## ${notice.name} ${notice.version}`,
      '',
      `Licence: ${notice.license}. Included as: ${notice.includedAs}.`,
      '',
    )
    for (const { source, text } of notice.texts) {
      const fence = fenceFor(text)
      lines.push(`From \`${source}\`:`, '', `${fence}text`, text, fence, '')
    }
  }
  return lines.join('\n')
}

export function writeLicenseDir(target: string, productLicense: string, product: string, notices: Notice[]): void {
  fs.rmSync(target, { recursive: true, force: true })
  fs.mkdirSync(target, { recursive: true })
  fs.copyFileSync(productLicense, path.join(target, 'LICENSE'))
  fs.writeFileSync(path.join(target, 'THIRD_PARTY_NOTICES.md'), noticesMarkdown(product, notices))
  const index: IndexEntry[] = notices.map(({ name, version, license }) => ({ name, version, license }))
  fs.writeFileSync(path.join(target, THIRD_PARTY_INDEX), `${JSON.stringify(index, null, 2)}\n`)
}

/** Licence files that a package ships inside a directory memsvc embeds whole (pdfjs-dist's fonts and wasm decoders). */
const EMBEDDED_LICENSE_FILE = /^licen[cs]e([-._].*)?$/i

/**
 * The licences of third-party works inside the directories the executable embeds file by file
 * (src/runtime/asset-manifest.ts, ASSET_DIRECTORIES): pdfjs-dist's standard fonts (Foxit, Liberation)
 * and its WebAssembly decoders (OpenJPEG, PDFium's JBIG2, qcms, QuickJS), each of which carries its
 * own LICENSE_* file beside it. One notice per file, named after it.
 */
export function embeddedLicenseFileNotices(root: string, directories: string[]): Notice[] {
  return directories.flatMap((directory) => {
    const packageDir = packageDirOf(directory)
    const manifest = packageDir ? readJson<PackageJson>(path.join(root, packageDir, 'package.json')) : undefined
    return fs
      .readdirSync(path.join(root, directory))
      .filter((name) => EMBEDDED_LICENSE_FILE.test(name))
      .sort()
      .map((name) => ({
        name: `${path.basename(directory)}/${name.replace(/^licen[cs]e[-._]?/i, '') || 'LICENSE'}`,
        version: manifest ? `in ${manifest.name} ${manifest.version}` : 'as embedded',
        license: 'see text',
        includedAs: `embedded file(s) of ${directory} covered by ${name}`,
        texts: [
          { source: `${directory}/${name}`, text: fs.readFileSync(path.join(root, directory, name), 'utf8').trim() },
        ],
      }))
  })
}

interface CycloneDxComponent {
  name?: string
  version?: string
  licenses?: Array<{ license?: { id?: string; name?: string }; expression?: string }>
}

/** Native addons whose npm package lists what is compiled into them in a CycloneDX SBOM. */
const ADDON_SBOMS = [
  {
    addon: '@napi-rs/canvas (skia.linux-x64-gnu.node)',
    sbom: 'node_modules/@napi-rs/canvas-linux-x64-gnu/sbom.cdx.json',
  },
]

/**
 * What is compiled into the native addons, as their SBOMs list it (name, version, SPDX), in one
 * notice per addon: the Rust crates and C/C++ libraries (Skia among them) of @napi-rs/canvas. The
 * SBOM carries identifiers, not texts; the notice says so and names the SBOM file.
 */
export function compiledIntoAddonNotices(root: string): Notice[] {
  return ADDON_SBOMS.map(({ addon, sbom }) => {
    const document = readJson<{ components?: CycloneDxComponent[] }>(path.join(root, sbom))
    const rows = (document.components ?? [])
      .filter((component) => component.name)
      .map((component) => {
        const licenses = (component.licenses ?? [])
          .map((entry) => entry.expression ?? entry.license?.id ?? entry.license?.name)
          .filter(Boolean)
          .join(' AND ')
        return `${component.name} ${component.version ?? ''}: ${licenses || 'not stated in the SBOM'}`
      })
    return {
      name: `components compiled into ${addon}`,
      version: 'as listed by its SBOM',
      license: 'see list',
      includedAs: `compiled into the native addon ${addon}`,
      texts: [
        {
          source: `${sbom} (CycloneDX SBOM shipped with the addon: component, version, SPDX licence)`,
          text: rows.join('\n'),
        },
      ],
    }
  })
}
