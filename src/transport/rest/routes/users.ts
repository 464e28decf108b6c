import type { ServerContext } from '../../../domain/context.js'
import { createUser, deleteUser, getMe, getUser, listUsers } from '../../../domain/users.js'
import type { HttpServer } from '../http-server.js'
import { callContext, jsonBody, listQuery } from '../request-input.js'

/** getMe answers a cached caller with the same object: its JSON is kept beside it, and goes with it. */
const meJson = new WeakMap<object, string>()

export function registerUserRoutes(http: HttpServer, server: ServerContext): void {
  const needsKey = { needsApiKey: true }
  http.route(
    'POST',
    '/v1/users',
    async (request) => {
      const user = await createUser(server.domain, callContext(request), jsonBody(request))
      return { status: 201, headers: { location: `/v1/users/${user.userId}` }, json: user }
    },
    needsKey,
  )
  http.route(
    'GET',
    '/v1/users',
    async (request) => ({
      status: 200,
      json: await listUsers(server.domain, callContext(request), listQuery(request)),
    }),
    needsKey,
  )
  // Registered before /v1/users/:id so that "me" is never read as an id.
  http.route(
    'GET',
    '/v1/users/me',
    async (request) => {
      const me = await getMe(server.domain, callContext(request))
      let text = meJson.get(me)
      if (text === undefined) meJson.set(me, (text = JSON.stringify(me)))
      return { status: 200, text }
    },
    needsKey,
  )
  http.route(
    'GET',
    '/v1/users/:id',
    async (request) => ({ status: 200, json: await getUser(server.domain, callContext(request), request.params.id) }),
    needsKey,
  )
  http.route(
    'DELETE',
    '/v1/users/:id',
    async (request) => {
      await deleteUser(server.domain, callContext(request), request.params.id)
      return { status: 204 }
    },
    needsKey,
  )
}
