// Who may export and import a space, and see an import's progress, over both transports and
// engines: another user's space or import reads as absent (404), a space shared for reading
// exports but takes no import (403), an administrator may do both, and nothing of a provider's
// registration (endpoint, credentials) leaves in an export.
import { beforeAll, describe, expect, it } from 'vitest'
import { TRANSPORTS, type Transport } from '../support/api-client.js'
import { ENGINES } from '../support/databases.js'
import { startMemoryFixture } from '../support/memory-fixture.js'
import { exportSpaceText, getImport, importSpaceStream, textOf } from '../support/space-transfer.js'
import { useFixture } from './case-table.js'

const SECRET = `sk-transfer-${'s'.repeat(24)}`

describe.each(ENGINES)('space export and import, security (%s)', (engine) => {
  const fixture = useFixture(() => startMemoryFixture(engine))
  let privateSpace: string
  let publicSpace: string
  let aliceEmbedder: string
  let exported: string

  async function spaceOf(owner: 'alice' | 'bob', fields: Record<string, unknown> = {}) {
    const created = await fixture().call(
      'rest',
      'createSpace',
      { name: `space-${crypto.randomUUID()}`, ...fields },
      fixture()[owner].apiKey,
    )
    expect(created.status, created.message).toBe('OK')
    return created.body.spaceId as string
  }

  beforeAll(async () => {
    aliceEmbedder = await fixture().registerEmbedder(fixture().alice, {
      credentials: { kind: 'API_KEY', apiKey: { inlineSecret: SECRET } },
    })
    privateSpace = await spaceOf('alice', { spaceEmbedders: [{ embedderId: aliceEmbedder }] })
    publicSpace = await spaceOf('alice', { spaceEmbedders: [{ embedderId: aliceEmbedder }], publicRead: true })
    for (const spaceId of [privateSpace, publicSpace]) {
      const created = await fixture().call(
        'rest',
        'createMemory',
        { spaceId, originalContent: `Kept by alice in ${spaceId}: the lock combination is not here.` },
        fixture().alice.apiKey,
      )
      await fixture().settled(created.body.memoryId)
    }
    const answer = await exportSpaceText(fixture(), fixture().alice, 'rest', privateSpace)
    expect(answer.status, answer.message).toBe('OK')
    exported = answer.text
  }, 120_000)

  describe.each(TRANSPORTS)('over %s', (transport: Transport) => {
    it("reads another user's private space as absent: no export, no import", async () => {
      const bob = fixture().bob
      expect((await exportSpaceText(fixture(), bob, transport, privateSpace)).status).toBe('NOT_FOUND')
      const imported = await importSpaceStream(fixture(), bob, transport, { spaceId: privateSpace }, exported)
      expect(imported.status).toBe('NOT_FOUND')
    })

    it('exports a space shared for reading to anyone, but takes no import into it', async () => {
      const bob = fixture().bob
      const answer = await exportSpaceText(fixture(), bob, transport, publicSpace)
      expect(answer.status, answer.message).toBe('OK')
      expect(answer.lines.at(-1)).toMatchObject({ kind: 'end', memoryCount: 1 })
      const imported = await importSpaceStream(fixture(), bob, transport, { spaceId: publicSpace }, answer.text)
      expect(imported.status).toBe('PERMISSION_DENIED')
    })

    it("lets an administrator export and import into another user's space", async () => {
      const admin = fixture().admin
      const answer = await exportSpaceText(fixture(), admin, transport, privateSpace)
      expect(answer.status, answer.message).toBe('OK')
      const target = await spaceOf('alice', { spaceEmbedders: [{ embedderId: aliceEmbedder }] })
      const imported = await importSpaceStream(fixture(), admin, transport, { spaceId: target }, answer.text)
      expect(imported.status, imported.message).toBe('OK')
      expect(imported.body).toMatchObject({ memoriesImported: 1, createdById: fixture().admin.userId })
    })

    it('shows an import to its creator and administrators only; another user cannot see or resume it', async () => {
      const target = await spaceOf('alice', { spaceEmbedders: [{ embedderId: aliceEmbedder }] })
      const lines = exported.split('\n')
      const cut = await importSpaceStream(fixture(), fixture().alice, transport, { spaceId: target }, `${lines[0]}\n`)
      const importId = /import ([0-9a-f-]{36})/.exec(cut.message)?.[1]
      expect(importId, cut.message).toBeDefined()
      expect((await getImport(fixture(), fixture().bob, transport, importId!)).status).toBe('NOT_FOUND')
      expect((await getImport(fixture(), fixture().admin, transport, importId!)).status).toBe('OK')
      const resumed = await importSpaceStream(fixture(), fixture().bob, transport, { importId }, exported)
      expect(resumed.status).toBe('NOT_FOUND')
      const untouched = await getImport(fixture(), fixture().alice, transport, importId!)
      expect(untouched.body).toMatchObject({ state: 'RECEIVING', linesApplied: 1 })
    })

    it("never gives a new space another user's embedder, named or matched by fingerprint", async () => {
      const bob = fixture().bob
      const named = await importSpaceStream(
        fixture(),
        bob,
        transport,
        { newSpaceName: `bob-${crypto.randomUUID()}`, embedderIds: [aliceEmbedder] },
        exported,
      )
      expect(named.status).toBe('NOT_FOUND')
      expect(named.fields).toContain('embedderIds.0')
      const matched = await importSpaceStream(
        fixture(),
        bob,
        transport,
        { newSpaceName: `bob-${crypto.randomUUID()}` },
        exported,
      )
      expect(matched.status).toBe('INVALID_ARGUMENT')
      expect(matched.fields).toEqual(['line 1: embedders.0'])
      const spaces = await fixture().call('rest', 'listSpaces', {}, bob.apiKey)
      expect(spaces.body.spaces.filter((space: { name: string }) => space.name.startsWith('bob-'))).toEqual([])
    })

    it('refuses every call without a valid key', async () => {
      const nobody = { userId: '', apiKey: 'msk_not-a-key', apiKeyId: '' }
      expect((await exportSpaceText(fixture(), nobody, transport, privateSpace)).status).toBe('UNAUTHENTICATED')
      const imported = await importSpaceStream(fixture(), nobody, transport, { spaceId: privateSpace }, exported)
      expect(imported.status).toBe('UNAUTHENTICATED')
      expect((await getImport(fixture(), nobody, transport, crypto.randomUUID())).status).toBe('UNAUTHENTICATED')
    })
  })

  it("carries no provider endpoint or credential, and imports as the importer's memories", async () => {
    expect(exported).not.toContain(SECRET)
    expect(exported).not.toContain(fixture().embedder.url)
    const bobEmbedder = await fixture().registerEmbedder(fixture().bob)
    const [header, ...rest] = exported
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    const imported = await importSpaceStream(
      fixture(),
      fixture().bob,
      'rest',
      { newSpaceName: `bob-own-${crypto.randomUUID()}`, embedderIds: [bobEmbedder] },
      textOf([header, ...rest]),
    )
    expect(imported.status, imported.message).toBe('OK')
    const memories = await fixture().call(
      'rest',
      'listMemories',
      { spaceId: imported.body.spaceId },
      fixture().bob.apiKey,
    )
    expect(memories.body.memories.map((memory: { createdById: string }) => memory.createdById)).toEqual([
      fixture().bob.userId,
    ])
  })
})
