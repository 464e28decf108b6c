// An LLM's own fields: context length, capabilities, default sampling, client config.
import { MAX_STOP_SEQUENCES } from '../../../validation/limits.js'
import { h } from '../../dom.js'
import { type FormErrors, field, groupField, lines, textarea } from '../../forms.js'
import { CAPABILITIES, INT32_MAX, SAMPLING } from '../../registry-kinds.js'
import type { Registration } from '../../types.js'
import { type FieldMakers, type KindFields, numberOrUndefined, str } from './form-parts.js'

export function llmFields(
  errors: FormErrors,
  make: FieldMakers,
  initial: Registration | undefined,
  modalities: HTMLElement,
): KindFields {
  const maxContextLength = make.number('maxContextLength', 'Max context length', {
    min: 1,
    max: INT32_MAX,
    step: '1',
    hint: 'Optional; in tokens.',
    value: initial?.maxContextLength,
  })
  const capabilities = (initial?.capabilities ?? {}) as Record<string, boolean | undefined>
  const capabilityBoxes = CAPABILITIES.map(([name, , fallback]) =>
    h('input', {
      type: 'checkbox',
      name: `capabilities.${name}`,
      value: name,
      checked: capabilities[name] ?? fallback,
    }),
  )
  const capabilityGroup = groupField(
    errors,
    {
      name: 'capabilities',
      label: 'Capabilities',
      hint: 'Chat, sampling parameters and system messages are on by default.',
    },
    capabilityBoxes,
    CAPABILITIES.map(([, label]) => label),
  )
  const sampling = (initial?.defaultSamplingParams ?? {}) as Record<string, unknown>
  const samplingFields: Record<string, HTMLInputElement> = {}
  const samplingWrappers = SAMPLING.map((spec) => {
    const made = make.number(`defaultSamplingParams.${spec.name}`, spec.label, {
      min: spec.min,
      max: spec.max,
      step: spec.step,
      hint: spec.hint,
      value: sampling[spec.name],
    })
    samplingFields[spec.name] = made.control
    return made.wrapper
  })
  const stopSequences = field(
    errors,
    {
      name: 'defaultSamplingParams.stopSequences',
      label: 'Stop sequences',
      hint: `One per line; at most ${MAX_STOP_SEQUENCES}.`,
    },
    textarea({
      rows: 2,
      value: ((sampling.stopSequences as string[] | undefined) ?? []).join('\n'),
      spellcheck: 'false',
    }),
  )
  const clientConfig = field(
    errors,
    {
      name: 'clientConfig',
      label: 'Client config (JSON)',
      hint: 'Optional provider-specific configuration: a JSON object.',
    },
    textarea({
      rows: 3,
      class: 'mono',
      value: str(initial?.clientConfig),
      spellcheck: 'false',
      placeholder: '{"timeoutMs": 30000}',
    }),
  )
  return {
    modelFields: [maxContextLength.wrapper, modalities],
    sections: [
      h('div', { class: 'form-section capabilities' }, capabilityGroup),
      h(
        'fieldset',
        { class: 'form-section', 'data-field': 'defaultSamplingParams' },
        h('legend', null, 'Default sampling'),
        h('p', { class: 'hint' }, 'Each is optional; leave a field empty to leave it unset.'),
        h('div', { class: 'grid3' }, samplingWrappers),
        stopSequences.wrapper,
      ),
      h('fieldset', { class: 'form-section' }, h('legend', null, 'Client'), clientConfig.wrapper),
    ],
    collect(value) {
      value.maxContextLength = numberOrUndefined(maxContextLength.control)
      value.clientConfig = clientConfig.control.value.trim()
      value.capabilities = Object.fromEntries(capabilityBoxes.map((box) => [box.value, box.checked]))
      const chosen: Record<string, unknown> = {}
      for (const spec of SAMPLING) {
        const given = numberOrUndefined(samplingFields[spec.name]!)
        if (given !== undefined) chosen[spec.name] = given
      }
      const stops = lines(stopSequences.control.value)
      if (stops.length) chosen.stopSequences = stops
      value.defaultSamplingParams = chosen
    },
  }
}
