// A reranker's fields: only those every registration has.
import type { FormErrors } from '../../forms.js'
import type { Registration } from '../../types.js'
import type { FieldMakers, KindFields } from './form-parts.js'

/** A reranker has only the fields every registration has: the modalities stand alone in "Model". */
export function rerankerFields(
  _errors: FormErrors,
  _make: FieldMakers,
  _initial: Registration | undefined,
  modalities: HTMLElement,
): KindFields {
  return { modelFields: [modalities], sections: [], collect() {} }
}
