// Shared by the floor servers: argument parsing and the line the harness waits for.

/** `--name value` pairs; floors take only a few, all required. */
export function floorArgs(names: string[]): Record<string, string> {
  const argv = process.argv.slice(2)
  const values: Record<string, string> = {}
  for (let index = 0; index < argv.length; index += 2) {
    const name = argv[index]!.replace(/^--/, '')
    values[name] = argv[index + 1] ?? ''
  }
  for (const name of names) if (values[name] === undefined) throw new Error(`floor: --${name} is required`)
  return values
}

/** The harness reads this line from stdout to learn the port. */
export function announce(port: number): void {
  process.stdout.write(`BENCH_FLOOR_LISTENING port=${port}\n`)
}

/** Requests completed; `GET /__bench/count` serves it so the soak can sample a floor the way it samples /metrics. */
export const COUNT_PATH = '/__bench/count'

/** The harness stops floors with SIGTERM; exit at once, there is nothing to drain. */
export function exitOnSignal(close: () => void | Promise<void> = () => {}): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void Promise.resolve(close()).finally(() => process.exit(0))
    })
  }
}
