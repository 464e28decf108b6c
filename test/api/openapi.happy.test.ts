// Every example in the OpenAPI document, sent to a real server in the order the document gives
// (`x-example-step`): each answers the status the document says (`x-example-status`) with a body
// its schema accepts, so the document cannot promise what the server does not do. Streamed
// retrieval answers are checked event by event (NDJSON lines, SSE `data:` lines).
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { VERSION } from '../../src/runtime/environment.js'
import { openApiDocument } from '../../src/transport/rest/openapi/document.js'
import { ENGINES } from '../support/databases.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

type Json = Record<string, any>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const STREAM_EVENT = '#/components/schemas/RetrievalEvent'

interface Step {
  method: string
  path: string
  operation: Json
}

function stepsOf(document: Json): Step[] {
  const steps: Step[] = []
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item))
      steps.push({ method: method.toUpperCase(), path, operation })
  }
  return steps.sort((a, b) => a.operation['x-example-step'] - b.operation['x-example-step'])
}

/** The request bodies an operation's examples send; one request without a body when it takes none. */
function bodiesOf(operation: Json): { name: string; body?: unknown }[] {
  const examples = operation.requestBody?.content?.['application/json']?.examples as
    | Record<string, { value: unknown }>
    | undefined
  return examples
    ? Object.entries(examples).map(([name, example]) => ({ name, body: example.value }))
    : [{ name: 'no body' }]
}

function urlOf(baseUrl: string, step: Step): string {
  const parameters = (step.operation.parameters ?? []) as Json[]
  let path = step.path
  const query = new URLSearchParams()
  for (const parameter of parameters) {
    if (parameter.example === undefined) continue
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(parameter.example))
    if (parameter.in === 'query')
      for (const value of [parameter.example].flat()) query.append(parameter.name, String(value))
  }
  const search = query.toString()
  return `${baseUrl}${path}${search ? `?${search}` : ''}`
}

describe.each(ENGINES)('OpenAPI examples against a real server (%s)', (engine) => {
  let server: TestServer
  let document: Json
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addFormat('uuid', UUID)

  beforeAll(async () => {
    server = await startTestServer({ engine })
    const answer = await fetch(`${server.restUrl}/v1/openapi.json`)
    expect(answer.status).toBe(200)
    document = (await answer.json()) as Json
    ajv.addSchema(document, 'openapi.json')
  })
  afterAll(async () => server?.stop())

  function expectValid(schemaRef: string, value: unknown, what: string): void {
    const validate = ajv.getSchema(`openapi.json${schemaRef}`) ?? ajv.compile({ $ref: `openapi.json${schemaRef}` })
    const valid = validate(value)
    expect(valid ? [] : validate.errors, `${what}: ${JSON.stringify(value).slice(0, 500)}`).toEqual([])
  }

  it('is the document the code generates', () => {
    expect(document).toEqual(JSON.parse(JSON.stringify(openApiDocument(VERSION))))
  })

  it('answers every example as documented, in order', async () => {
    let rootKey = ''
    const credentials = (security: Json[]): Record<string, string> => {
      const scheme = Object.keys(security[0] ?? {})[0]
      if (scheme === 'bearerApiKey') return { authorization: `Bearer ${rootKey}` }
      if (scheme === 'mcpApiKey') return { 'x-api-key': rootKey }
      if (scheme === 'metricsKey') return { 'x-service-metrics-key': server.config.metrics.secret }
      return {}
    }
    let sent = 0
    for (const step of stepsOf(document)) {
      const { operation } = step
      const expectedStatus = operation['x-example-status'] as number
      const headers: Record<string, string> = { ...credentials(operation.security as Json[]) }
      for (const parameter of (operation.parameters ?? []) as Json[])
        if (parameter.in === 'header') headers[parameter.name] = parameter.example
      for (const { name, body } of bodiesOf(operation)) {
        const what = `${step.method} ${step.path} (${name})`
        const answer = await fetch(urlOf(server.restUrl, step), {
          method: step.method,
          redirect: 'manual',
          headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        const text = await answer.text()
        expect(answer.status, `${what}: ${text.slice(0, 500)}`).toBe(expectedStatus)
        sent++
        let response = operation.responses[String(expectedStatus)] as Json
        if (response.$ref) response = document.components.responses[String(response.$ref).split('/').at(-1) as string]
        const contentType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
        if (!response.content) {
          expect(text, what).toBe('')
          continue
        }
        expect(Object.keys(response.content), what).toContain(contentType)
        const schema = response.content[contentType].schema as Json
        if (contentType === 'application/x-ndjson') {
          const events = text.split('\n').filter((line) => line.trim() !== '')
          expect(events.length, what).toBeGreaterThanOrEqual(2)
          // Retrieval events, or a space export's lines: each line as its answer's schema says.
          for (const line of events) expectValid(schema.$ref ?? STREAM_EVENT, JSON.parse(line), what)
        } else if (contentType === 'text/event-stream') {
          const events = text
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => JSON.parse(line.slice('data: '.length)))
          expect(events.length, what).toBeGreaterThanOrEqual(1)
          // An SSE answer carries the same events as the JSON forms beside it: retrieval events, or MCP's JSON-RPC response.
          const eventSchema = step.path === '/mcp' ? '#/components/schemas/JsonRpcResponse' : STREAM_EVENT
          for (const event of events) expectValid(eventSchema, event, what)
        } else if (contentType === 'application/json') {
          const parsed = JSON.parse(text)
          if (schema.$ref) expectValid(schema.$ref, parsed, what)
          else expect(typeof parsed, what).toBe(schema.type)
          if (operation.operationId === 'initializeSystem') rootKey = parsed.rootApiKey
        } else {
          expect(text.length, what).toBeGreaterThan(0)
        }
      }
    }
    expect(rootKey).toMatch(/^msk_/)
    expect(sent).toBeGreaterThan(Object.keys(document.paths).length)
  })
})
