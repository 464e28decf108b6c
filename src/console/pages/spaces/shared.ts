// What the views of spaces and memories share: their addresses, a memory's status, delete,
// and the refresh that follows work still running in the background.
import { h } from '../../dom.js'
import type { Memory, PageContext, Space } from '../../types.js'
import { confirmAndDelete } from '../../ui.js'

/** How often a page asks again while memories are processing or an embedder is back-filling. */
const REFRESH_INTERVAL_MS = 1500

export const spaceHref = (spaceId: string) => `#/spaces/${encodeURIComponent(spaceId)}`
export const memoryHref = (memory: Pick<Memory, 'spaceId' | 'memoryId'>) =>
  `${spaceHref(memory.spaceId)}/memories/${encodeURIComponent(memory.memoryId)}`
export const unfinished = (memory: Memory) =>
  memory.processingStatus === 'PENDING' ||
  memory.processingStatus === 'EXTRACTING' ||
  memory.processingStatus === 'PROCESSING'

const STATUS_TONE: Record<Memory['processingStatus'], 'ok' | 'warn' | 'bad' | 'neutral'> = {
  PENDING: 'neutral',
  EXTRACTING: 'warn',
  PROCESSING: 'warn',
  COMPLETED: 'ok',
  FAILED: 'bad',
}

const STAGE_WORDS: Record<string, string> = { EXTRACTING: 'extracting', OCR: 'OCR', RENDERING: 'rendering' }

/** A document's extraction while it runs: "OCR page 2 of 3", "extracting page 4 of 12". */
export function extractionProgress(memory: Memory): string | undefined {
  const extraction = memory.extraction
  if (memory.processingStatus !== 'EXTRACTING' || !extraction) return undefined
  const stage = STAGE_WORDS[extraction.stage] ?? 'extracting'
  if (extraction.pagesTotal === 0) return stage
  return `${stage} page ${Math.min(extraction.pagesDone + 1, extraction.pagesTotal)} of ${extraction.pagesTotal}`
}

/** The status badge, a document's extraction progress while it runs, and for FAILED the reason the server gave. */
export function memoryStatus(memory: Memory): HTMLElement {
  const progress = extractionProgress(memory)
  const extraction = memory.extraction
  return h(
    'div',
    { class: 'status-cell', 'data-status': memory.processingStatus },
    h(
      'span',
      { class: `badge ${STATUS_TONE[memory.processingStatus]}`, 'data-testid': 'memory-status' },
      memory.processingStatus,
    ),
    progress && extraction
      ? h(
          'div',
          { class: 'extraction-progress small', 'data-testid': 'extraction-progress' },
          h('progress', {
            max: Math.max(1, extraction.pagesTotal),
            value: extraction.pagesDone,
            'aria-label': 'pages extracted',
          }),
          ` ${progress}`,
        )
      : null,
    memory.processingError
      ? h('p', { class: 'field-error failure', 'data-testid': 'memory-error' }, memory.processingError)
      : null,
  )
}

export function deleteSpace(space: Space): Promise<boolean> {
  return confirmAndDelete({
    confirm: {
      title: `Delete space "${space.name}"?`,
      message: 'Its memories, chunks and vectors are deleted with it. This cannot be undone.',
      confirmLabel: 'Delete space',
    },
    action: 'Delete space',
    path: `/v1/spaces/${encodeURIComponent(space.spaceId)}`,
    deleted: `Space "${space.name}" deleted`,
  })
}

export function deleteMemory(memory: Memory): Promise<boolean> {
  return confirmAndDelete({
    confirm: {
      title: 'Delete this memory?',
      message: [
        'The memory ',
        h('code', null, memory.memoryId),
        ', its chunks and vectors are deleted. This cannot be undone.',
      ],
      confirmLabel: 'Delete memory',
    },
    action: 'Delete memory',
    path: `/v1/memories/${encodeURIComponent(memory.memoryId)}`,
    deleted: 'Memory deleted',
  })
}

/** Calls `tick` every REFRESH_INTERVAL_MS while it answers true and the page is still shown. */
export function refreshWhile(context: PageContext, tick: () => Promise<boolean>): void {
  const step = async () => {
    if (!context.isCurrent()) return
    if (await tick()) window.setTimeout(step, REFRESH_INTERVAL_MS)
  }
  window.setTimeout(step, REFRESH_INTERVAL_MS)
}
