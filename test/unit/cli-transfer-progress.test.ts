// How `memsvc space export|import` show progress: one line on stderr, redrawn in place on a
// terminal, a new line at most every few seconds anywhere else, and notices (a resume) that stay.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProgressOutput } from '../../src/cli/batch-progress.js'
import { TransferProgress } from '../../src/cli/transfer-progress.js'

const CLEAR_LINE = '\r\u001b[2K'
/** Longer than the interval between lines without a terminal. */
const LATER_MS = 5_000

function recorder(terminal?: { columns: number }): ProgressOutput & { text: string } {
  const output = {
    text: '',
    isTTY: terminal !== undefined,
    columns: terminal?.columns,
    write(text: string) {
      output.text += text
    },
  }
  return output
}

describe('transfer progress', () => {
  beforeEach(() => {
    vi.useFakeTimers()
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'))
  })
  afterEach(() => vi.useRealTimers())

  it('without a terminal: the first state at once, then at most one line per interval, and the last at the end', () => {
    const output = recorder()
    const progress = new TransferProgress(output)
    progress.update('exporting: 0 memories, 1 KB')
    progress.update('exporting: 10 memories, 5 KB')
    progress.update('exporting: 20 memories, 9 KB')
    vi.advanceTimersByTime(LATER_MS)
    progress.update('exporting: 30 memories, 12 KB')
    progress.update('exporting: 40 memories, 15 KB')
    progress.notice('the connection was cut; resuming in 1 s')
    progress.finish()
    expect(output.text.split('\n')).toEqual([
      'exporting: 0 memories, 1 KB',
      'exporting: 30 memories, 12 KB',
      'the connection was cut; resuming in 1 s',
      'exporting: 40 memories, 15 KB',
      '',
    ])
  })

  it('on a terminal: one line redrawn in place, cut to the width; a notice above it; a newline at the end', () => {
    const output = recorder({ columns: 20 })
    const progress = new TransferProgress(output)
    progress.update('importing: 1/10 MB sent, 100 memories')
    progress.notice('import 2c9e started')
    vi.advanceTimersByTime(LATER_MS)
    progress.update('importing: 10/10 MB')
    progress.finish()
    expect(output.text).toBe(
      `${CLEAR_LINE}importing: 1/10 MB…${CLEAR_LINE}import 2c9e started\n${CLEAR_LINE}importing: 10/10 MB\n`,
    )
  })

  it('finishes without a line when nothing was shown', () => {
    const output = recorder({ columns: 80 })
    new TransferProgress(output).finish()
    expect(output.text).toBe('')
  })
})
