import type { Queryable } from '../db/database.js'
import { type EmbedderRow, findLabelledEmbedderId } from '../db/sql/embedders.js'
import { invalidArgument } from '../errors/app-error.js'
import type { LocalModelDescription } from '../providers/local/local-models.js'
import { LocalModelError } from '../providers/local/model-directory.js'
import { LOCAL_EMBEDDER_RULES, LOCAL_PROVIDER_TYPE, localEmbedderConflicts } from '../validation/registry.js'
import type { DomainContext } from './context.js'
import { ROLE_PERMISSIONS, type Role } from './permissions.js'

/**
 * The rules of a LOCAL embedder's registration that need its model: the model must be
 * there and work (it is loaded and embeds a probe sentence), the dimensionality is the
 * model's (filled in when left out, a 400 naming dimensionality when it differs), and the
 * token limit is at most the model's (filled in when left out). Everything a LOCAL
 * embedder may not say about a provider is refused by its schema (validation/registry.ts).
 */

export const isLocalEmbedder = (providerType: string | undefined) => providerType === LOCAL_PROVIDER_TYPE

/** The model, loaded and probed; a model that cannot be used is a 400 naming modelIdentifier and the problem. */
async function describeModel(context: DomainContext, modelIdentifier: string): Promise<LocalModelDescription> {
  try {
    return await context.localModels.describe(modelIdentifier)
  } catch (error) {
    if (error instanceof LocalModelError) throw invalidArgument('modelIdentifier', error.message)
    // A thread lost or a queue full: not the request's fault.
    throw error
  }
}

interface ModelSettings {
  modelIdentifier: string
  dimensionality?: number
  maxSequenceLength?: number
}

/** A LOCAL embedder's create request with its dimensionality and token limit filled in and checked against the model. */
export async function withModelSettings<Request extends ModelSettings>(
  context: DomainContext,
  request: Request,
): Promise<Request & { dimensionality: number; maxSequenceLength: number }> {
  const model = await describeModel(context, request.modelIdentifier)
  if (request.dimensionality !== undefined && request.dimensionality !== model.dimensions)
    throw invalidArgument(
      'dimensionality',
      `the model "${model.name}" returns ${model.dimensions} dimensions, not ${request.dimensionality}; ` +
        "leave dimensionality out to take the model's",
    )
  if (request.maxSequenceLength !== undefined && request.maxSequenceLength > model.maxTokens)
    throw invalidArgument('maxSequenceLength', `the model "${model.name}" takes at most ${model.maxTokens} tokens`)
  return {
    ...request,
    dimensionality: model.dimensions,
    maxSequenceLength: request.maxSequenceLength ?? model.maxTokens,
  }
}

/** The fields of an update request the rules look at. */
export interface LocalEmbedderUpdate {
  endpointUrl?: string
  apiPath?: string
  credentials?: { kind: string }
  distributionType?: string
  maxSequenceLength?: number
}

/** Refuses what a LOCAL embedder's update may not say, whatever the model (no endpoint, path or credential). */
export function checkLocalEmbedderUpdate(request: LocalEmbedderUpdate): void {
  const [conflict] = localEmbedderConflicts(request)
  if (conflict) throw invalidArgument(conflict, LOCAL_EMBEDDER_RULES[conflict])
}

/**
 * A LOCAL embedder's row after an update that touches its model, checked against the model:
 * the stored vectors have the old dimensionality, so another model must return the same one.
 * A token limit left as it was is lowered to a new model's.
 */
export async function checkedLocalRow(
  context: DomainContext,
  current: EmbedderRow,
  next: EmbedderRow,
  request: LocalEmbedderUpdate,
): Promise<EmbedderRow> {
  const touched =
    next.model_identifier !== current.model_identifier ||
    next.dimensionality !== current.dimensionality ||
    next.max_sequence_length !== current.max_sequence_length
  if (!touched) return next
  const model = await describeModel(context, next.model_identifier)
  if (next.dimensionality !== model.dimensions)
    throw invalidArgument(
      'dimensionality',
      `the model "${model.name}" returns ${model.dimensions} dimensions, and this embedder's vectors have ` +
        `${next.dimensionality}; register a new embedder for a model of another size`,
    )
  const limit = next.max_sequence_length ?? model.maxTokens
  if (limit > model.maxTokens && request.maxSequenceLength !== undefined)
    throw invalidArgument('maxSequenceLength', `the model "${model.name}" takes at most ${model.maxTokens} tokens`)
  return { ...next, max_sequence_length: Math.min(limit, model.maxTokens) }
}

/**
 * The label that makes a LOCAL embedder the default of spaces created without embedders.
 * System init puts it on the embedders it registers for the models it finds; an operator
 * may put it on any LOCAL embedder (for instance one registered for a user).
 */
export const DEFAULT_EMBEDDER_LABEL = { 'memsvc.default': 'true' } as const

/**
 * The embedders a space gets when its create request names none: the default LOCAL embedder
 * its owner may use (the owner's own first, then, for an owner who may use any embedder,
 * the one system init registered), or none, which makes a keyword-only space.
 */
export async function defaultSpaceEmbedders(
  sql: Queryable,
  ownerId: string,
  ownerRole: Role,
): Promise<Array<{ embedderId: string; defaultRetrievalWeight?: number }>> {
  const embedderId = await findLabelledEmbedderId(sql, {
    ownerId,
    ownerMayUseAny: ROLE_PERMISSIONS[ownerRole].has('GET_EMBEDDER_ANY'),
    providerType: LOCAL_PROVIDER_TYPE,
    label: DEFAULT_EMBEDDER_LABEL,
  })
  return embedderId ? [{ embedderId }] : []
}
