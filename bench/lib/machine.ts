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

/**
 * CPU seconds every PostgreSQL server process on this machine has used (backends, the
 * checkpointer, WAL writer…), read from /proc by process name. A difference of two readings
 * is the database's CPU over an interval; a backend that started in between counts from 0.
 */
export function postgresCpuSeconds(): number {
  let total = 0
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue
    } catch {
      continue // gone meanwhile
    }
    total += cpuSeconds(Number(entry)) ?? 0
  }
  return total
}
