// The "Upload documents" panel of a space: files dropped on it or chosen with the picker are
// uploaded one after the other as multipart/form-data (the `request` part, then the file),
// each with a progress bar, with the OCR mode and page-image options chosen here. The server
// reads the type from the bytes; its refusal (413 too large, 415 not a type it reads) is
// shown on that file's line, and the next file goes on.
// Import-free, like validation/limits.ts: the bundle gets the numbers, not the extraction code.
import { MAX_PAGE_IMAGE_DPI, MIN_PAGE_IMAGE_DPI } from '../../../validation/limits.js'
import { describeError } from '../../api.js'
import { h, replace, uid } from '../../dom.js'
import { formatSize, formatSizeProgress } from '../../file-size.js'
import { FormErrors, field, input, select } from '../../forms.js'
import { uploadMultipart } from '../../transfers.js'
import type { Memory, PageContext, Space } from '../../types.js'
import { announce } from '../../ui.js'

/** What the picker offers: the documents the server extracts and the text types it stores as they are. */
const ACCEPTED_FILES = '.pdf,.docx,.pptx,.xlsx,.html,.htm,.png,.jpg,.jpeg,.tif,.tiff,.bmp,.webp,.txt,.md,.json'

export function uploadPanel(context: PageContext, space: Space, onCreated: (memory: Memory) => void): HTMLElement {
  const errors = new FormErrors()
  const ocr = field(
    errors,
    {
      name: 'ocr',
      label: 'OCR',
      hint: 'Auto reads by OCR the pages without a text layer, and images; On reads every page.',
    },
    select([
      ['', `Space default (${space.defaultOcr.toLowerCase()})`],
      ['AUTO', 'Auto'],
      ['ON', 'On'],
      ['OFF', 'Off'],
    ]),
  )
  const languages = field(
    errors,
    { name: 'ocrLanguages', label: 'OCR languages', hint: 'Tesseract codes, comma-separated; eng when empty.' },
    input({ placeholder: 'eng', spellcheck: 'false', autocomplete: 'off' }),
  )
  const pageImages = h('input', { type: 'checkbox', name: 'extractPageImages', id: uid('page-images') })
  const dpi = field(
    errors,
    { name: 'pageImageDpi', label: 'Page image DPI', hint: `${MIN_PAGE_IMAGE_DPI} to ${MAX_PAGE_IMAGE_DPI}.` },
    input({ type: 'number', min: MIN_PAGE_IMAGE_DPI, max: MAX_PAGE_IMAGE_DPI, step: '1', inputmode: 'numeric' }),
  )
  dpi.control.disabled = true
  pageImages.addEventListener('change', () => (dpi.control.disabled = !pageImages.checked))

  const picker = h('input', {
    type: 'file',
    multiple: true,
    accept: ACCEPTED_FILES,
    id: uid('upload-files'),
    class: 'visually-hidden',
    'data-testid': 'upload-picker',
  })
  const uploads = h('ul', { class: 'uploads', 'aria-label': 'Uploads' })
  const queue: File[] = []
  let running = false

  const requestFields = (): Record<string, unknown> => {
    const request: Record<string, unknown> = { spaceId: space.spaceId }
    if (ocr.control.value) request.ocr = ocr.control.value
    const codes = languages.control.value
      .split(',')
      .map((code) => code.trim())
      .filter(Boolean)
    if (codes.length) request.ocrLanguages = codes
    if (pageImages.checked) {
      request.extractPageImages = true
      if (dpi.control.value) request.pageImageDpi = Number(dpi.control.value)
    }
    return request
  }

  const uploadOne = async (file: File) => {
    const bar = h('progress', { max: Math.max(1, file.size), value: 0, 'aria-label': `upload of ${file.name}` })
    const state = h('span', { class: 'small', 'data-testid': 'upload-state' }, 'Waiting…')
    const line = h(
      'li',
      { class: 'upload', 'data-file': file.name },
      h('span', { class: 'upload-name' }, file.name),
      h('span', { class: 'muted small' }, ` ${formatSize(file.size)}`),
      bar,
      state,
    )
    uploads.prepend(line)
    const result = await uploadMultipart<Memory>(
      'Upload document',
      '/v1/memories',
      requestFields(),
      file,
      ({ sent, total }) => {
        bar.max = Math.max(1, total)
        bar.value = sent
        state.textContent = `Uploading ${formatSizeProgress(sent, total)}`
      },
    )
    if (!context.isCurrent()) return
    if (!result.ok || !result.data) {
      line.classList.add('failed')
      replace(state, h('span', { class: 'field-error', role: 'alert' }, `Failed: ${describeError(result.error!)}`))
      return
    }
    bar.value = bar.max
    state.textContent = result.status === 200 ? 'Already stored (same content)' : 'Stored'
    onCreated(result.data)
  }

  /** One upload at a time, in the order the files came: the server extracts them in the background anyway. */
  const enqueue = async (files: FileList | File[]) => {
    queue.push(...Array.from(files))
    if (running) return
    running = true
    let done = 0
    while (queue.length > 0 && context.isCurrent()) {
      await uploadOne(queue.shift()!)
      done++
    }
    running = false
    if (done > 0) announce(`${done} upload${done === 1 ? '' : 's'} finished`)
  }

  picker.addEventListener('change', () => {
    if (picker.files?.length) void enqueue(picker.files)
    picker.value = ''
  })
  const zone = h(
    'div',
    {
      class: 'drop-zone',
      'data-testid': 'drop-zone',
      onDragover: (event: DragEvent) => {
        event.preventDefault()
        zone.classList.add('dragging')
      },
      onDragleave: () => zone.classList.remove('dragging'),
      onDrop: (event: DragEvent) => {
        event.preventDefault()
        zone.classList.remove('dragging')
        if (event.dataTransfer?.files.length) void enqueue(event.dataTransfer.files)
      },
    },
    h('p', null, 'Drop PDF, Word, PowerPoint, Excel, HTML, image or text files here, or '),
    h('label', { for: picker.id, class: 'button small' }, 'Choose files'),
    picker,
  )
  const pageImagesField = h(
    'div',
    { class: 'field' },
    h('label', { class: 'choice', for: pageImages.id }, pageImages, ' Keep an image of each PDF page'),
    h('p', { class: 'hint' }, 'Shown beside the chunks a page gave, and in the page table.'),
  )
  return h(
    'div',
    { class: 'upload-panel' },
    zone,
    h('div', { class: 'row' }, ocr.wrapper, languages.wrapper),
    h('div', { class: 'row' }, pageImagesField, dpi.wrapper),
    uploads,
  )
}
