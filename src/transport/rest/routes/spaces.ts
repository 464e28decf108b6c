import {
  addSpaceEmbedder,
  createSpace,
  deleteSpace,
  getSpace,
  listSpaces,
  removeSpaceEmbedder,
  updateSpace,
} from '../../../domain/spaces.js'
import {
  addEmbedderSchema,
  createSpaceSchema,
  listSpacesSchema,
  removeEmbedderSchema,
  updateSpaceSchema,
} from '../../../validation/memory.js'
import { EXAMPLE_IDS } from '../openapi/examples.js'
import { BY_ID, Component, created, json, LISTING, NO_CONTENT } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import { callContext, customMethodTarget, jsonBody } from '../request-input.js'
import type { RestRoute } from '../rest-route.js'
import { callWithId, callWithIdAndBody, callWithListQuery, createWithBody, deleteWithId } from '../use-case-handlers.js'
import { EXPORT_SPACE_OPERATION, exportSpaceAnswer } from './space-transfer.js'

const inExampleSpace = { path: { id: EXAMPLE_IDS.space } }
const getSpaceById = callWithId(getSpace)

export const SPACE_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    pattern: '/v1/spaces',
    needsApiKey: true,
    openapi: {
      operationId: 'createSpace',
      tag: 'spaces',
      summary: 'Create a space',
      body: Component.of('CreateSpaceRequest', createSpaceSchema),
      answers: { 201: created('The space.', VIEW.Space) },
      errors: ['PERMISSION_DENIED', 'ALREADY_EXISTS', 'NOT_FOUND'],
      examples: [
        {
          body: {
            spaceId: EXAMPLE_IDS.space,
            name: 'Research notes',
            labels: { project: 'engine' },
            spaceEmbedders: [{ embedderId: EXAMPLE_IDS.embedder, defaultRetrievalWeight: 1 }],
            defaultChunkingConfig: { recursive: { chunkSize: 256, chunkOverlap: 32 } },
          },
        },
      ],
      exampleStatus: 201,
    },
    handle: createWithBody(createSpace, (space) => `/v1/spaces/${space.spaceId}`),
  },
  {
    method: 'GET',
    pattern: '/v1/spaces',
    needsApiKey: true,
    openapi: {
      operationId: 'listSpaces',
      tag: 'spaces',
      summary: 'List spaces',
      description: 'Filter by label with `label.<key>=<value>` query parameters.',
      query: Component.of('ListSpacesQuery', listSpacesSchema),
      answers: { 200: json('A page.', VIEW.SpacePage) },
      errors: LISTING,
      examples: [{ query: { maxResults: '20' } }],
      exampleStatus: 200,
    },
    handle: callWithListQuery(listSpaces),
  },
  {
    method: 'GET',
    pattern: '/v1/spaces/:id',
    needsApiKey: true,
    openapi: [
      {
        operationId: 'getSpace',
        tag: 'spaces',
        summary: 'Get a space',
        answers: { 200: json('The space.', VIEW.Space) },
        errors: BY_ID,
        examples: [inExampleSpace],
        exampleStatus: 200,
      },
      EXPORT_SPACE_OPERATION,
    ],
    handle: (request, deps) =>
      (request.params.id ?? '').endsWith(':export') ? exportSpaceAnswer(request, deps) : getSpaceById(request, deps),
  },
  {
    method: 'PUT',
    pattern: '/v1/spaces/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'updateSpace',
      tag: 'spaces',
      summary: 'Update a space',
      body: Component.of('UpdateSpaceRequest', updateSpaceSchema),
      answers: { 200: json('The space.', VIEW.Space) },
      errors: [...BY_ID, 'PERMISSION_DENIED'],
      examples: [{ ...inExampleSpace, body: { name: 'Engine research', publicRead: false } }],
      exampleStatus: 200,
    },
    handle: callWithIdAndBody(updateSpace),
  },
  {
    method: 'POST',
    pattern: '/v1/spaces/:id',
    needsApiKey: true,
    openapi: [
      {
        customMethod: 'addEmbedder',
        operationId: 'addSpaceEmbedder',
        tag: 'spaces',
        summary: 'Add an embedder to a space',
        description: 'Memories already in the space are embedded in the background (`indexState: BACKFILLING`).',
        body: Component.of('AddEmbedderRequest', addEmbedderSchema),
        answers: { 202: json('The space.', VIEW.Space) },
        errors: [...BY_ID, 'PERMISSION_DENIED', 'ALREADY_EXISTS', 'FAILED_PRECONDITION'],
        examples: [
          { ...inExampleSpace, body: { embedderId: EXAMPLE_IDS.secondEmbedder, defaultRetrievalWeight: 0.5 } },
        ],
        exampleStatus: 202,
      },
      {
        customMethod: 'removeEmbedder',
        operationId: 'removeSpaceEmbedder',
        tag: 'spaces',
        summary: 'Remove an embedder from a space',
        body: Component.of('RemoveEmbedderRequest', removeEmbedderSchema),
        answers: { 200: json('The space.', VIEW.Space) },
        errors: [...BY_ID, 'PERMISSION_DENIED'],
        examples: [{ ...inExampleSpace, body: { embedderId: EXAMPLE_IDS.secondEmbedder } }],
        exampleStatus: 200,
      },
    ],
    handle: async (request, { server }) => {
      if ((request.params.id ?? '').endsWith(':addEmbedder')) {
        const space = await addSpaceEmbedder(
          server.domain,
          callContext(request),
          customMethodTarget(request, 'addEmbedder'),
          jsonBody(request),
        )
        return { status: 202, json: space }
      }
      return {
        status: 200,
        json: await removeSpaceEmbedder(
          server.domain,
          callContext(request),
          customMethodTarget(request, 'removeEmbedder'),
          jsonBody(request),
        ),
      }
    },
  },
  {
    method: 'DELETE',
    pattern: '/v1/spaces/:id',
    needsApiKey: true,
    openapi: {
      operationId: 'deleteSpace',
      tag: 'spaces',
      summary: 'Delete a space and its memories',
      answers: { 204: NO_CONTENT },
      errors: [...BY_ID, 'PERMISSION_DENIED'],
      examples: [inExampleSpace],
      exampleStatus: 204,
      examplePhase: 'cleanup',
    },
    handle: deleteWithId(deleteSpace),
  },
]
