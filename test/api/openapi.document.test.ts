// The OpenAPI document is generated from the routes the server registers (routes/index.ts), so
// it cannot name a route the server lacks. What generation alone does not promise is checked
// here: every operation is named once and its example answers a status it documents, and the
// build wrote the same document.
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { openApiDocument } from '../../src/transport/rest/openapi/document.js'
import { REST_ROUTES } from '../../src/transport/rest/routes/index.js'
import { registeredRestRoutes } from '../support/rest-routes.js'

type Operations = ReturnType<typeof openApiDocument>['paths'][string]

const operationsOf = (paths: Record<string, Operations>) =>
  Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ label: `${method.toUpperCase()} ${path}`, operation })),
  )

describe('OpenAPI document', () => {
  const document = openApiDocument('test')
  const operations = operationsOf(document.paths)

  it('is generated from every route the server registers', () => {
    const registered = registeredRestRoutes().map((route) => `${route.method} ${route.pattern}`)
    expect(registered).toEqual(REST_ROUTES.map((route) => `${route.method} ${route.pattern}`))
    expect(operations.length).toBeGreaterThanOrEqual(registered.length)
  })

  it('names each operation once and gives it one step in the walk-through, its example answering a documented status', () => {
    const ids = operations.map(({ operation }) => operation.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    const steps = operations.map(({ operation }) => operation['x-example-step'] as number).sort((a, b) => a - b)
    expect(steps).toEqual(operations.map((_, index) => index + 1))
    for (const { label, operation } of operations)
      expect(Object.keys(operation.responses as object), label).toContain(String(operation['x-example-status']))
  })

  it('is what the build wrote to dist/openapi.json (npm test builds first)', () => {
    const built = JSON.parse(fs.readFileSync(new URL('../../dist/openapi.json', import.meta.url), 'utf8'))
    expect(
      operationsOf(built.paths)
        .map(({ label }) => label)
        .sort(),
    ).toEqual(operations.map(({ label }) => label).sort())
    expect(built.components.schemas).toEqual(document.components.schemas)
  })
})
