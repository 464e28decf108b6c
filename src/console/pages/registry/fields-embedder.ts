// An embedder's own fields: dimensionality, distribution type, max sequence length.
import { h } from '../../dom.js'
import { type FormErrors, field, select } from '../../forms.js'
import { DISTRIBUTION_TYPES, INT32_MAX, LOCAL_PROVIDER_TYPE } from '../../registry-kinds.js'
import type { Registration } from '../../types.js'
import { type FieldMakers, type KindFields, numberOrUndefined, str } from './form-parts.js'

export function embedderFields(
  errors: FormErrors,
  make: FieldMakers,
  initial: Registration | undefined,
  modalities: HTMLElement,
): KindFields {
  const dimensionality = make.number('dimensionality', 'Dimensionality', {
    min: 1,
    max: INT32_MAX,
    step: '1',
    required: true,
    hint: 'Output vector dimensions.',
    value: initial?.dimensionality,
  })
  const distributionType = field(
    errors,
    { name: 'distributionType', label: 'Distribution type' },
    select([...DISTRIBUTION_TYPES]),
  )
  distributionType.control.value = str(initial?.distributionType) || 'DENSE'
  const maxSequenceLength = make.number('maxSequenceLength', 'Max sequence length', {
    min: 1,
    max: INT32_MAX,
    step: '1',
    hint: 'Optional; maximum input sequence length in tokens.',
    value: initial?.maxSequenceLength,
  })
  return {
    modelFields: [
      h('div', { class: 'row' }, dimensionality.wrapper, distributionType.wrapper, maxSequenceLength.wrapper),
      modalities,
    ],
    sections: [],
    providerChanged(provider) {
      // A LOCAL embedder's dimensionality and token limit are its model's when left empty.
      const local = provider === LOCAL_PROVIDER_TYPE
      dimensionality.control.required = !local
      dimensionality.wrapper.querySelector('.required')?.toggleAttribute('hidden', local)
    },
    collect(value) {
      value.dimensionality = numberOrUndefined(dimensionality.control)
      value.distributionType = distributionType.control.value
      value.maxSequenceLength = numberOrUndefined(maxSequenceLength.control)
    },
  }
}
