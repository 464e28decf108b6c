import { type EmbedderRow, embeddersTable } from '../db/sql/embedders.js'
import { dropEmbedderIndex } from '../db/vector-index-upkeep.js'
import {
  createEmbedderSchema,
  type DistributionType,
  defaultEmbedderApiPath,
  type EmbedderProviderType,
  listEmbeddersSchema,
  updateEmbedderSchema,
} from '../validation/registry.js'
import { checkedLocalRow, checkLocalEmbedderUpdate, isLocalEmbedder, withModelSettings } from './local-embedders.js'
import * as registrations from './registration-use-cases.js'
import { type RegistrationView, registrationView } from './registry.js'

/** An embedder as every response carries it: credentials without the secret. */
export type Embedder = { embedderId: string } & RegistrationView<EmbedderProviderType> & {
    dimensionality: number
    distributionType: DistributionType
    maxSequenceLength?: number
  }

export function toEmbedder(row: EmbedderRow): Embedder {
  return {
    embedderId: row.id,
    ...registrationView<EmbedderProviderType>(row),
    dimensionality: row.dimensionality,
    distributionType: row.distribution_type as DistributionType,
    maxSequenceLength: row.max_sequence_length ?? undefined,
  }
}

/** How the shared registration steps name and store embedders. */
const EMBEDDER: registrations.RegistrationKind<EmbedderRow, (typeof embeddersTable.mutableColumns)[number]> = {
  resource: 'EMBEDDER',
  noun: 'embedder',
  table: embeddersTable,
}

/** The use cases the transports call, under the names every kind shares. */
export const embedderUseCases = registrations.registryUseCases(EMBEDDER, {
  collection: 'embedders',
  idField: 'embedderId',
  createSchema: createEmbedderSchema,
  listSchema: listEmbeddersSchema,
  updateSchema: updateEmbedderSchema,
  defaultApiPath: (request) => defaultEmbedderApiPath(request.providerType),
  // A LOCAL embedder's dimensionality and token limit come from its model (local-embedders.ts).
  prepareCreate: async (context, request) =>
    isLocalEmbedder(request.providerType) ? withModelSettings(context, request) : request,
  newKindColumns: (request) => ({
    // Present for every embedder by now: the schema requires it of an HTTP one, prepareCreate fills a LOCAL one's.
    dimensionality: request.dimensionality!,
    distribution_type: request.distributionType,
    max_sequence_length: request.maxSequenceLength ?? null,
  }),
  nextKindColumns: (current, request) => {
    if (isLocalEmbedder(current.provider_type)) checkLocalEmbedderUpdate(request)
    return {
      dimensionality: request.dimensionality ?? current.dimensionality,
      distribution_type: request.distributionType ?? current.distribution_type,
      max_sequence_length: request.maxSequenceLength ?? current.max_sequence_length,
    }
  },
  reviseUpdatedRow: async (context, current, next, request) =>
    isLocalEmbedder(current.provider_type) ? checkedLocalRow(context, current, next, request) : next,
  toItem: toEmbedder,
  // The spaces using it plan retrieval from its registration (endpoint, credentials, dimensionality).
  aroundWrite: (context, id, write) => context.spaceRows.afterEmbedderWrite(id, write),
  // Its vectors went with it (foreign keys); its index, on the table every embedder shares, is dropped apart.
  afterDelete: (context, id) => dropEmbedderIndex(context.sql, id, context.log),
})

export const {
  create: createEmbedder,
  list: listEmbedders,
  get: getEmbedder,
  /** A field given replaces the stored value; labels replace or merge; providerType cannot change. */
  update: updateEmbedder,
  /** Its vectors and its index go with it. */
  delete: deleteEmbedder,
} = embedderUseCases
