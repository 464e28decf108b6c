// Labelled form fields, and the mapping of the server's validation errors
// (error.details[].field, e.g. "credentials.apiKey.headerName") to the field they name.
import { type ApiError, describeError, type FieldViolation } from './api.js'
import { type Attrs, type Child, h, replace, uid } from './dom.js'

export type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement

interface RegisteredField {
  name: string
  wrapper: HTMLElement
  error: HTMLElement
  focusTarget: HTMLElement
  controls: HTMLElement[]
}

/** Collects a form's fields; shows server or client errors next to them and a summary above. */
export class FormErrors {
  readonly #fields: RegisteredField[] = []
  /** The summary; put it at the top of the form. */
  readonly summary = h('div', { class: 'form-summary', hidden: true })

  constructor(private readonly aliases: Record<string, string> = {}) {}

  register(field: RegisteredField): void {
    this.#fields.push(field)
  }

  clear(): void {
    this.summary.hidden = true
    this.summary.replaceChildren()
    for (const field of this.#fields) {
      field.error.hidden = true
      field.error.textContent = ''
      field.wrapper.classList.remove('invalid')
      for (const control of field.controls) control.removeAttribute('aria-invalid')
    }
  }

  /** The path with its first segment renamed by the aliases (e.g. replaceLabels → labels). */
  #aliased(fieldPath: string): string {
    const [head, ...rest] = fieldPath.split('.')
    return [this.aliases[head!] ?? head, ...rest].join('.')
  }

  /** The registered field a violation belongs to: the longest name that is the field or a parent of it. */
  #fieldFor(path: string): RegisteredField | undefined {
    let best: RegisteredField | undefined
    for (const field of this.#fields) {
      if ((path === field.name || path.startsWith(`${field.name}.`)) && (!best || field.name.length > best.name.length))
        best = field
    }
    return best
  }

  /** Shows an error; returns how many of its details were placed next to a field. */
  show(error: ApiError, prefix = 'Not saved'): number {
    this.clear()
    let placed = 0
    let first: RegisteredField | undefined
    const unplaced: FieldViolation[] = []
    for (const detail of error.details) {
      const path = this.#aliased(detail.field)
      const field = this.#fieldFor(path)
      if (!field?.wrapper.isConnected || field.wrapper.closest('[hidden]')) {
        unplaced.push(detail)
        continue
      }
      placed++
      first ??= field
      const sub = path.length > field.name.length ? `${path.slice(field.name.length + 1)}: ` : ''
      field.error.textContent = field.error.textContent
        ? `${field.error.textContent}; ${sub}${detail.description}`
        : `${sub}${detail.description}`
      field.error.hidden = false
      field.wrapper.classList.add('invalid')
      for (const control of field.controls) control.setAttribute('aria-invalid', 'true')
    }
    replace(
      this.summary,
      h('p', null, h('strong', null, `${prefix}: `), describeError(error)),
      placed > 0
        ? h(
            'p',
            null,
            placed === 1 ? 'The field concerned is marked below.' : `The ${placed} fields concerned are marked below.`,
          )
        : null,
      unplaced.length > 0
        ? h(
            'ul',
            null,
            unplaced.map((detail) => h('li', null, `${detail.field}: ${detail.description}`)),
          )
        : null,
    )
    this.summary.setAttribute('role', 'alert')
    this.summary.hidden = false
    ;(first?.focusTarget ?? this.summary).focus()
    return placed
  }

  /** Errors found before sending (e.g. a label line without "="), shown the same way. */
  showClient(violations: FieldViolation[]): void {
    // describeError prints only the message for code 0.
    this.show(
      { code: 0, status: 'CHECK', message: 'please correct the fields marked below', details: violations },
      'Not sent',
    )
  }
}

export interface FieldSpec {
  /** The API's field path, e.g. "credentials.apiKey.inlineSecret". */
  name: string
  label: string
  hint?: Child
  required?: boolean
}

function describedBy(hintId: string | undefined, errorId: string): string {
  return [hintId, errorId].filter(Boolean).join(' ')
}

/** A labelled control with its hint and error line. */
export function field<C extends Control>(
  form: FormErrors,
  spec: FieldSpec,
  control: C,
): { wrapper: HTMLElement; control: C } {
  const id = control.id || uid('field')
  control.id = id
  if (!control.getAttribute('name')) control.setAttribute('name', spec.name)
  if (spec.required) control.required = true
  const hintId = spec.hint ? uid('hint') : undefined
  const errorId = uid('error')
  control.setAttribute('aria-describedby', describedBy(hintId, errorId))
  const error = h('p', { class: 'field-error', id: errorId, hidden: true })
  const wrapper = h(
    'div',
    { class: 'field', 'data-field': spec.name },
    h(
      'label',
      { for: id },
      spec.label,
      spec.required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null,
    ),
    control,
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    error,
  )
  form.register({ name: spec.name, wrapper, error, focusTarget: control, controls: [control] })
  return { wrapper, control }
}

/** A fieldset of checkboxes or radios with one error line. */
export function groupField(
  form: FormErrors,
  spec: FieldSpec,
  controls: HTMLInputElement[],
  labels: string[],
): HTMLElement {
  const errorId = uid('error')
  const hintId = spec.hint ? uid('hint') : undefined
  const error = h('p', { class: 'field-error', id: errorId, hidden: true })
  const items = controls.map((control, index) => {
    control.id ||= uid('choice')
    control.setAttribute('aria-describedby', describedBy(hintId, errorId))
    return h('div', { class: 'choice' }, control, h('label', { for: control.id }, labels[index]))
  })
  const wrapper = h(
    'fieldset',
    { class: 'field group', 'data-field': spec.name },
    h('legend', null, spec.label),
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    h('div', { class: 'choices' }, items),
    error,
  )
  form.register({ name: spec.name, wrapper, error, focusTarget: controls[0]!, controls })
  return wrapper
}

export function input(attrs: Attrs = {}): HTMLInputElement {
  return h('input', { type: 'text', ...attrs })
}

export function textarea(attrs: Attrs = {}): HTMLTextAreaElement {
  return h('textarea', { rows: 3, ...attrs })
}

export function select(options: Array<string | [string, string]>, attrs: Attrs = {}): HTMLSelectElement {
  return h(
    'select',
    attrs,
    options.map((option) => {
      const [value, label] = Array.isArray(option) ? option : [option, option]
      return h('option', { value }, label)
    }),
  )
}

/** "key=value" per line → labels; lines without "=" are reported for `fieldName`. */
export function parseLabels(
  text: string,
  fieldName: string,
): { labels: Record<string, string>; violations: FieldViolation[] } {
  const labels: Record<string, string> = {}
  const violations: FieldViolation[] = []
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim()
    if (!line) return
    const equals = line.indexOf('=')
    if (equals <= 0) {
      violations.push({ field: fieldName, description: `line ${index + 1}: write key=value` })
      return
    }
    labels[line.slice(0, equals).trim()] = line.slice(equals + 1).trim()
  })
  return { labels, violations }
}

export const formatLabels = (labels: Record<string, string> | undefined): string =>
  Object.entries(labels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join('\n')

/** Non-empty trimmed lines. */
export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)

/**
 * The browser's own checks (required, type=url, min/max/step) as violations, so they are
 * shown next to their fields like the server's. Hidden and disabled controls are skipped.
 */
export function nativeViolations(form: HTMLFormElement): FieldViolation[] {
  const violations: FieldViolation[] = []
  const seen = new Set<string>()
  for (const element of Array.from(form.elements)) {
    if (
      !(
        element instanceof HTMLInputElement ||
        element instanceof HTMLSelectElement ||
        element instanceof HTMLTextAreaElement
      )
    )
      continue
    if (element.disabled || element.closest('[hidden]') || element.checkValidity()) continue
    if (seen.has(element.name)) continue
    seen.add(element.name)
    violations.push({ field: element.name, description: element.validationMessage })
  }
  return violations
}

/** What a checked form is made of; see checkedForm. */
export interface CheckedFormSpec<T> {
  errors: FormErrors
  /** The form's attributes after its class and novalidate, e.g. its aria-label. */
  attrs: Attrs
  /** The page's own checks: adds their violations to the browser's, and answers what they parsed, for `send`. */
  check?: (violations: FieldViolation[]) => T
  /** Runs only when nothing is violated, after the errors shown before are cleared. */
  send: (checked: T) => Promise<unknown>
}

/**
 * A form that the browser does not check by itself (novalidate): on submit, the browser's checks and the
 * page's are shown next to their fields like the server's, and the form is sent only when there are none.
 * The errors' summary comes first, above the `children`.
 */
export function checkedForm<T>(className: string, spec: CheckedFormSpec<T>, ...children: Child[]): HTMLFormElement {
  const form: HTMLFormElement = h(
    'form',
    {
      class: className,
      novalidate: true,
      ...spec.attrs,
      onSubmit: async (event: Event) => {
        event.preventDefault()
        const violations = nativeViolations(form)
        const checked = spec.check?.(violations) as T
        if (violations.length) return spec.errors.showClient(violations)
        spec.errors.clear()
        await spec.send(checked)
      },
    },
    spec.errors.summary,
    ...children,
  )
  return form
}
