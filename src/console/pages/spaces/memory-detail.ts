// One memory: its status (refreshed while it is extracted and processed), settings, metadata and
// content. A document shows its file, how it is extracted, a table of its pages (method, OCR
// confidence, characters, the stored page image) and a download of the original file.
import { call } from '../../api.js'
import { describeChunking } from '../../chunking-fields.js'
import { h, replace } from '../../dom.js'
import { formatSize } from '../../file-size.js'
import { dataUrlOf, fetchBytes, saveBlob } from '../../transfers.js'
import type { Memory, MemoryContent, PageContext, Space } from '../../types.js'
import { dataTable, errorNotice, keyValueTable, loading, pageHeading, section, setBusy, time } from '../../ui.js'
import { deleteMemory, memoryStatus, refreshWhile, spaceHref, unfinished } from './shared.js'

export const pageImagePath = (memoryId: string, pageNumber: number) =>
  `/v1/memories/${encodeURIComponent(memoryId)}/pages/${pageNumber}/image`

/** The page image of a document's page, fetched with the session's key, as an <img> (or the error). */
export async function pageImage(memoryId: string, pageNumber: number): Promise<HTMLElement> {
  const result = await fetchBytes('Get page image', pageImagePath(memoryId, pageNumber))
  if (!result.ok || !result.data) return errorNotice(result.error!, `Could not load page ${pageNumber}`)
  return h('img', {
    class: 'page-image',
    src: await dataUrlOf(result.data),
    alt: `Page ${pageNumber}`,
    'data-testid': 'page-image',
  })
}

/** Page, method, OCR confidence, characters and the image (when stored) of each extracted page. */
function pagesTable(memory: Memory): HTMLElement {
  const extraction = memory.extraction
  if (!extraction || extraction.pages.length === 0)
    return h(
      'p',
      { class: 'muted' },
      unfinished(memory) ? 'The pages are listed once extraction has finished.' : 'No pages.',
    )
  const viewer = h('div', { 'data-testid': 'page-image-slot' })
  const rows = extraction.pages.map((page) =>
    h(
      'tr',
      { 'data-page': String(page.pageNumber) },
      h('th', { scope: 'row' }, String(page.pageNumber)),
      h('td', { 'data-col': 'method' }, page.method),
      h('td', null, page.ocrConfidence === undefined ? '' : page.ocrConfidence.toFixed(0)),
      h('td', { 'data-col': 'characters' }, String(page.characters)),
      h(
        'td',
        null,
        page.imageStored
          ? h(
              'button',
              {
                type: 'button',
                class: 'button small',
                onClick: async (event: Event) => {
                  const button = event.currentTarget as HTMLButtonElement
                  setBusy(button, true, 'Loading…')
                  replace(
                    viewer,
                    h('p', { class: 'muted' }, `Page ${page.pageNumber}`),
                    await pageImage(memory.memoryId, page.pageNumber),
                  )
                  setBusy(button, false, 'Loading…')
                },
              },
              `Show page ${page.pageNumber}`,
            )
          : h('span', { class: 'muted' }, 'none'),
      ),
      h('td', { class: 'wrap' }, page.note ?? ''),
    ),
  )
  return h(
    'div',
    null,
    dataTable(
      'Pages',
      ['Page', 'Method', 'OCR confidence', 'Characters', 'Image', 'Note'],
      ['Note'],
      h('tbody', null, rows),
    ),
    viewer,
  )
}

function documentRows(memory: Memory): Array<[string, HTMLElement | string]> {
  const options = memory.documentOptions
  if (!options) return []
  return [
    ['File', h('span', { 'data-testid': 'memory-file' }, memory.fileName ?? '(no name)')],
    ['Size', memory.contentBytes === undefined ? '' : formatSize(memory.contentBytes)],
    ['OCR', `${options.ocr} (${options.ocrLanguages.join(', ') || 'eng'})`],
    ['Page images', options.extractPageImages ? `${options.pageImageDpi} dpi` : 'not kept'],
  ]
}

/** A document's original file: a button that downloads it (the API answers bytes, with the key). */
function downloadButton(memory: Memory): HTMLElement {
  const button: HTMLButtonElement = h(
    'button',
    {
      type: 'button',
      class: 'button',
      onClick: async () => {
        setBusy(button, true, 'Downloading…')
        const result = await fetchBytes(
          'Download document',
          `/v1/memories/${encodeURIComponent(memory.memoryId)}/content`,
        )
        setBusy(button, false, 'Downloading…')
        if (result.ok && result.data) saveBlob(result.data, memory.fileName ?? `${memory.memoryId}`)
        else button.after(errorNotice(result.error!, 'Could not download the file'))
      },
    },
    `Download ${memory.fileName ?? 'the original file'}`,
  )
  return button
}

async function contentSection(memory: Memory, path: string): Promise<HTMLElement> {
  if (memory.documentOptions) return section('Original file', downloadButton(memory))
  const content = await call<MemoryContent>('Get memory content', 'GET', `${path}/content`)
  return section(
    'Content',
    content.ok && content.data
      ? h(
          'pre',
          { class: 'content', 'data-testid': 'memory-content', tabindex: '0', 'aria-label': 'memory content' },
          content.data.originalContent,
        )
      : errorNotice(content.error!, 'Could not read the content'),
  )
}

export async function memoryView(context: PageContext, spaceId: string, memoryId: string): Promise<void> {
  const { root } = context
  const body = h('div', null, loading('the memory'))
  root.append(body)
  const path = `/v1/memories/${encodeURIComponent(memoryId)}`
  const [result, space] = await Promise.all([
    call<Memory>('Get memory', 'GET', path),
    call<Space>('Get space', 'GET', `/v1/spaces/${encodeURIComponent(spaceId)}`),
  ])
  if (!context.isCurrent()) return
  const back = h(
    'p',
    { class: 'breadcrumb' },
    h('a', { href: '#/spaces' }, 'Spaces'),
    ' / ',
    h('a', { href: spaceHref(spaceId) }, space.data?.name ?? 'Space'),
    ' / ',
  )
  if (!result.ok || !result.data) {
    replace(body, back, pageHeading('Memory'), errorNotice(result.error!, 'Could not read the memory'))
    return
  }
  const memory = result.data
  const content = await contentSection(memory, path)
  if (!context.isCurrent()) return
  const statusSlot = h('div', null, memoryStatus(memory))
  const chunksSlot = h('span', null, String(memory.chunkCount))
  const pagesSlot = h('div', null, pagesTable(memory))
  if (unfinished(memory)) {
    refreshWhile(context, async () => {
      const again = await call<Memory>('Get memory', 'GET', path)
      if (!again.ok || !again.data || !context.isCurrent()) return false
      replace(statusSlot, memoryStatus(again.data))
      chunksSlot.textContent = String(again.data.chunkCount)
      replace(pagesSlot, pagesTable(again.data))
      return unfinished(again.data)
    })
  }
  const deleteButton = h(
    'button',
    {
      type: 'button',
      class: 'button danger',
      onClick: async () => {
        if (await deleteMemory(memory)) context.navigate(spaceHref(memory.spaceId))
      },
    },
    'Delete memory',
  )
  replace(
    body,
    back,
    pageHeading('Memory', deleteButton),
    section(
      'Details',
      keyValueTable([
        ['ID', h('code', null, memory.memoryId)],
        ['Status', statusSlot],
        ['Chunks', chunksSlot],
        ['Content type', memory.contentType],
        ...documentRows(memory),
        ['Chunking', describeChunking(memory.chunkingConfig)],
        [
          'Metadata',
          Object.keys(memory.metadata).length
            ? h('pre', { class: 'code small' }, JSON.stringify(memory.metadata, null, 2))
            : h('span', { class: 'muted' }, 'none'),
        ],
        ['SHA-256', h('code', { class: 'small' }, memory.originalContentSha256)],
        ['Created', time(memory.createdAt)],
      ]),
    ),
    memory.documentOptions ? section('Pages', pagesSlot) : null,
    content,
  )
}
