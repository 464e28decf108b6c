// The chunking settings of a space (its default) and of a memory (an optional override):
// a strategy and the sizes that strategy takes. Unset sizes are left out, so the
// server's defaults apply (recursive, 512 characters, overlap 64, KEEP_END).
import { DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE } from '../validation/limits.js'
import { type Child, h } from './dom.js'
import { type FormErrors, field, input, select } from './forms.js'
import type { ChunkingConfig } from './types.js'

const KEEP_STRATEGIES: Array<[string, string]> = [
  ['KEEP_END', 'With the piece before it (KEEP_END)'],
  ['KEEP_START', 'With the piece after it (KEEP_START)'],
  ['DISCARD', 'Dropped (DISCARD)'],
]
/** The size fields' hints: the server's defaults, for sizes left empty. */
const SIZE_HINTS = {
  size: `Characters; default ${DEFAULT_CHUNK_SIZE}.`,
  overlap: 'Characters; default an eighth of the size.',
  minSize: 'A shorter last chunk joins the one before; default 0.',
}
/** The value of the strategy select that sends no chunkingConfig at all. */
export const INHERIT = 'inherit'

export interface ChunkingFields {
  element: HTMLElement
  /**
   * The request's chunkingConfig (sizes left out take the server's defaults); undefined for INHERIT
   * (the memory takes its space's setting).
   */
  collect(): Record<string, unknown> | undefined
}

const sizeInput = (min: number) => input({ type: 'number', min, max: MAX_CHUNK_SIZE, step: '1', inputmode: 'numeric' })
const given = (control: HTMLInputElement): number | undefined =>
  control.value.trim() === '' ? undefined : Number(control.value)

/**
 * `name` is the API's field ("defaultChunkingConfig" or "chunkingConfig"), so the
 * server's errors (e.g. defaultChunkingConfig.recursive.chunkOverlap) land next to the size they name.
 */
export function chunkingFields(
  errors: FormErrors,
  name: string,
  options: { inherit: boolean; legend: string; hint?: Child },
): ChunkingFields {
  const strategies: Array<[string, string]> = [
    ...(options.inherit ? [[INHERIT, "The space's default"] as [string, string]] : []),
    ['recursive', 'Recursive (split on separators)'],
    ['sentence', 'Sentences'],
    ['none', 'None (one chunk per memory)'],
  ]
  const strategy = field(errors, { name, label: 'Chunking strategy' }, select(strategies))
  /** A size in characters, `path` within the config: the server's errors name it so. */
  const sizeField = (path: string, label: string, hint: string, min: number) =>
    field(errors, { name: `${name}.${path}`, label, hint }, sizeInput(min))
  const chunkSize = sizeField('recursive.chunkSize', 'Chunk size', SIZE_HINTS.size, 1)
  const chunkOverlap = sizeField('recursive.chunkOverlap', 'Chunk overlap', SIZE_HINTS.overlap, 0)
  const keepStrategy = field(
    errors,
    { name: `${name}.recursive.keepStrategy`, label: 'A separator goes' },
    select(KEEP_STRATEGIES),
  )
  const maxChunkSize = sizeField('sentence.maxChunkSize', 'Max chunk size', SIZE_HINTS.size, 1)
  const minChunkSize = sizeField('sentence.minChunkSize', 'Min chunk size', SIZE_HINTS.minSize, 0)
  const recursivePanel = h(
    'div',
    { class: 'sub-panel grid3', 'data-strategy': 'recursive' },
    chunkSize.wrapper,
    chunkOverlap.wrapper,
    keepStrategy.wrapper,
  )
  const sentencePanel = h(
    'div',
    { class: 'sub-panel grid3', 'data-strategy': 'sentence' },
    maxChunkSize.wrapper,
    minChunkSize.wrapper,
  )
  const show = () => {
    recursivePanel.hidden = strategy.control.value !== 'recursive'
    sentencePanel.hidden = strategy.control.value !== 'sentence'
  }
  strategy.control.addEventListener('change', show)
  show()
  return {
    element: h(
      'fieldset',
      { class: 'form-section' },
      h('legend', null, options.legend),
      options.hint ? h('p', { class: 'hint' }, options.hint) : null,
      strategy.wrapper,
      recursivePanel,
      sentencePanel,
    ),
    collect() {
      switch (strategy.control.value) {
        case 'recursive': {
          const recursive: Record<string, unknown> = { keepStrategy: keepStrategy.control.value }
          if (given(chunkSize.control) !== undefined) recursive.chunkSize = given(chunkSize.control)
          if (given(chunkOverlap.control) !== undefined) recursive.chunkOverlap = given(chunkOverlap.control)
          return { recursive }
        }
        case 'sentence': {
          const sentence: Record<string, unknown> = {}
          if (given(maxChunkSize.control) !== undefined) sentence.maxChunkSize = given(maxChunkSize.control)
          if (given(minChunkSize.control) !== undefined) sentence.minChunkSize = given(minChunkSize.control)
          return { sentence }
        }
        case 'none':
          return { none: {} }
        default:
          return undefined
      }
    },
  }
}

/** One line for a stored setting, e.g. "recursive, 512 characters, overlap 64, KEEP_END". */
export function describeChunking(config: ChunkingConfig | undefined): string {
  if (!config) return 'not set'
  if ('recursive' in config)
    return `recursive, ${config.recursive.chunkSize} characters, overlap ${config.recursive.chunkOverlap}, ${config.recursive.keepStrategy}`
  if ('sentence' in config)
    return `sentences, at most ${config.sentence.maxChunkSize} characters, at least ${config.sentence.minChunkSize}`
  return 'none (one chunk per memory)'
}
