// What the registration form and the sections of each kind share: the form's value, the
// makers of its text and number fields, and the shape of a kind's own fields.
import type { Child } from '../../dom.js'
import { type FormErrors, field, input } from '../../forms.js'
import type { Registration } from '../../types.js'

/** Everything the form holds, in the API's create shape; empty texts are "". */
export interface FormValue {
  [name: string]: unknown
}

export const numberOrUndefined = (control: HTMLInputElement): number | undefined =>
  control.value.trim() === '' ? undefined : Number(control.value)

type TextOptions = {
  required?: boolean
  hint?: Child
  value?: string
  type?: string
  placeholder?: string
  max?: number
}
type NumberOptions = { min: number; max: number; step: string; hint?: string; required?: boolean; value?: unknown }

/** Text and number fields whose server errors show in `errors`. */
export function fieldMakers(errors: FormErrors) {
  const text = (name: string, label: string, options: TextOptions = {}) =>
    field(
      errors,
      { name, label, required: options.required, hint: options.hint },
      input({
        type: options.type ?? 'text',
        value: options.value ?? '',
        placeholder: options.placeholder,
        maxlength: options.max,
        spellcheck: 'false',
      }),
    )
  const number = (name: string, label: string, options: NumberOptions) =>
    field(
      errors,
      { name, label, required: options.required, hint: options.hint },
      input({
        type: 'number',
        min: options.min,
        max: options.max,
        step: options.step,
        inputmode: options.step === '1' ? 'numeric' : 'decimal',
        value: options.value === undefined ? '' : String(options.value),
      }),
    )
  return { text, number }
}

export type FieldMakers = ReturnType<typeof fieldMakers>

export const str = (value: unknown) => (value === undefined || value === null ? '' : String(value))

/** The fields only one kind has: where they go in the form, and how they add to its value. */
export interface KindFields {
  /** In the "Model" section, after the shared ones. */
  modelFields: Child[]
  /** Sections after "Model". */
  sections: Child[]
  collect(value: FormValue): void
  /** Told the provider type when the form opens and whenever it changes (a LOCAL embedder has no required dimensionality). */
  providerChanged?(provider: string): void
}

/** Makes a kind's own fields; `modalities` is the shared modality group, placed where the kind wants it. */
export type KindFieldsMaker = (
  errors: FormErrors,
  make: FieldMakers,
  initial: Registration | undefined,
  modalities: HTMLElement,
) => KindFields
