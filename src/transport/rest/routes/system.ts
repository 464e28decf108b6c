import { getSystemInfo, initializeSystem } from '../../../domain/system.js'
import { json } from '../openapi/operation.js'
import { VIEW } from '../openapi/view-schemas.js'
import type { RestRoute } from '../rest-route.js'

export const SYSTEM_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    pattern: '/v1/system/info',
    openapi: {
      operationId: 'getSystemInfo',
      tag: 'system',
      summary: 'Version, state and storage of the server',
      answers: { 200: json('What the server runs and whether it is initialised.', VIEW.SystemInfo) },
      errors: ['UNAVAILABLE'],
      examples: [{}],
      exampleStatus: 200,
    },
    handle: async (_request, { server }) => ({ status: 200, json: await getSystemInfo(server) }),
  },
  {
    method: 'POST',
    pattern: '/v1/system/init',
    openapi: {
      operationId: 'initializeSystem',
      tag: 'system',
      summary: 'Create the root user and its API key (once)',
      description:
        'The first call answers the root API key, shown this once; later calls answer `alreadyInitialized: true`.',
      answers: { 200: json('The outcome.', VIEW.InitializeSystemResult) },
      errors: ['UNAVAILABLE'],
      examples: [{}],
      exampleStatus: 200,
    },
    handle: async (_request, { server }) => ({ status: 200, json: await initializeSystem(server.domain) }),
  },
]
