import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import { AppError } from '../../src/errors/app-error.js'
import { ENGINES } from '../support/databases.js'
import { type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'OK'
  } catch (error) {
    if (error instanceof AppError) return error.code
    throw error
  }
}

describe.each(ENGINES)('spaces and memories: owner boundaries (%s)', (engine) => {
  let fixture: MemoryFixture
  let privateSpace: string
  let publicSpace: string
  let privateMemory: string
  let publicMemory: string
  let aliceEmbedder: string
  const context = () => fixture.server.server.context

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine)
    const alice = fixture.as(fixture.alice)
    aliceEmbedder = await fixture.registerEmbedder(fixture.alice)
    privateSpace = (
      await spaces.createSpace(context(), alice, { name: 'private', spaceEmbedders: [{ embedderId: aliceEmbedder }] })
    ).spaceId
    publicSpace = (
      await spaces.createSpace(context(), alice, {
        name: 'public',
        publicRead: true,
        spaceEmbedders: [{ embedderId: aliceEmbedder }],
      })
    ).spaceId
    privateMemory = (
      await memories.createMemory(context(), alice, { spaceId: privateSpace, originalContent: 'secret plans' })
    ).memory.memoryId
    publicMemory = (
      await memories.createMemory(context(), alice, { spaceId: publicSpace, originalContent: 'shared notes' })
    ).memory.memoryId
  }, 240_000)
  afterAll(() => fixture?.stop())

  it("another user's private space and its memories answer 404 to every call, as if absent", async () => {
    const bob = fixture.as(fixture.bob)
    const calls: Array<[string, Promise<unknown>]> = [
      ['getSpace', spaces.getSpace(context(), bob, privateSpace)],
      ['updateSpace', spaces.updateSpace(context(), bob, privateSpace, { name: 'mine now' })],
      ['deleteSpace', spaces.deleteSpace(context(), bob, privateSpace)],
      ['addSpaceEmbedder', spaces.addSpaceEmbedder(context(), bob, privateSpace, { embedderId: aliceEmbedder })],
      ['removeSpaceEmbedder', spaces.removeSpaceEmbedder(context(), bob, privateSpace, { embedderId: aliceEmbedder })],
      ['createMemory', memories.createMemory(context(), bob, { spaceId: privateSpace, originalContent: 'intrusion' })],
      ['listMemories', memories.listMemories(context(), bob, { spaceId: privateSpace })],
      ['getMemory', memories.getMemory(context(), bob, privateMemory)],
      ['getMemoryContent', memories.getMemoryContent(context(), bob, privateMemory)],
      ['deleteMemory', memories.deleteMemory(context(), bob, privateMemory)],
      [
        'batchDelete by space',
        memories.batchDeleteMemories(context(), bob, {
          spaceId: privateSpace,
          statusFilter: 'COMPLETED',
          dryRun: true,
        }),
      ],
    ]
    const codes = Object.fromEntries(
      await Promise.all(calls.map(async ([name, call]) => [name, await codeOf(call)] as const)),
    )
    expect(codes).toEqual(Object.fromEntries(calls.map(([name]) => [name, 'NOT_FOUND'])))
    const byIds = await memories.batchDeleteMemories(context(), bob, { memoryIds: [privateMemory] })
    expect(byIds).toEqual({
      deletedCount: 0,
      results: [{ memoryId: privateMemory, deleted: false, error: 'not found' }],
      dryRun: false,
    })
    expect((await memories.getMemory(context(), fixture.as(fixture.alice), privateMemory)).memoryId).toBe(privateMemory)
  })

  it('a publicRead space can be read by others but not written: 403 on every write', async () => {
    const bob = fixture.as(fixture.bob)
    expect((await spaces.getSpace(context(), bob, publicSpace)).spaceId).toBe(publicSpace)
    expect(
      (await memories.listMemories(context(), bob, { spaceId: publicSpace })).memories.map((memory) => memory.memoryId),
    ).toEqual([publicMemory])
    expect((await memories.getMemoryContent(context(), bob, publicMemory)).originalContent).toBe('shared notes')
    const writes: Array<[string, Promise<unknown>]> = [
      ['updateSpace', spaces.updateSpace(context(), bob, publicSpace, { publicRead: false })],
      ['deleteSpace', spaces.deleteSpace(context(), bob, publicSpace)],
      ['createMemory', memories.createMemory(context(), bob, { spaceId: publicSpace, originalContent: 'graffiti' })],
      ['deleteMemory', memories.deleteMemory(context(), bob, publicMemory)],
      [
        'batchDelete by space',
        memories.batchDeleteMemories(context(), bob, { spaceId: publicSpace, statusFilter: 'COMPLETED', dryRun: true }),
      ],
    ]
    const codes = Object.fromEntries(
      await Promise.all(writes.map(async ([name, call]) => [name, await codeOf(call)] as const)),
    )
    expect(codes).toEqual(Object.fromEntries(writes.map(([name]) => [name, 'PERMISSION_DENIED'])))
    expect((await memories.getMemory(context(), bob, publicMemory)).memoryId).toBe(publicMemory)
  })

  it("a space cannot use an embedder its owner cannot read; an admin may act on anyone's space", async () => {
    const bob = fixture.as(fixture.bob)
    expect(
      await codeOf(
        spaces.createSpace(context(), bob, { name: 'borrowed', spaceEmbedders: [{ embedderId: aliceEmbedder }] }),
      ),
    ).toBe('NOT_FOUND')
    const admin = fixture.as(fixture.admin)
    // The admin sees alice's embedder, but bob (USER) may not use it in his space.
    expect(
      await codeOf(
        spaces.createSpace(context(), admin, {
          name: 'for bob',
          ownerId: fixture.bob.userId,
          spaceEmbedders: [{ embedderId: aliceEmbedder }],
        }),
      ),
    ).toBe('PERMISSION_DENIED')
    expect(
      await codeOf(
        spaces.createSpace(context(), bob, {
          name: 'for alice',
          ownerId: fixture.alice.userId,
          spaceEmbedders: [{ embedderId: aliceEmbedder }],
        }),
      ),
    ).toBe('PERMISSION_DENIED')
    expect((await spaces.getSpace(context(), admin, privateSpace)).ownerId).toBe(fixture.alice.userId)
    expect((await memories.getMemory(context(), admin, privateMemory)).memoryId).toBe(privateMemory)
    const listed = await spaces.listSpaces(context(), admin, { ownerId: fixture.alice.userId })
    expect(listed.spaces.map((space) => space.spaceId).sort()).toEqual([privateSpace, publicSpace].sort())
    expect(await codeOf(spaces.listSpaces(context(), bob, { ownerId: fixture.alice.userId }))).toBe('PERMISSION_DENIED')
  })

  it('no call answers without a valid key', async () => {
    const anonymous = { requestId: 'anonymous', transport: 'rest' as const }
    expect(await codeOf(spaces.getSpace(context(), anonymous, publicSpace))).toBe('UNAUTHENTICATED')
    expect(await codeOf(memories.getMemoryContent(context(), anonymous, publicMemory))).toBe('UNAUTHENTICATED')
  })
})
