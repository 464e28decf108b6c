import { afterEach, describe, expect, it, vi } from 'vitest'
import { keepingStartupAlive, STARTUP_KEEPALIVE_MS } from '../../src/lifecycle/startup-keepalive.js'

afterEach(() => {
  vi.useRealTimers()
})

describe('start-up keepalive', () => {
  it('says the status every interval while the work runs, and nothing once it has ended', async () => {
    vi.useFakeTimers()
    const said: string[] = []
    let finish: (value: string) => void = () => {}
    const running = keepingStartupAlive(
      (status) => said.push(status),
      'rebuilding',
      () => new Promise<string>((resolve) => (finish = resolve)),
    )
    await vi.advanceTimersByTimeAsync(STARTUP_KEEPALIVE_MS * 3 + 1)
    expect(said).toEqual(['rebuilding', 'rebuilding', 'rebuilding'])
    finish('done')
    expect(await running).toBe('done')
    await vi.advanceTimersByTimeAsync(STARTUP_KEEPALIVE_MS * 3)
    expect(said).toHaveLength(3)
  })

  it('stops saying it when the work fails, and passes the failure on', async () => {
    vi.useFakeTimers()
    const said: string[] = []
    const failing = keepingStartupAlive(
      (status) => said.push(status),
      'rebuilding',
      () => Promise.reject(new Error('build failed')),
    )
    await expect(failing).rejects.toThrow('build failed')
    await vi.advanceTimersByTimeAsync(STARTUP_KEEPALIVE_MS * 2)
    expect(said).toEqual([])
  })

  it('without a keepalive (not under systemd) only runs the work', async () => {
    expect(await keepingStartupAlive(undefined, 'rebuilding', async () => 7)).toBe(7)
  })
})
