// The "Add a memory" panel of a space: content, content type, metadata and optional chunking.
import { call } from '../../api.js'
import { chunkingFields, describeChunking } from '../../chunking-fields.js'
import { h } from '../../dom.js'
import { checkedForm, FormErrors, field, select, textarea } from '../../forms.js'
import type { Memory, PageContext, Space } from '../../types.js'
import { announce, setBusy } from '../../ui.js'

const CONTENT_TYPES = ['text/plain', 'text/markdown', 'application/json'] as const

export function memoryForm(context: PageContext, space: Space, onCreated: (memory: Memory) => void): HTMLElement {
  const errors = new FormErrors()
  const content = field(
    errors,
    {
      name: 'originalContent',
      label: 'Content',
      required: true,
      hint: 'The text to remember; it is chunked and embedded in the background.',
    },
    textarea({ rows: 5 }),
  )
  const contentType = field(errors, { name: 'contentType', label: 'Content type' }, select([...CONTENT_TYPES]))
  const metadata = field(
    errors,
    { name: 'metadata', label: 'Metadata (JSON)', hint: 'Optional: a JSON object, searchable with retrieval filters.' },
    textarea({ rows: 3, class: 'mono', spellcheck: 'false', placeholder: '{"source": "notes", "year": 2025}' }),
  )
  const chunking = chunkingFields(errors, 'chunkingConfig', {
    inherit: true,
    legend: 'Chunking',
    hint: `Optional: the space's default is ${describeChunking(space.defaultChunkingConfig)}.`,
  })
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Add memory')
  return checkedForm(
    'form',
    {
      errors,
      attrs: { 'aria-label': 'Add a memory' },
      check: (violations) => {
        let parsedMetadata: unknown
        if (metadata.control.value.trim()) {
          try {
            parsedMetadata = JSON.parse(metadata.control.value)
            if (parsedMetadata === null || typeof parsedMetadata !== 'object' || Array.isArray(parsedMetadata))
              violations.push({ field: 'metadata', description: 'must be a JSON object, e.g. {"source": "notes"}' })
          } catch (error) {
            violations.push({ field: 'metadata', description: `not valid JSON: ${(error as Error).message}` })
          }
        }
        return parsedMetadata
      },
      send: async (parsedMetadata) => {
        const body: Record<string, unknown> = {
          spaceId: space.spaceId,
          originalContent: content.control.value,
          contentType: contentType.control.value,
        }
        if (parsedMetadata !== undefined) body.metadata = parsedMetadata
        const chunkingConfig = chunking.collect()
        if (chunkingConfig) body.chunkingConfig = chunkingConfig
        setBusy(submit, true)
        const result = await call<Memory>('Create memory', 'POST', '/v1/memories', { body })
        setBusy(submit, false)
        if (!context.isCurrent()) return
        if (!result.ok || !result.data) return void errors.show(result.error!, 'Not added')
        content.control.value = ''
        metadata.control.value = ''
        announce('Memory added; it is processed in the background')
        onCreated(result.data)
      },
    },
    content.wrapper,
    h('div', { class: 'row' }, contentType.wrapper, metadata.wrapper),
    h('details', { class: 'chunking-details' }, h('summary', null, 'Chunking (optional)'), chunking.element),
    h('div', { class: 'actions' }, submit),
  )
}
