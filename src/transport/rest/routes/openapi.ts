import { VERSION } from '../../../runtime/environment.js'
import type { HttpServer } from '../http-server.js'
import { OPENAPI_PATH, openApiDocument } from '../openapi/document.js'

/** The OpenAPI document (openapi/document.ts): no key, as a client needs it before it has one. */
export function registerOpenApiRoute(http: HttpServer): void {
  let text: string | undefined
  http.route(
    'GET',
    OPENAPI_PATH,
    () => {
      // Built on first request: most servers are never asked, and it takes tens of milliseconds.
      text ??= JSON.stringify(openApiDocument(VERSION))
      return { status: 200, headers: { 'cache-control': 'no-cache' }, text }
    },
    { drainExempt: 'api-document' },
  )
}
