// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): the functions with
// the most self time, and the most inclusive time, as shares of the busy (non-idle)
// samples; with --lines NAME, where inside functions called NAME their self time goes
// (V8's per-line ticks), which is how native calls and builtins such as JSON.stringify,
// counted as their caller's self time, show up.
// Usage: node --import tsx bench/tools/profile-summary.ts FILE [--top N] [--filter TEXT] [--lines NAME]
import fs from 'node:fs'
import path from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  children?: number[]
  hitCount?: number
  positionTicks?: Array<{ line: number; ticks: number }>
}
interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const DEFAULT_TOP = 30
/** Pseudo-frames V8 uses for time not spent running JavaScript. */
const IDLE_FRAMES = new Set(['(idle)', '(program)'])

const label = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url ? `${path.basename(url)}:${lineNumber + 1}` : ''
  return `${functionName || '(anonymous)'} ${file}`.trim()
}

function summarise(file: string, top: number, filter?: string, linesOf?: string): void {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  const selfUs = new Map<number, number>()
  for (const [index, id] of profile.samples.entries()) {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0))
  }
  let totalUs = 0
  let idleUs = 0
  for (const [id, us] of selfUs) {
    totalUs += us
    if (IDLE_FRAMES.has(byId.get(id)!.callFrame.functionName)) idleUs += us
  }
  const busyUs = totalUs - idleUs

  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!
    if (IDLE_FRAMES.has(node.callFrame.functionName)) continue
    self.set(label(node), (self.get(label(node)) ?? 0) + us)
    // Each label counts once per sample stack, however deep the recursion.
    const seen = new Set<string>()
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const name = label(byId.get(current)!)
      if (seen.has(name)) continue
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + us)
    }
  }
  const print = (title: string, table: Map<string, number>) => {
    console.log(`\n${title}`)
    const rows = [...table]
      .filter(([name]) => !filter || name.includes(filter))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
    for (const [name, us] of rows)
      console.log(
        `${((100 * us) / busyUs).toFixed(1).padStart(6)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`,
      )
  }
  console.log(
    `${file}: ${(totalUs / 1e6).toFixed(1)} s sampled, ${(busyUs / 1e6).toFixed(1)} s busy (${((100 * busyUs) / totalUs).toFixed(0)} %); shares are of busy time`,
  )
  print('self time', self)
  print('inclusive time', inclusive)
  if (linesOf) printLines(profile, linesOf)
}

/** Per-line ticks inside every function named `name`, with the source line when the file is readable. */
function printLines(profile: CpuProfile, name: string): void {
  const ticks = new Map<string, number>()
  let total = 0
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== name) continue
    for (const { line, ticks: count } of node.positionTicks ?? []) {
      const key = `${node.callFrame.url}\t${line}`
      ticks.set(key, (ticks.get(key) ?? 0) + count)
      total += count
    }
  }
  console.log(`\nself-time ticks by line in ${name} (${total} ticks)`)
  const sources = new Map<string, string[]>()
  for (const [key, count] of [...ticks].sort((a, b) => b[1] - a[1]).slice(0, DEFAULT_TOP)) {
    const [url, line] = key.split('\t') as [string, string]
    const file = url.startsWith('file://') ? new URL(url).pathname : url
    if (!sources.has(file)) sources.set(file, fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [])
    const text = (sources.get(file)![Number(line) - 1] ?? '').trim().slice(0, 110)
    console.log(`${((100 * count) / total).toFixed(1).padStart(6)} %  ${path.basename(file)}:${line}  ${text}`)
  }
}

// Piped into `head`: stop quietly once the reader has gone.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

const args = process.argv.slice(2)
const file = args.find((arg) => !arg.startsWith('--') && args[args.indexOf(arg) - 1]?.startsWith('--') !== true)
if (!file) {
  console.error('usage: profile-summary.ts FILE.cpuprofile [--top N] [--filter TEXT]')
  process.exit(2)
}
const option = (name: string) => {
  const index = args.indexOf(`--${name}`)
  return index === -1 ? undefined : args[index + 1]
}
summarise(file, Number(option('top') ?? DEFAULT_TOP), option('filter'), option('lines'))
