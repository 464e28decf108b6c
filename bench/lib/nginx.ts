// A local nginx load balancer in front of memsvc processes (the processes benchmark). Its
// configuration, pid file, logs and temp dirs live in a directory of the run; it listens on
// 127.0.0.1 only and runs with `daemon off`, so its master is a child the harness tracks and
// stops like any other (also on Ctrl-C); its workers are stopped by pid if the master went first.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { childPids, cpuSeconds } from './machine.js'
import { onCleanup, sleep, spawnTracked, stopProcess } from './processes.js'

export const NGINX = '/usr/sbin/nginx'
/** One worker: on two cores a second would compete with the servers it balances for the same cores. */
const WORKER_PROCESSES = 1
/**
 * Idle upstream connections each worker keeps open: as many as wrk holds to nginx, so that no
 * request pays for a new connection to memsvc.
 */
const UPSTREAM_KEEPALIVE = 64
const READY_TIMEOUT_MS = 10_000
const READY_POLL_MS = 20
/** The harness stops nginx long before this; it only bounds a stuck run. */
const LIFETIME_MS = 60 * 60 * 1000
const TEMP_DIRS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']

export interface RunningNginx {
  /** The load balancer's address: http://127.0.0.1:PORT */
  url: string
  pid: number
  /** CPU seconds of the master and its workers so far. */
  cpuSeconds(): number
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

function configuration(dir: string, port: number, upstreams: string[]): string {
  return `daemon off;
master_process on;
worker_processes ${WORKER_PROCESSES};
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
${TEMP_DIRS.map((name) => `  ${name}_temp_path ${path.join(dir, name)};`).join('\n')}
  upstream memsvc {
${upstreams.map((address) => `    server ${address};`).join('\n')}
    keepalive ${UPSTREAM_KEEPALIVE};
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://memsvc;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`
}

/** Starts nginx balancing round-robin over `upstreams` (host:port each) and waits until it answers /readyz. */
export async function startNginx(dir: string, upstreams: string[]): Promise<RunningNginx> {
  // Run as root, the workers drop to nobody; the small bodies here stay in their memory
  // buffers, so they never need the temp dirs, which nginx still insists on creating.
  fs.mkdirSync(dir, { recursive: true })
  const port = await freePort()
  const configFile = path.join(dir, 'nginx.conf')
  fs.writeFileSync(configFile, configuration(dir, port, upstreams))
  const child = spawnTracked(NGINX, ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', configFile], {
    timeoutMs: LIFETIME_MS,
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const pid = child.pid!
  const workers = new Set<number>()
  const noteWorkers = () => {
    for (const worker of childPids(pid)) workers.add(worker)
  }
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      noteWorkers()
      // SIGTERM: the master stops its workers and waits for them.
      await stopProcess(child)
      // A worker outliving its master (killed, not stopped) would hold the port: end it by its pid, at once.
      for (const worker of workers) if (processName(worker) === 'nginx') process.kill(worker, 'SIGKILL')
    })())
  onCleanup(stop)
  const url = `http://127.0.0.1:${port}`
  const deadline = performance.now() + READY_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}): ${output}${readLog(dir)}`)
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    )
    if (ready) break
    if (performance.now() > deadline)
      throw new Error(`nginx not answering within ${READY_TIMEOUT_MS} ms: ${readLog(dir)}`)
    await sleep(READY_POLL_MS)
  }
  noteWorkers()
  return {
    url,
    pid,
    cpuSeconds: () => [pid, ...childPids(pid)].reduce((sum, each) => sum + (cpuSeconds(each) ?? 0), 0),
    stop,
  }
}

function processName(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}

function readLog(dir: string): string {
  try {
    return fs.readFileSync(path.join(dir, 'error.log'), 'utf8').slice(-2000)
  } catch {
    return ''
  }
}
