// A CPU profile of a time window of a running server, through its inspector (the Chrome
// DevTools protocol's Profiler domain): what `--cpu-prof` cannot give, since it profiles a
// process's whole life. The soak takes its first and its last 30 s this way, to compare.
// The server must run with --inspect=127.0.0.1:0 (the harness adds it under --cpu-prof);
// it prints the address it listens on to stderr.
import fs from 'node:fs'
import path from 'node:path'
import { sleep } from './processes.js'

/** `Debugger listening on ws://127.0.0.1:PORT/UUID`, as Node prints it. */
const INSPECTOR_LINE = /Debugger listening on (ws:\/\/\S+)/
/** V8's sampling interval, as --cpu-prof uses by default. */
const SAMPLING_INTERVAL_US = 1000
const COMMAND_TIMEOUT_MS = 30_000
const MS_PER_SECOND = 1000

export const inspectorUrl = (serverLog: string) => INSPECTOR_LINE.exec(serverLog)?.[1]

/** Profiles the process behind `url` for `seconds` and writes the .cpuprofile to `file`. */
export async function profileWindow(url: string, seconds: number, file: string): Promise<void> {
  const profiler = await startProfiler(url)
  await sleep(seconds * MS_PER_SECOND)
  await profiler.stop(file)
}

/**
 * Starts profiling the process behind `url`; `stop` writes the .cpuprofile to `file`. For a
 * window whose length is known only when it ends (an export, an import).
 */
export async function startProfiler(url: string): Promise<{ stop(file: string): Promise<void> }> {
  const socket = new WebSocket(url)
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true })
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true })
  })
  let nextId = 1
  const pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>()
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } }
    const waiter = message.id === undefined ? undefined : pending.get(message.id)
    if (!waiter) return
    pending.delete(message.id!)
    if (message.error) waiter.reject(new Error(message.error.message))
    else waiter.resolve(message.result)
  })
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => reject(new Error(`inspector: ${method} timed out`)), COMMAND_TIMEOUT_MS)
      pending.set(id, {
        resolve: (result) => {
          clearTimeout(timer)
          resolve(result)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        },
      })
      socket.send(JSON.stringify({ id, method, params }))
    })
  try {
    await send('Profiler.enable')
    await send('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US })
    await send('Profiler.start')
  } catch (error) {
    socket.close()
    throw error
  }
  return {
    async stop(file) {
      try {
        const { profile } = (await send('Profiler.stop')) as { profile: unknown }
        fs.mkdirSync(path.dirname(file), { recursive: true })
        fs.writeFileSync(file, JSON.stringify(profile))
        await send('Profiler.disable')
      } finally {
        socket.close()
      }
    },
  }
}
