// Helpers for the install and release tests: a staged `system install --root`, the
// server's listening TCP ports as the kernel sees them, systemd-analyze, and a stand-in
// newer release bundle.
import { spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** stat of a path (not following a final symlink) as "mode uid:gid", e.g. "0640 0:0". */
export function modeAndOwner(file: string): string {
  const stat = fs.lstatSync(file)
  return `${(stat.mode & 0o7777).toString(8).padStart(4, '0')} ${stat.uid}:${stat.gid}`
}

/** Every path under `root`, relative, sorted; licences collapsed to their directory. */
export function listTree(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      found.push(path.relative(root, full))
      if (entry.isDirectory() && entry.name !== 'licenses') walk(full)
    }
  }
  walk(root)
  return found.sort()
}

const LISTEN_STATE = '0A'

/** TCP ports the process has in LISTEN state: its socket inodes matched against /proc/net/tcp{,6}. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>()
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1]!)
    } catch {
      // The descriptor closed while we looked.
    }
  }
  const ports = new Set<number>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields.length < 10 || fields[3] !== LISTEN_STATE || !inodes.has(fields[9]!)) continue
      ports.add(Number.parseInt(fields[1]!.split(':').pop()!, 16))
    }
  }
  return [...ports].sort((a, b) => a - b)
}

export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
}

/**
 * `systemd-analyze verify` with a staged root needs the host's own units there too
 * (sysinit.target and friends): they are copied in, symlinks as they are.
 */
export function provideSystemUnits(root: string): void {
  const target = path.join(root, 'usr', 'lib', 'systemd', 'system')
  if (fs.existsSync(target)) return
  fs.mkdirSync(path.dirname(target), { recursive: true })
  fs.cpSync('/usr/lib/systemd/system', target, { recursive: true, verbatimSymlinks: true })
}

/**
 * A release bundle like `npm run release` makes, whose executable is a script answering
 * --version with `version`, plus SHA256SUMS beside it; returns the tarball's path.
 */
export function writeFakeBundle(dir: string, version: string): string {
  const top = `memsvc-${version}-linux-x64`
  const stage = path.join(dir, 'stage')
  fs.mkdirSync(path.join(stage, top, 'licenses'), { recursive: true })
  fs.writeFileSync(path.join(stage, top, 'memsvc'), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 })
  fs.writeFileSync(path.join(stage, top, 'licenses', 'LICENSE'), `licence of ${version}\n`)
  const tarball = path.join(dir, `${top}.tar.gz`)
  const tar = spawnSync('tar', ['-czf', tarball, '-C', stage, top])
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`)
  fs.rmSync(stage, { recursive: true })
  fs.writeFileSync(path.join(dir, 'SHA256SUMS'), `${sha256(tarball)}  ${path.basename(tarball)}\n`)
  return tarball
}
