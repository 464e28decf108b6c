// How `memsvc memory create-batch` shows progress: a line per stage without a terminal, lines
// redrawn in place on one; what a memory's status says on its line; and how a retrieved chunk
// of a document is cited ("report.pdf p.12").
import { describe, expect, it } from 'vitest'
import { BatchProgress, type ProgressOutput } from '../../src/cli/batch-progress.js'
import { chunkSourceLabel } from '../../src/cli/chunk-source-label.js'
import { memoryProgress } from '../../src/cli/commands/memory-batch.js'
import { type Memory, ProcessingStatus } from '../../src/generated/memsvc/v1/memories.js'

/** The escape that moves the cursor up to redraw: ESC [ n F. */
const CURSOR_UP = new RegExp(`${String.fromCharCode(0x1b)}\\[\\d+F`)

function recorder(terminal?: { columns: number; rows: number }): ProgressOutput & { text: string } {
  const output = {
    text: '',
    isTTY: terminal !== undefined,
    columns: terminal?.columns,
    rows: terminal?.rows,
    write(text: string) {
      output.text += text
    },
  }
  return output
}

const memory = (fields: Partial<Memory>): Memory => ({ chunkCount: 0, ...fields }) as Memory

describe('create-batch progress', () => {
  it('without a terminal: one line per stage change, not per update within a stage', () => {
    const output = recorder()
    const progress = new BatchProgress(['a.pdf', 'b.txt'], output)
    progress.update('a.pdf', { stage: 'uploading', text: 'uploading 0.0/3.0 MB' })
    progress.update('a.pdf', { stage: 'uploading', text: 'uploading 1.0/3.0 MB' })
    progress.update('b.txt', { stage: 'skipped', text: 'skipped: empty file', final: true })
    progress.update('a.pdf', { stage: 'ocr', text: 'OCR page 1/2' })
    progress.update('a.pdf', { stage: 'done', text: 'done (3 chunks)', final: true })
    progress.update('a.pdf', { stage: 'embedding', text: 'embedding' })
    progress.finish()
    expect(output.text.split('\n')).toEqual([
      'a.pdf: uploading 0.0/3.0 MB',
      'b.txt: skipped: empty file',
      'a.pdf: OCR page 1/2',
      'a.pdf: done (3 chunks)',
      '',
    ])
  })

  it('on a terminal: finished files printed once, the ones under way redrawn below them, nothing left live at the end', async () => {
    const output = recorder({ columns: 30, rows: 10 })
    const progress = new BatchProgress(['a.pdf', 'b.pdf'], output)
    progress.update('a.pdf', { stage: 'uploading', text: 'uploading 1/2 MB' })
    progress.update('b.pdf', { stage: 'ocr', text: 'OCR page 1/40 of a very long document name' })
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(output.text).toBe('a.pdf: uploading 1/2 MB\nb.pdf: OCR page 1/40 of a ve…\n')
    progress.update('a.pdf', { stage: 'done', text: 'done (1 chunk)', final: true })
    progress.finish()
    const [, redrawn] = output.text.split(CURSOR_UP)
    expect(redrawn).toBe('\u001b[0Ja.pdf: done (1 chunk)\n')
  })
})

describe('a memory on its progress line', () => {
  it.each([
    [{ processingStatus: ProcessingStatus.PENDING }, 'stored, waiting to be processed'],
    [
      {
        processingStatus: ProcessingStatus.EXTRACTING,
        extraction: { kind: 'pdf', stage: 'EXTRACTING', pagesDone: 3, pagesTotal: 12, pages: [] },
      },
      'extracting page 4/12',
    ],
    [
      {
        processingStatus: ProcessingStatus.EXTRACTING,
        extraction: { kind: 'pdf', stage: 'OCR', pagesDone: 1, pagesTotal: 3, pages: [] },
      },
      'OCR page 2/3',
    ],
    [{ processingStatus: ProcessingStatus.PROCESSING }, 'embedding'],
    [{ processingStatus: ProcessingStatus.COMPLETED, chunkCount: 37 }, 'done (37 chunks)'],
    [{ processingStatus: ProcessingStatus.FAILED, processingError: 'no text' }, 'failed: no text'],
  ] as const)('%o reads "%s"', (fields, text) => {
    expect(memoryProgress(memory(fields as Partial<Memory>)).text).toBe(text)
  })
})

describe('the source of a retrieved chunk', () => {
  it.each([
    [{ page: 12, headingPath: [] }, 'report.pdf', 'report.pdf p.12'],
    [{ page: 12, pageEnd: 13, headingPath: [] }, 'report.pdf', 'report.pdf pp.12-13'],
    [{ slide: 3, headingPath: ['Roadmap'] }, 'deck.pptx', 'deck.pptx slide 3 Roadmap'],
    [{ sheet: 'Sales', headingPath: [] }, undefined, 'sheet Sales'],
    [{ headingPath: ['A', 'B', 'C'] }, 'notes.docx', 'notes.docx … › B › C'],
    [{ headingPath: [] }, 'notes.docx', ''],
  ] as const)('%o of %s reads "%s"', (source, fileName, label) => {
    expect(chunkSourceLabel({ ...source, headingPath: [...source.headingPath] }, fileName)).toBe(label)
  })
})
