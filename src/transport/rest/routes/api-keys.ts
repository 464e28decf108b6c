import { createApiKey, deleteApiKey, listApiKeys, updateApiKey } from '../../../domain/api-keys.js'
import { createApiKeySchema, listApiKeysSchema, updateApiKeySchema } from '../../../validation/identity.js'
import { EXAMPLE_IDS } from '../openapi/examples.js'
import { BY_ID, Component, created, json, LISTING, NO_CONTENT } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import { callContext, listQuery } from '../request-input.js'
import { listBody } from '../rest-messages.js'
import type { RestRoute } from '../rest-route.js'
import { callWithIdAndBody, createWithBody, deleteWithId } from '../use-case-handlers.js'

export const API_KEY_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/v1/apikeys',
    needsApiKey: true,
    openapi: {
      operationId: 'createApiKey',
      tag: 'apikeys',
      summary: 'Create an API key',
      description: 'The raw key (`msk_…`) is in this answer only; the server keeps its hash.',
      body: Component.of('CreateApiKeyRequest', createApiKeySchema),
      answers: { 201: created('The key and its metadata.', VIEW.CreatedApiKey) },
      errors: ['PERMISSION_DENIED', 'ALREADY_EXISTS'],
      examples: [{ body: { apiKeyId: EXAMPLE_IDS.apiKey, ownerId: EXAMPLE_IDS.user, labels: { purpose: 'docs' } } }],
      exampleStatus: 201,
    },
    handle: createWithBody(createApiKey, (created) => `/v1/apikeys/${created.apiKeyMetadata.apiKeyId}`),
  },
  {
    method: 'GET',
    pattern: '/v1/apikeys',
    needsApiKey: true,
    openapi: {
      operationId: 'listApiKeys',
      tag: 'apikeys',
      summary: 'List API keys',
      description: 'Filter by label with `label.<key>=<value>` query parameters.',
      query: Component.of('ListApiKeysQuery', listApiKeysSchema),
      answers: { 200: json('A page.', VIEW.ApiKeyPage) },
      errors: LISTING,
      examples: [{ query: { status: 'ACTIVE' } }],
      exampleStatus: 200,
    },
    handle: async (request, { server }) => {
      const page = await listApiKeys(server.domain, callContext(request), listQuery(request))
      return { status: 200, text: listBody('keys', page.keysJson, page.nextToken) }
    },
  },
  {
    method: 'PUT',
    pattern: '/v1/apikeys/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'updateApiKey',
      tag: 'apikeys',
      summary: 'Update an API key (status, labels)',
      body: Component.of('UpdateApiKeyRequest', updateApiKeySchema),
      answers: { 200: json('The key.', VIEW.ApiKey) },
      errors: [...BY_ID, 'PERMISSION_DENIED'],
      examples: [{ path: { id: EXAMPLE_IDS.apiKey }, body: { status: 'INACTIVE', mergeLabels: { rotated: 'yes' } } }],
      exampleStatus: 200,
    },
    handle: callWithIdAndBody(updateApiKey),
  },
  {
    method: 'DELETE',
    pattern: '/v1/apikeys/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'deleteApiKey',
      tag: 'apikeys',
      summary: 'Delete an API key',
      answers: { 204: NO_CONTENT },
      errors: [...BY_ID, 'PERMISSION_DENIED'],
      examples: [{ path: { id: EXAMPLE_IDS.apiKey } }],
      exampleStatus: 204,
      examplePhase: 'cleanup',
    },
    handle: deleteWithId(deleteApiKey),
  },
]
