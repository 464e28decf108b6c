// Bundles the web console (src/console) into the three files the server embeds as SEA
// assets (src/runtime/asset-manifest.ts): one JS file, one CSS file and index.html.
// The server hashes the JS and CSS when it serves them; index.html carries
// placeholders for those hashed names.
import fs from 'node:fs'
import path from 'node:path'
import * as esbuild from 'esbuild'

export interface ConsoleBundleOptions {
  /** src/console */
  sourceDir: string
  /** dist/console */
  outDir: string
}

export interface ConsoleBundleResult {
  script: string
  style: string
  index: string
  /** JS + CSS bytes. */
  bytes: number
}

/** Anything that would make the browser reach another host, or need an inline-code CSP exception. */
const FORBIDDEN_IN_CSS = [/@import\b/i, /url\(\s*["']?(?!data:)[a-z][a-z0-9+.-]*:/i]
const FORBIDDEN_IN_HTML = [
  /<script(?![^>]*\bsrc=)[^>]*>/i,
  /<style\b/i,
  /\sstyle\s*=/i,
  /\son[a-z]+\s*=/i,
  /(?:src|href)\s*=\s*["'](?:https?:)?\/\//i,
]

export async function bundleConsole(options: ConsoleBundleOptions): Promise<ConsoleBundleResult> {
  fs.mkdirSync(options.outDir, { recursive: true })
  const script = path.join(options.outDir, 'console.js')
  const style = path.join(options.outDir, 'console.css')
  const index = path.join(options.outDir, 'index.html')
  const common: esbuild.BuildOptions = {
    bundle: true,
    minify: true,
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'warning',
    charset: 'utf8',
  }
  await esbuild.build({
    ...common,
    entryPoints: [path.join(options.sourceDir, 'main.ts')],
    outfile: script,
    platform: 'browser',
    format: 'iife',
    target: ['chrome110', 'firefox115', 'safari16'],
  })
  await esbuild.build({
    ...common,
    entryPoints: [path.join(options.sourceDir, 'styles.css')],
    outfile: style,
    external: [],
  })

  const css = fs.readFileSync(style, 'utf8')
  const html = fs.readFileSync(path.join(options.sourceDir, 'index.html'), 'utf8')
  for (const pattern of FORBIDDEN_IN_CSS)
    if (pattern.test(css)) throw new Error(`console CSS matches ${pattern}: it may only use its own files`)
  for (const pattern of FORBIDDEN_IN_HTML)
    if (pattern.test(html))
      throw new Error(`console index.html matches ${pattern}: no inline code and no other hosts (CSP)`)
  fs.writeFileSync(index, html)
  return { script, style, index, bytes: fs.statSync(script).size + fs.statSync(style).size }
}
