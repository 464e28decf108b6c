import { createUser, deleteUser, getMe, getUser, listUsers } from '../../../domain/users.js'
import { createUserSchema, listUsersSchema } from '../../../validation/identity.js'
import { EXAMPLE_IDS } from '../openapi/examples.js'
import { BY_ID, Component, created, json, LISTING, NO_CONTENT } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import { callContext } from '../request-input.js'
import type { RestRoute } from '../rest-route.js'
import { callWithId, callWithListQuery, createWithBody, deleteWithId } from '../use-case-handlers.js'

/** getMe answers a cached caller with the same object: its JSON is kept beside it, and goes with it. */
const meJson = new WeakMap<object, string>()

export const USER_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/v1/users',
    needsApiKey: true,
    openapi: {
      operationId: 'createUser',
      tag: 'users',
      summary: 'Create a user (admins)',
      body: Component.of('CreateUserRequest', createUserSchema),
      answers: { 201: created('The user.', VIEW.User) },
      errors: ['PERMISSION_DENIED', 'ALREADY_EXISTS'],
      examples: [{ body: { userId: EXAMPLE_IDS.user, username: 'ada', displayName: 'Ada Lovelace', role: 'USER' } }],
      exampleStatus: 201,
    },
    handle: createWithBody(createUser, (user) => `/v1/users/${user.userId}`),
  },
  {
    method: 'GET',
    pattern: '/v1/users',
    needsApiKey: true,
    openapi: {
      operationId: 'listUsers',
      tag: 'users',
      summary: 'List users (admins)',
      query: Component.of('ListUsersQuery', listUsersSchema),
      answers: { 200: json('A page.', VIEW.UserPage) },
      errors: LISTING,
      examples: [{ query: { maxResults: '50' } }],
      exampleStatus: 200,
    },
    handle: callWithListQuery(listUsers),
  },
  // Listed before /v1/users/:id so that "me" is never read as an id.
  {
    method: 'GET',
    pattern: '/v1/users/me',
    needsApiKey: true,
    openapi: {
      operationId: 'getMe',
      tag: 'users',
      summary: 'The caller',
      answers: { 200: json('The user the API key belongs to.', VIEW.User) },
      examples: [{}],
      exampleStatus: 200,
    },
    handle: async (request, { server }) => {
      const me = await getMe(server.domain, callContext(request))
      let text = meJson.get(me)
      if (text === undefined) {
        text = JSON.stringify(me)
        meJson.set(me, text)
      }
      return { status: 200, text }
    },
  },
  {
    method: 'GET',
    pattern: '/v1/users/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'getUser',
      tag: 'users',
      summary: 'Get a user',
      answers: { 200: json('The user.', VIEW.User) },
      errors: [...BY_ID, 'PERMISSION_DENIED'],
      examples: [{ path: { id: EXAMPLE_IDS.user } }],
      exampleStatus: 200,
    },
    handle: callWithId(getUser),
  },
  {
    method: 'DELETE',
    pattern: '/v1/users/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'deleteUser',
      tag: 'users',
      summary: 'Delete a user (admins)',
      answers: { 204: NO_CONTENT },
      errors: [...BY_ID, 'PERMISSION_DENIED', 'FAILED_PRECONDITION'],
      examples: [{ path: { id: EXAMPLE_IDS.user } }],
      exampleStatus: 204,
      examplePhase: 'cleanup',
    },
    handle: deleteWithId(deleteUser),
  },
]
