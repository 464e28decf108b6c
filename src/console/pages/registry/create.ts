// Register a new embedder, LLM or reranker.
import { call } from '../../api.js'
import { h } from '../../dom.js'
import type { RegistryKind } from '../../registry-kinds.js'
import type { PageContext, Registration } from '../../types.js'
import { announce, pageHeading } from '../../ui.js'
import { buildForm } from './form.js'
import type { FormValue } from './form-parts.js'
import { itemHref } from './shared.js'

/** Create: empty texts, unset numbers and empty sampling are left out (the server's defaults apply). */
function createBody(value: FormValue): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, item] of Object.entries(value)) {
    if (item === '' || item === undefined) continue
    if (name === 'labels' && Object.keys(item as object).length === 0) continue
    if (name === 'defaultSamplingParams' && Object.keys(item as object).length === 0) continue
    body[name] = item
  }
  return body
}

export async function createView(kind: RegistryKind, context: PageContext): Promise<void> {
  const form = buildForm(kind, context, undefined, async (built) => {
    const { value, violations } = built.collect()
    if (violations.length) return built.errors.showClient(violations)
    built.errors.clear()
    const result = await call<Registration>(`Register ${kind.singular}`, 'POST', kind.path, { body: createBody(value) })
    if (!result.ok || !result.data) {
      if (result.status === 404)
        return void built.errors.show(
          { ...result.error!, details: [] },
          `The ${kind.plural} API is not available on this server`,
        )
      return void built.errors.show(result.error!, 'Not registered')
    }
    announce(`${kind.singular[0]!.toUpperCase()}${kind.singular.slice(1)} "${result.data.displayName}" registered`)
    context.navigate(itemHref(kind, result.data))
  })
  context.root.append(
    h('p', { class: 'breadcrumb' }, h('a', { href: `#/${kind.route}` }, kind.title), ' / '),
    pageHeading(`Register ${kind.article}`),
    h('p', { class: 'muted' }, 'Fields marked * are required. Defaults for the chosen provider are filled in.'),
    form.element,
  )
}
