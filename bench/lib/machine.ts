// What the machine was doing around the run, and how much memory a process holds.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'

export interface MachineLoad {
  at: string
  /** `uptime` as printed, for the report. */
  uptime: string
  loadavg: [number, number, number]
}

export function machineLoad(): MachineLoad {
  let uptime: string
  try {
    uptime = execFileSync('uptime', { encoding: 'utf8' }).trim()
  } catch {
    uptime = `up ${Math.round(os.uptime())} s` // procps missing: loadavg still says enough
  }
  const [one, five, fifteen] = os.loadavg() as [number, number, number]
  return { at: new Date().toISOString(), uptime, loadavg: [one, five, fifteen] }
}

const KIB = 1024
const MIB = 1024 * 1024

/** VmRSS of a live process in MiB (from /proc; undefined once it has gone). */
export function rssMiB(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
    return match ? (Number(match[1]) * KIB) / MIB : undefined
  } catch {
    return undefined
  }
}

/**
 * VmHWM of a live process in MiB: the most RSS it has held since it started, or since
 * resetPeakRss. Exact where a sampler can miss a peak between two samples.
 */
export function peakRssMiB(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? (Number(match[1]) * KIB) / MIB : undefined
  } catch {
    return undefined
  }
}

/** Value for /proc/PID/clear_refs that resets the process's VmHWM to its current RSS (Linux 4.0 and later). */
const CLEAR_REFS_RESET_PEAK_RSS = '5'

/** Starts peakRssMiB afresh from the RSS now; false where the kernel or the permissions do not allow it. */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, CLEAR_REFS_RESET_PEAK_RSS)
    return true
  } catch {
    return false
  }
}

export function cpuModel(): string {
  return os.cpus()[0]?.model ?? 'unknown'
}

/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ; 100 on Linux x86-64). */
const CLOCK_TICKS_PER_SECOND = 100

/** CPU seconds (user + system, all threads) a live process has used; undefined once it has gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may contain spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime are fields 14 and 15 of the whole line, i.e. 11 and 12 after the name.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

/** The direct children of a live process (from /proc; empty once it has gone). */
export function childPids(pid: number): number[] {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((text) => text !== '')
      .map(Number)
  } catch {
    return []
  }
}

/** CPU time the whole machine spent busy so far (every core, every process; /proc/stat), and its wall clock. */
export function machineBusySeconds(): number {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!
  // cpu  user nice system idle iowait irq softirq steal ...
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number)
  return (user! + nice! + system! + irq! + softirq! + steal!) / CLOCK_TICKS_PER_SECOND
}
