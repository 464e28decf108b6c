import type { CallContext } from '../../domain/call-context.js'
import type { DomainContext } from '../../domain/context.js'
import { callContext, jsonBody, listQuery } from './request-input.js'
import type { RestRoute } from './rest-route.js'

// Handlers that hand the request to one use case and answer what it returns, as most routes do.
// Each reads the use case's input from one place of the request (the JSON body, the list query,
// the path's id) and answers 200 with the use case's answer as JSON, unless its name says otherwise.
// server.domain is read per call: it is not there until the database is ready.

type Handle = RestRoute['handle']
type UseCase<Input extends unknown[], Answer = unknown> = (
  context: DomainContext,
  call: CallContext,
  ...input: Input
) => Promise<Answer>

/** The JSON body in. */
export const callWithBody =
  (useCase: UseCase<[input: unknown]>): Handle =>
  async (request, { server }) => ({
    status: 200,
    json: await useCase(server.domain, callContext(request), jsonBody(request)),
  })

/** The list parameters of the query string in (listQuery: `label.<key>=<value>` becomes labelFilter). */
export const callWithListQuery =
  (useCase: UseCase<[input: unknown]>): Handle =>
  async (request, { server }) => ({
    status: 200,
    json: await useCase(server.domain, callContext(request), listQuery(request)),
  })

/** The list parameters with the path's id among them as `idField`: a listing within one item (a space's memories). */
export const callWithIdAndListQuery =
  (idField: string, useCase: UseCase<[input: unknown]>): Handle =>
  async (request, { server }) => ({
    status: 200,
    json: await useCase(server.domain, callContext(request), { ...listQuery(request), [idField]: request.params.id }),
  })

/** The path's id in. */
export const callWithId =
  (useCase: UseCase<[id: unknown]>): Handle =>
  async (request, { server }) => ({
    status: 200,
    json: await useCase(server.domain, callContext(request), request.params.id),
  })

/** The path's id and the JSON body in: an update. */
export const callWithIdAndBody =
  (useCase: UseCase<[id: unknown, input: unknown]>): Handle =>
  async (request, { server }) => ({
    status: 200,
    json: await useCase(server.domain, callContext(request), request.params.id, jsonBody(request)),
  })

/** The path's id in: a deletion, answered 204 without a body. */
export const deleteWithId =
  (useCase: UseCase<[id: unknown], void>): Handle =>
  async (request, { server }) => {
    await useCase(server.domain, callContext(request), request.params.id)
    return { status: 204 }
  }

/** The JSON body in: a creation, answered 201 with what was created and where it lives (`location`). */
export const createWithBody =
  <Created>(useCase: UseCase<[input: unknown], Created>, location: (created: Created) => string): Handle =>
  async (request, { server }) => {
    const created = await useCase(server.domain, callContext(request), jsonBody(request))
    return { status: 201, headers: { location: location(created) }, json: created }
  }
