// sd_notify for `Type=notify` units, without a native module. Node cannot send the
// AF_UNIX datagram sd_notify uses (dgram speaks UDP only), so we run systemd-notify(1),
// which ships in the systemd package itself and so is on every host that runs the unit.
// The unit sets NotifyAccess=all because the message comes from that child, not from
// the main PID; systemd-notify (since systemd 246) waits until the manager has read the
// message, so the child exiting first cannot make systemd drop it.
import { execFile } from 'node:child_process'
import type { Logger } from '../observability/logger.js'

const NOTIFY_TOOL = 'systemd-notify'
const NOTIFY_TIMEOUT_MS = 10_000

export type Notify = (...assignments: string[]) => Promise<void>

/** Sends VARIABLE=VALUE assignments to systemd, in order; a no-op unless systemd set $NOTIFY_SOCKET. */
export function systemdNotifier(log: Logger, env: NodeJS.ProcessEnv = process.env): Notify {
  if (!env.NOTIFY_SOCKET) return async () => {}
  let queue = Promise.resolve()
  return (...assignments) => {
    queue = queue.then(
      () =>
        new Promise<void>((resolve) => {
          execFile(NOTIFY_TOOL, assignments, { timeout: NOTIFY_TIMEOUT_MS, env }, (error) => {
            // systemd then times the start out or kills on stop as configured; the server itself is fine.
            if (error) log.warn('cannot notify systemd', { assignments: assignments.join(' '), error })
            resolve()
          })
        }),
    )
    return queue
  }
}
