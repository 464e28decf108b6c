import crypto from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { secretContext } from '../../src/domain/registry.js'
import { type ApiResult, type OperationName, TRANSPORTS, type Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { itEachCase, useIdentityFixture } from './case-table.js'
import { runCase } from './identity-cases.js'
import { ERROR_CASES, HAPPY_CASES, RESOURCES, SECURITY_CASES } from './registry-cases.js'

/** Every form in which a leaked secret could show up. */
function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  return [
    secret,
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    encodeURIComponent(secret),
    JSON.stringify(secret).slice(1, -1),
  ]
}

/** The scan replays the whole happy and error tables over both transports in one test: a bound on the test, not on speed. */
const SCAN_TIMEOUT_MS = 300_000

describe.each(ENGINES)('embedder, LLM and reranker registry, security cases (%s)', (engine) => {
  const currentFixture = useIdentityFixture(engine)
  itEachCase(currentFixture, SECURITY_CASES)

  it(
    'a known inline secret appears in no response, no error, no log line, and not in plaintext in the database',
    async () => {
      const fixture = currentFixture()
      // Base64url of random bytes: long and distinctive, so any leak in any encoding is found.
      const secret = `sk-scan-${crypto.randomBytes(24).toString('base64url')}`
      const secondSecret = `sk-scan-${crypto.randomBytes(24).toString('base64url')}`
      const seen: string[] = []
      const call = async (
        transport: Transport,
        operation: OperationName,
        input: any,
        apiKey = fixture.alice.apiKey,
      ): Promise<ApiResult> => {
        const result = await fixture.call(transport, operation, input, apiKey)
        seen.push(
          JSON.stringify({
            body: result.body,
            message: result.message,
            fields: result.fields,
            headers: result.headers ? [...result.headers] : undefined,
          }),
        )
        return result
      }
      const inline = (inlineSecret: string, extra: Record<string, unknown> = {}) => ({
        kind: 'API_KEY',
        apiKey: { inlineSecret, ...extra },
      })
      const registered: Array<{ table: string; id: string }> = []
      let operations = 0

      for (const transport of TRANSPORTS) {
        for (const r of RESOURCES) {
          const op = r.ops
          const id = r.idField
          const table = r.listField
          const count = async (result: Promise<ApiResult>, status = 'OK') => {
            operations++
            expect((await result).status).toBe(status)
            return result
          }
          // Create (as the owner and, for another owner, as an admin), read, list, update every way, fail every way, delete.
          const created = (
            await count(call(transport, op.create, r.input({ credentials: inline(secret), labels: { scan: 'yes' } })))
          ).body
          registered.push({ table, id: created[id] })
          const forBob = (
            await count(
              call(
                transport,
                op.create,
                r.input({ ownerId: fixture.bob.userId, credentials: inline(secret) }),
                fixture.admin.apiKey,
              ),
            )
          ).body
          registered.push({ table, id: forBob[id] })
          await count(call(transport, op.get, { [id]: created[id] }))
          await count(call(transport, op.get, { [id]: forBob[id] }, fixture.admin.apiKey))
          await count(call(transport, op.list, { maxResults: 1000 }))
          await count(call(transport, op.list, { labelFilter: { scan: 'yes' } }))
          await count(call(transport, op.list, { ownerId: fixture.bob.userId }, fixture.root.apiKey))
          await count(
            call(transport, op.update, { [id]: created[id], credentials: inline(secret, { headerName: 'x-api-key' }) }),
          )
          await count(
            call(transport, op.update, {
              [id]: created[id],
              credentials: { kind: 'API_KEY', apiKey: { prefix: 'Key' } },
            }),
          )
          await count(
            call(transport, op.update, { [id]: created[id], displayName: 'renamed', mergeLabels: { more: 'x' } }),
          )
          // Errors that carry the secret in their input.
          await count(
            call(transport, op.create, {
              ...r.input({ credentials: inline(secret) }),
              modelIdentifier: created.modelIdentifier,
              apiPath: created.apiPath,
            }),
            'ALREADY_EXISTS',
          )
          await count(call(transport, op.create, r.input({ credentials: inline(`${secret}\n`) })), 'INVALID_ARGUMENT')
          await count(
            call(transport, op.create, r.input({ credentials: { kind: 'NONE', apiKey: { inlineSecret: secret } } })),
            'INVALID_ARGUMENT',
          )
          await count(
            call(
              transport,
              op.create,
              r.input({ credentials: inline(secret, { headerName: secret.replace('-', ' ') }) }),
            ),
            'INVALID_ARGUMENT',
          )
          await count(
            call(transport, op.create, r.input({ ...r.invalidSetting, credentials: inline(secret) })),
            'INVALID_ARGUMENT',
          )
          await count(
            call(transport, op.create, r.input({ credentials: inline(secret) }), 'msk_not-a-key'),
            'UNAUTHENTICATED',
          )
          await count(call(transport, op.update, { [id]: forBob[id], credentials: inline(secret) }), 'NOT_FOUND')
          await count(
            call(transport, op.update, { [id]: created[id], providerType: 'VENDORA', credentials: inline(secret) }),
            'INVALID_ARGUMENT',
          )
          // Rotate to a second secret, then delete.
          const rotated = await count(
            call(transport, op.update, { [id]: created[id], credentials: inline(secondSecret) }),
          )
          expect(rotated.body.credentials.apiKey.secretFingerprint).not.toBe(
            created.credentials.apiKey.secretFingerprint,
          )
          await count(call(transport, op.delete, { [id]: forBob[id] }, fixture.admin.apiKey))
          registered.pop()
        }
      }
      // And the whole happy and error tables, for every response shape there is.
      for (const transport of TRANSPORTS) {
        for (const testCase of [...HAPPY_CASES, ...ERROR_CASES].filter(
          (entry) => !entry.only || entry.only === transport,
        ))
          await runCase(fixture, transport, testCase)
      }
      expect(operations).toBeGreaterThanOrEqual(120)

      const responses = [...seen, ...fixture.responses.map((body) => JSON.stringify(body) ?? '')]
      expect(responses.length).toBeGreaterThan(500)
      expect(fixture.server.logs.length).toBeGreaterThan(0)
      const dump = async (table: string) => {
        const rows = await fixture.server.server.context.sql.unsafe(`select t::text as row from ${table} t`)
        return rows.map((row) => String(row.row)).join('\n')
      }
      const database = (await Promise.all([...RESOURCES.map((r) => r.listField), 'encryption_key'].map(dump))).join(
        '\n',
      )
      for (const value of [secret, secondSecret]) {
        for (const form of secretForms(value)) {
          for (const response of responses)
            expect(response.includes(form), `secret (${form.slice(0, 12)}…) in a response`).toBe(false)
          for (const line of fixture.server.logs) expect(line.includes(form), `secret in log line: ${line}`).toBe(false)
          expect(database.includes(form), 'secret in plaintext in the database').toBe(false)
        }
      }

      // Stored encrypted, not lost: each sealed secret opens under the server key, and only in its own row.
      const secrets = fixture.server.server.context.secrets
      const [first, second] = registered.filter((entry) => entry.table === 'embedders')
      const [sealedFirst] = await fixture.server.server.context.sql.unsafe(
        `select credential_secret from embedders where id = $1`,
        [first!.id],
      )
      expect(secrets.open(sealedFirst!.credential_secret, secretContext('embedders', first!.id))).toBe(secondSecret)
      expect(() =>
        secrets.open(sealedFirst!.credential_secret, secretContext('embedders', second?.id ?? crypto.randomUUID())),
      ).toThrow()
      for (const table of ['llms', 'rerankers']) {
        const [row] = await fixture.server.server.context.sql.unsafe(
          `select id, credential_secret from ${table} where id = $1`,
          [registered.find((entry) => entry.table === table)!.id],
        )
        expect(secrets.open(row!.credential_secret, secretContext(table, row!.id))).toBe(secondSecret)
      }
    },
    SCAN_TIMEOUT_MS,
  )

  it('the database records the key id (a SHA-256 over the key), never the key', async () => {
    const fixture = currentFixture()
    const [row] = await fixture.server.server.context.sql`select key_id from encryption_key`
    expect(row!.key_id).toBe(fixture.server.server.context.secrets.keyId)
    expect(row!.key_id).toMatch(/^[0-9a-f]{64}$/)
  })
})
