import type * as v from 'valibot'
import { requestProbe } from '../../../domain/probes.js'
import type { RegistryUseCases } from '../../../domain/registration-use-cases.js'
import { BY_ID, Component, created, type Example, json, LISTING, NO_CONTENT } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import { callContext, customMethodTarget } from '../request-input.js'
import type { RestRoute } from '../rest-route.js'
import { callWithId, callWithIdAndBody, callWithListQuery, createWithBody, deleteWithId } from '../use-case-handlers.js'

/** What the OpenAPI document says of one registry kind, beside its use cases (embedders.ts, llms.ts, rerankers.ts). */
export interface RegistryDescription {
  /** The view's component name; the operations are named after it (createEmbedder, listEmbedders). */
  view: 'Embedder' | 'Llm' | 'Reranker'
  /** As summaries name it, with its article: "an embedder", "a reranker". */
  noun: string
  article: 'a' | 'an'
  /** The requests as the server validates them. */
  schemas: { create: v.GenericSchema; update: v.GenericSchema; list: v.GenericSchema }
  /** The id the create examples register, which the later examples use. */
  exampleId: string
  createExamples: Example[]
  updateExample: unknown
}

/**
 * The routes of one registry kind: create, list, get, update, delete and the probe custom
 * method, the same for every kind.
 */
export function registrationRoutes<Item, Collection extends string>(
  kind: RegistryUseCases<Item, Collection>,
  described: RegistryDescription,
): RestRoute[] {
  const collection = `/v1/${kind.collection}`
  const { view, noun, article, schemas, exampleId } = described
  const plural = view === 'Llm' ? 'Llms' : `${view}s`
  const tag = kind.collection
  const byId = { path: { id: exampleId } }
  return [
    {
      method: 'POST',
      pattern: collection,
      needsApiKey: true,
      openapi: {
        operationId: `create${view}`,
        tag,
        summary: `Register ${article} ${noun}`,
        description: 'A connectivity probe runs in the background; its outcome shows as `lastProbe`.',
        body: Component.of(`Create${view}Request`, schemas.create),
        answers: { 201: created(`The ${noun}.`, VIEW[view]) },
        errors: ['ALREADY_EXISTS', 'PERMISSION_DENIED'],
        examples: described.createExamples,
        exampleStatus: 201,
      },
      handle: createWithBody(kind.create, (item) => `${collection}/${kind.idOf(item)}`),
    },
    {
      method: 'GET',
      pattern: collection,
      needsApiKey: true,
      openapi: {
        operationId: `list${plural}`,
        tag,
        summary: `List ${noun}s`,
        description: 'Filter by label with `label.<key>=<value>` query parameters.',
        query: Component.of(`List${plural}Query`, schemas.list),
        answers: { 200: json('A page.', VIEW[`${view}Page`]) },
        errors: LISTING,
        examples: [{ query: { maxResults: '10' } }],
        exampleStatus: 200,
      },
      handle: callWithListQuery(kind.list),
    },
    {
      method: 'GET',
      pattern: `${collection}/:id`,
      needsApiKey: true,
      openapi: {
        operationId: `get${view}`,
        tag,
        summary: `Get ${article} ${noun}`,
        answers: { 200: json(`The ${noun}.`, VIEW[view]) },
        errors: BY_ID,
        examples: [byId],
        exampleStatus: 200,
      },
      handle: callWithId(kind.get),
    },
    {
      method: 'PUT',
      pattern: `${collection}/:id`,
      needsApiKey: true,
      openapi: {
        operationId: `update${view}`,
        tag,
        summary: `Update ${article} ${noun}`,
        body: Component.of(`Update${view}Request`, schemas.update),
        answers: { 200: json(`The updated ${noun}.`, VIEW[view]) },
        errors: [...BY_ID, 'PERMISSION_DENIED'],
        examples: [{ ...byId, body: described.updateExample }],
        exampleStatus: 200,
      },
      handle: callWithIdAndBody(kind.update),
    },
    {
      method: 'POST',
      pattern: `${collection}/:id`,
      needsApiKey: true,
      openapi: {
        customMethod: 'probe',
        operationId: `probe${view}`,
        tag,
        summary: `Re-run the ${noun}'s connectivity probe`,
        answers: { 202: json('The probe job; its outcome shows as `lastProbe`.', VIEW.JobAccepted) },
        errors: BY_ID,
        examples: [byId],
        exampleStatus: 202,
      },
      handle: async (request, { server }) => ({
        status: 202,
        json: await requestProbe(
          server.domain,
          callContext(request),
          kind.resource,
          customMethodTarget(request, 'probe'),
        ),
      }),
    },
    {
      method: 'DELETE',
      pattern: `${collection}/:id`,
      needsApiKey: true,
      openapi: {
        operationId: `delete${view}`,
        tag,
        summary: `Delete ${article} ${noun}`,
        answers: { 204: NO_CONTENT },
        errors: [...BY_ID, 'PERMISSION_DENIED', 'FAILED_PRECONDITION'],
        examples: [byId],
        exampleStatus: 204,
        examplePhase: 'cleanup',
      },
      handle: deleteWithId(kind.delete),
    },
  ]
}
