/**
 * Where start-up time went, from the process's own start (performance.now() counts from it)
 * to READY: one span per phase, logged with the READY line so that an operator, and the
 * bench, can see which phase a slow start spent its time in. Phases may overlap (the
 * database opens while the listeners bind), so their durations need not add up to the total.
 */
export interface StartupSpan {
  name: string
  /** Milliseconds after the process started. */
  startMs: number
  durationMs: number
}

/**
 * The executable's bundle records when its first line runs (scripts/build/bundle.ts), which
 * separates Node's own boot (with loading the script) from evaluating the bundle's modules.
 */
declare global {
  var __memsvcBundleStartMs: number | undefined
}

export class StartupTimeline {
  readonly spans: StartupSpan[] = []

  /**
   * @param originMs where the start-up began (performance.now()): 0, the process's start, for
   * `memsvc serve`; the call to startServer for a server started inside a running process.
   */
  constructor(readonly originMs = performance.now()) {}

  /** Milliseconds from the origin until now. */
  elapsedMs(): number {
    return performance.now() - this.originMs
  }

  /** Runs `work` as the phase `name`, recording it whether it succeeds or not. */
  async time<T>(name: string, work: () => T | Promise<T>): Promise<T> {
    const startMs = performance.now()
    try {
      return await work()
    } finally {
      this.add(name, startMs, performance.now())
    }
  }

  /** The synchronous form of `time`. */
  timeSync<T>(name: string, work: () => T): T {
    const startMs = performance.now()
    try {
      return work()
    } finally {
      this.add(name, startMs, performance.now())
    }
  }

  /** A phase measured by its caller, from `startMs` until `endMs` (both performance.now()). */
  add(name: string, startMs: number, endMs = performance.now()): void {
    this.spans.push({ name, startMs, durationMs: endMs - startMs })
  }

  /**
   * The process's phases before any memsvc code ran: Node's boot and the bundle's load
   * ("runtime"), then the bundle's modules up to `mainStartMs` ("modules"). Only the
   * executable knows where one ends and the other begins; from source both are "runtime".
   */
  addProcessPhases(mainStartMs: number): void {
    const bundleStartMs = globalThis.__memsvcBundleStartMs
    if (bundleStartMs === undefined) {
      this.add('runtime', 0, mainStartMs)
      return
    }
    this.add('runtime', 0, bundleStartMs)
    this.add('modules', bundleStartMs, mainStartMs)
  }

  /** For the READY log line: `name:ms,name:ms,…` in the order the phases began. */
  summary(): string {
    return [...this.spans]
      .sort((a, b) => a.startMs - b.startMs)
      .map((span) => `${span.name}:${Math.round(span.durationMs)}`)
      .join(',')
  }
}
