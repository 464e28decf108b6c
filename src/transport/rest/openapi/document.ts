// The OpenAPI 3.1 document of the REST API: the one GET /v1/openapi.json serves (routes/openapi.ts)
// and the build writes to dist/openapi.json, generated (generate.ts) from the routes the server
// registers (routes/index.ts).
import { REST_ROUTES } from '../routes/index.js'
import { generateOpenApiDocument, type OpenApiDocument } from './generate.js'

export type { OpenApiDocument }

export function openApiDocument(version: string): OpenApiDocument {
  return generateOpenApiDocument(version, REST_ROUTES)
}
