// The fields the forms of a space share: access and labels, the OCR default (create, settings), an
// embedder's weight (create, add an embedder).
import { DEFAULT_RETRIEVAL_WEIGHT, MAX_RETRIEVAL_WEIGHT } from '../../../validation/limits.js'
import { type Attrs, h } from '../../dom.js'
import { type FormErrors, field, formatLabels, groupField, input, select, textarea } from '../../forms.js'
import type { Space } from '../../types.js'

/** Public read and the labels: empty for a new space (with an example label), else the space's own. */
export function accessAndLabels(errors: FormErrors, space: Space | undefined) {
  const publicRead = h('input', { type: 'checkbox', name: 'publicRead', checked: space?.publicRead })
  const access = groupField(
    errors,
    { name: 'publicRead', label: 'Access', hint: 'Other users may retrieve from a public space, never write to it.' },
    [publicRead],
    ['Public read'],
  )
  const labels = field(
    errors,
    { name: 'labels', label: 'Labels', hint: 'One key=value per line.' },
    space
      ? textarea({ rows: 2, value: formatLabels(space.labels), spellcheck: 'false' })
      : textarea({ rows: 2, spellcheck: 'false', placeholder: 'team=search' }),
  )
  return { publicRead, access, labels }
}

/** An embedder's retrieval weight, from 0 to the server's largest, with the server's default filled in. */
export const weightInput = (attrs: Attrs = {}): HTMLInputElement =>
  input({
    type: 'number',
    min: 0,
    max: MAX_RETRIEVAL_WEIGHT,
    step: 'any',
    value: String(DEFAULT_RETRIEVAL_WEIGHT),
    inputmode: 'decimal',
    ...attrs,
  })

/** The weight typed in; an emptied field sends the default. */
export const weightOf = (control: HTMLInputElement): number => Number(control.value || DEFAULT_RETRIEVAL_WEIGHT)

const OCR_MODES: Array<[Space['defaultOcr'], string]> = [
  ['AUTO', 'Auto: pages without a text layer, and images'],
  ['ON', 'On: every page and image'],
  ['OFF', 'Off: text layers only'],
]

/** The OCR mode documents uploaded to the space get unless an upload says otherwise. */
export function ocrDefaultField(errors: FormErrors, space: Space | undefined) {
  const chosen = field(
    errors,
    { name: 'defaultOcr', label: 'OCR default', hint: 'For documents uploaded without an OCR mode of their own.' },
    select(OCR_MODES),
  )
  chosen.control.value = space?.defaultOcr ?? 'AUTO'
  return chosen
}
