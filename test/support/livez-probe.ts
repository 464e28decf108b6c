import { spawn } from 'node:child_process'
/**
 * Asks /livez again and again while a test loads the server, recording the slowest answer:
 * a server whose event loop is held up by its load answers late or not at all.
 */
export interface LivezProbe {
  /** Stops asking; resolves with the slowest answer in ms and how many were asked. */
  stop(): Promise<{ slowestMs: number; answered: number; failed: number }>
}

/** Between two questions, so the probe itself is no load. */
const PROBE_INTERVAL_MS = 100
/** A probe that has not answered by then counts as failed (and the slowest is at least this). */
const PROBE_TIMEOUT_MS = 10_000

export function probeLivez(restUrl: string): LivezProbe {
  let running = true
  let slowestMs = 0
  let answered = 0
  let failed = 0
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      try {
        const response = await fetch(`${restUrl}/livez`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
        await response.arrayBuffer()
        if (response.ok) answered++
        else failed++
      } catch {
        failed++
      }
      slowestMs = Math.max(slowestMs, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return { slowestMs, answered, failed }
    },
  }
}

/**
 * The same probe from a child process: its answer times are the server's alone, where a probe in
 * the test's own process would also count the test's work (building and sending a 40 MiB body)
 * against a server that runs in another process. The child asks until its standard input closes,
 * then prints its figures as one JSON line.
 */
export function probeLivezFromChild(restUrl: string): LivezProbe {
  const script = `
    let running = true, slowestMs = 0, answered = 0, failed = 0
    process.stdin.on('end', () => { running = false })
    process.stdin.resume()
    while (running) {
      const started = performance.now()
      try {
        const response = await fetch(${JSON.stringify(`${restUrl}/livez`)}, { signal: AbortSignal.timeout(${PROBE_TIMEOUT_MS}) })
        await response.arrayBuffer()
        if (response.ok) answered++; else failed++
      } catch { failed++ }
      slowestMs = Math.max(slowestMs, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, ${PROBE_INTERVAL_MS}))
    }
    process.stdout.write(JSON.stringify({ slowestMs, answered, failed }) + '\\n')
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  let output = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  return {
    async stop() {
      child.stdin!.end()
      await exited
      return JSON.parse(output) as { slowestMs: number; answered: number; failed: number }
    },
  }
}
