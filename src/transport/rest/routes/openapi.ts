import { VERSION } from '../../../runtime/environment.js'
import { generateOpenApiDocument } from '../openapi/generate.js'
import type { RestRoute } from '../rest-route.js'

/**
 * The OpenAPI document of `documented()`, the list this route is in (given so, as that list
 * imports this file): no key, as a client needs it before it has one.
 */
export function openApiRoute(documented: () => readonly RestRoute[]): RestRoute {
  let text: string | undefined
  return {
    method: 'GET',
    pattern: '/v1/openapi.json',
    drainExempt: 'api-document',
    openapi: {
      operationId: 'getOpenApiDocument',
      tag: 'system',
      summary: 'This document',
      answers: {
        200: {
          description: 'The OpenAPI 3.1 document of the REST API.',
          content: { 'application/json': { type: 'object' } },
        },
      },
      examples: [{}],
      exampleStatus: 200,
    },
    handle: () => {
      // Built on first request: most servers are never asked, and it takes tens of milliseconds.
      text ??= JSON.stringify(generateOpenApiDocument(VERSION, documented()))
      return { status: 200, headers: { 'cache-control': 'no-cache' }, text }
    },
  }
}
