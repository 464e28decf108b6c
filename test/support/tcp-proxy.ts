// A TCP proxy a test can switch off and on, to make a database "go down" and "come
// back" without touching the real server.
import net from 'node:net'

export interface TcpProxy {
  port: number
  /** Forward new connections to the target. */
  enable(): void
  /** Reset every open connection and every new one until enabled again. */
  disable(): void
  /** Reset the next connection whose client sends bytes containing `marker`, once. */
  resetOnceWhenClientSends(marker: string): void
  close(): Promise<void>
}

export async function startTcpProxy(
  targetHost: string,
  targetPort: number,
  options: { enabled?: boolean } = {},
): Promise<TcpProxy> {
  let enabled = options.enabled ?? true
  let resetMarker: string | undefined
  const open = new Set<net.Socket>()
  const track = (socket: net.Socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
  }
  const server = net.createServer((client) => {
    if (!enabled) {
      client.resetAndDestroy()
      return
    }
    const upstream = net.connect(targetPort, targetHost)
    track(client)
    track(upstream)
    client.on('data', (chunk: Buffer) => {
      if (resetMarker === undefined || !chunk.includes(resetMarker)) return
      resetMarker = undefined
      client.resetAndDestroy()
      upstream.destroy()
    })
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const destroyAll = () => {
    for (const socket of open) socket.destroy()
    open.clear()
  }
  return {
    port: (server.address() as net.AddressInfo).port,
    enable() {
      enabled = true
    },
    disable() {
      enabled = false
      destroyAll()
    },
    resetOnceWhenClientSends(marker) {
      resetMarker = marker
    },
    close() {
      enabled = false
      destroyAll()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
