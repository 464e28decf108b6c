// Peak memory, per phase of a run, of memsvc and of the PostgreSQL cluster beside it, read
// from /proc every few seconds. PostgreSQL's figure is the sum of the proportional set size
// (PSS, /proc/PID/smaps_rollup) of the postmaster and every process it started: shared
// buffers and a parallel index build's shared memory are counted once, not once per
// process that maps them, which a sum of RSS would do. Reading another user's
// smaps_rollup needs root (the benchmark machines run as root); without it the sum falls
// back to each process's private RSS (anonymous pages), which leaves the shared memory out.
import fs from 'node:fs'
import os from 'node:os'

const KIB_PER_MIB = 1024
/** /proc/PID/stat's fields after the command name's ") ": the parent's pid is the second. */
const STAT_PPID_FIELD = 1

export interface FootprintPeak {
  /** memsvc's RSS. */
  memsvcMiB: number
  /** The PostgreSQL cluster's processes, PSS summed (see above). */
  postgresMiB: number
  /** The whole machine's memory in use (MemTotal − MemAvailable): other work on the machine included. */
  machineUsedMiB: number
}

function statusKiB(pid: number, field: string): number | undefined {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${field}:`))
    return line === undefined ? undefined : Number.parseInt(line.slice(field.length + 1), 10)
  } catch {
    return undefined
  }
}

function pssKiB(pid: number): number | undefined {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('Pss:'))
    return line === undefined ? undefined : Number.parseInt(line.slice('Pss:'.length), 10)
  } catch {
    return statusKiB(pid, 'RssAnon')
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return Number(fields[STAT_PPID_FIELD])
  } catch {
    return undefined
  }
}

/** The postmaster and its children (backends, parallel workers, the checkpointer and the rest). */
export function postgresClusterMiB(postmasterPid: number): number {
  let kib = pssKiB(postmasterPid) ?? 0
  for (const entry of fs.readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === postmasterPid) continue
    if (parentOf(pid) === postmasterPid) kib += pssKiB(pid) ?? 0
  }
  return kib / KIB_PER_MIB
}

function machineUsedMiB(): number {
  const info = fs.readFileSync('/proc/meminfo', 'utf8')
  const available = /MemAvailable:\s+(\d+)/.exec(info)
  return available ? os.totalmem() / (KIB_PER_MIB * KIB_PER_MIB) - Number(available[1]) / KIB_PER_MIB : Number.NaN
}

/** The postmaster's pid: the parent of a backend this process is connected to. */
export function postmasterOf(backendPid: number): number {
  const parent = parentOf(backendPid)
  if (parent === undefined)
    throw new Error(`no /proc entry for PostgreSQL backend ${backendPid}: is it on this machine?`)
  return parent
}

/** Samples every `intervalMs` until stopped; `phase` names the part of the run later samples belong to. */
export class FootprintSampler {
  private readonly peaks = new Map<string, FootprintPeak>()
  private current = 'start'
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly memsvcPid: number,
    private readonly postmasterPid: number,
    intervalMs = 2_000,
  ) {
    this.sample()
    this.timer = setInterval(() => this.sample(), intervalMs)
    this.timer.unref()
  }

  phase(name: string): void {
    this.sample()
    this.current = name
    this.sample()
  }

  sample(): void {
    const now: FootprintPeak = {
      memsvcMiB: (statusKiB(this.memsvcPid, 'VmRSS') ?? 0) / KIB_PER_MIB,
      postgresMiB: postgresClusterMiB(this.postmasterPid),
      machineUsedMiB: machineUsedMiB(),
    }
    const peak = this.peaks.get(this.current)
    this.peaks.set(
      this.current,
      peak === undefined
        ? now
        : {
            memsvcMiB: Math.max(peak.memsvcMiB, now.memsvcMiB),
            postgresMiB: Math.max(peak.postgresMiB, now.postgresMiB),
            machineUsedMiB: Math.max(peak.machineUsedMiB, now.machineUsedMiB),
          },
    )
  }

  /** Peaks per phase, in the order the phases began. */
  stop(): Array<{ phase: string; peak: FootprintPeak }> {
    clearInterval(this.timer)
    this.sample()
    return [...this.peaks].map(([phase, peak]) => ({ phase, peak }))
  }

  /** memsvc's own high-water mark (VmHWM): its peak RSS since it started, between samples too. */
  memsvcHighWaterMiB(): number | undefined {
    const kib = statusKiB(this.memsvcPid, 'VmHWM')
    return kib === undefined ? undefined : kib / KIB_PER_MIB
  }
}
