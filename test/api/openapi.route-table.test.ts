// The OpenAPI document and the REST server's route table are the same list: every route the
// server registers is documented, and every documented operation is served by a registered
// route. A custom method (`/v1/spaces/{id}:addEmbedder`) is served by its resource's
// `POST /v1/spaces/:id` route, as uWS reads `{id}:verb` as the id.
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { openApiDocument } from '../../src/transport/rest/openapi/document.js'
import { registeredRestRoutes } from '../support/rest-routes.js'

const METHODS = new Set(['get', 'post', 'put', 'delete'])

/** `/v1/spaces/{id}:addEmbedder` → `/v1/spaces/:id`: the uWS pattern that serves a documented path. */
const servingPattern = (path: string) => path.replace(/\{(\w+)\}(:\w+)?/g, ':$1')

function documentedRoutes(document: ReturnType<typeof openApiDocument>): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.has(method))
      .map((method) => `${method.toUpperCase()} ${servingPattern(path)}`),
  )
}

describe('OpenAPI document and REST route table', () => {
  const document = openApiDocument('test')
  const registered = registeredRestRoutes().map((route) => `${route.method} ${route.pattern}`)

  it('document every registered route, and only those', () => {
    expect(new Set(documentedRoutes(document))).toEqual(new Set(registered))
    expect(registered.length).toBeGreaterThanOrEqual(40)
  })

  it('give every operation an example, its status among the documented answers, and a unique step', () => {
    const steps = new Set<number>()
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const status = String(operation['x-example-status'])
        const responses = operation.responses as Record<string, unknown>
        expect(Object.keys(responses), `${method} ${path}`).toContain(status)
        steps.add(operation['x-example-step'] as number)
      }
    }
    expect(steps.size).toBe(documentedRoutes(document).length)
  })

  it('are what the build wrote to dist/openapi.json (npm test builds first)', () => {
    const built = JSON.parse(fs.readFileSync(new URL('../../dist/openapi.json', import.meta.url), 'utf8'))
    expect(documentedRoutes(built).sort()).toEqual(documentedRoutes(document).sort())
    expect(built.components.schemas).toEqual(document.components.schemas)
  })
})
