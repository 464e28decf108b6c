import type { Engine } from './databases.js'
import type { Actor } from './identity-fixture.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from './memory-fixture.js'

/**
 * Spaces for time-aware retrieval and listing (issue 35), with memories of known ages: the
 * rows' created_at and updated_at are set directly in the test database once ingest has
 * finished (nothing writes them after that), so no test waits for time to pass.
 *
 * - `timed` (alice): three memories on one topic. created_at: old 2025-06-01, mid 2026-01-05,
 *   new 2026-01-10. updated_at: old 2025-06-02, then new and mid in the same millisecond
 *   (2026-01-15T00:00:00.000100Z and .000200Z), so updatedAt orders them old, new, mid and a
 *   page key cut to milliseconds would repeat or skip one.
 * - `expiring` (alice): `plain` (no validUntil), `valid` (ten years ahead), `expired` (a day ago).
 * - `twins` (alice): two memories of the same text, so of the same relevance; `older` was
 *   updated 30 days ago and is the one the tie (by chunk id) puts first without recency.
 * - `bobs` (bob, private): a memory like `timed`'s, for the access cases.
 */
export interface TimeSpace {
  spaceId: string
  /** Memory ids by name. */
  ids: Record<string, string>
  /** Memory name by id. */
  keyOf: Map<string, string>
}

export interface TimeFixture extends MemoryFixture {
  embedderId: string
  timed: TimeSpace
  expiring: TimeSpace
  twins: TimeSpace
  bobs: TimeSpace
  /** Sets a memory's created_at and updated_at (ISO text, microseconds kept). */
  backdate(memoryId: string, times: { createdAt?: string; updatedAt?: string }): Promise<void>
  /** A new space of `owner`'s with the fixture's embedder. */
  newSpace(owner: Actor, name: string): Promise<string>
  /** Creates a memory and waits until its ingest has finished. */
  addMemory(owner: Actor, body: Record<string, unknown>): Promise<string>
}

export const TIMED_TOPIC = 'lighthouse keeper storm log'
const TIMED_TEXT = (n: string) =>
  `Lighthouse log, entry ${n}: the keeper recorded a storm over the northern cliffs and lit the lamp early.`
export const HARBOR_TOPIC = 'harbor notice ferry'
const HARBOR_TEXT = (n: string) => `Harbor notice ${n}: the ferry leaves from pier four while the quay is repaired.`
export const TWIN_TOPIC = 'orchard apple harvest'
export const TWIN_TEXT = 'Orchard diary: the apple harvest started on the south slope, the pickers filled forty crates.'
export const DAY_SECONDS = 86_400
export const TWIN_AGE_DAYS = 30
const DAY_MS = DAY_SECONDS * 1000
const TEN_YEARS_MS = 3650 * DAY_MS

export const TIMED_TIMES = {
  old: { createdAt: '2025-06-01T00:00:00Z', updatedAt: '2025-06-02T00:00:00Z' },
  mid: { createdAt: '2026-01-05T00:00:00Z', updatedAt: '2026-01-15T00:00:00.000200Z' },
  new: { createdAt: '2026-01-10T00:00:00Z', updatedAt: '2026-01-15T00:00:00.000100Z' },
} as const

export async function startTimeFixture(engine: Engine): Promise<TimeFixture> {
  const fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 32 })
  const sql = () => fixture.server.server.context.sql
  const tag = `${engine}-${crypto.randomUUID().slice(0, 8)}`
  const embedders = new Map<string, string>()
  const embedderOf = async (owner: Actor) => {
    let id = embedders.get(owner.userId)
    if (!id) {
      id = await fixture.registerEmbedder(owner)
      embedders.set(owner.userId, id)
    }
    return id
  }
  const newSpace = async (owner: Actor, name: string) => {
    const created = await fixture.call(
      'rest',
      'createSpace',
      {
        name: `${name}-${tag}-${crypto.randomUUID().slice(0, 6)}`,
        spaceEmbedders: [{ embedderId: await embedderOf(owner) }],
      },
      owner.apiKey,
    )
    if (created.status !== 'OK') throw new Error(`space creation failed: ${created.message}`)
    return created.body.spaceId as string
  }
  const addMemory = async (owner: Actor, body: Record<string, unknown>) => {
    const created = await fixture.call('rest', 'createMemory', body, owner.apiKey)
    if (created.status !== 'OK') throw new Error(`memory creation failed: ${created.message}`)
    const memory = await fixture.settled(created.body.memoryId)
    if (memory.processingStatus !== 'COMPLETED') throw new Error(`ingest failed: ${memory.processingError}`)
    return memory.memoryId
  }
  // Bound as text: postgres.js sends a timestamptz parameter through Date, which keeps milliseconds only.
  const backdate = async (memoryId: string, times: { createdAt?: string; updatedAt?: string }) => {
    await sql()`
      update memories set
        created_at = coalesce(${times.createdAt ?? null}::text::timestamptz, created_at),
        updated_at = coalesce(${times.updatedAt ?? null}::text::timestamptz, updated_at)
      where id = ${memoryId}`
  }
  const spaceOf = async (
    owner: Actor,
    name: string,
    memories: Array<[string, Record<string, unknown>]>,
  ): Promise<TimeSpace> => {
    const spaceId = await newSpace(owner, name)
    const ids: Record<string, string> = {}
    for (const [key, body] of memories) ids[key] = await addMemory(owner, { spaceId, ...body })
    return { spaceId, ids, keyOf: new Map(Object.entries(ids).map(([key, id]) => [id, key])) }
  }

  const timed = await spaceOf(fixture.alice, 'timed', [
    ['old', { originalContent: TIMED_TEXT('one'), metadata: { entry: 1 } }],
    ['mid', { originalContent: TIMED_TEXT('two'), metadata: { entry: 2 } }],
    ['new', { originalContent: TIMED_TEXT('three'), metadata: { entry: 3 } }],
  ])
  for (const [key, times] of Object.entries(TIMED_TIMES)) await backdate(timed.ids[key]!, times)

  const now = Date.now()
  const expiring = await spaceOf(fixture.alice, 'expiring', [
    ['plain', { originalContent: HARBOR_TEXT('A') }],
    ['valid', { originalContent: HARBOR_TEXT('B'), validUntil: now + TEN_YEARS_MS }],
    ['expired', { originalContent: HARBOR_TEXT('C'), validUntil: now - DAY_MS }],
  ])

  const twins = await spaceOf(fixture.alice, 'twins', [
    ['first', { originalContent: TWIN_TEXT, metadata: { copy: 1 } }],
    ['second', { originalContent: TWIN_TEXT, metadata: { copy: 2 } }],
  ])
  // The older twin is the one a tie puts first (the lower chunk id): recency must turn the order round.
  const untilRecency = await fixture.call(
    'rest',
    'retrieveMemories',
    { message: TWIN_TOPIC, spaceKeys: [{ spaceId: twins.spaceId }], mode: 'VECTOR' },
    fixture.alice.apiKey,
  )
  const firstItem = untilRecency.body.events.find((event: any) => event.retrievedItem).retrievedItem.chunk
  const olderId = firstItem.memoryId as string
  const newerId = Object.values(twins.ids).find((id) => id !== olderId)!
  await backdate(olderId, { updatedAt: new Date(now - TWIN_AGE_DAYS * DAY_MS).toISOString() })
  twins.ids = { older: olderId, newer: newerId }
  twins.keyOf = new Map([
    [olderId, 'older'],
    [newerId, 'newer'],
  ])

  const bobs = await spaceOf(fixture.bob, 'bob-timed', [['old', { originalContent: TIMED_TEXT('bob') }]])
  await backdate(bobs.ids.old!, TIMED_TIMES.old)

  return {
    ...fixture,
    embedderId: await embedderOf(fixture.alice),
    timed,
    expiring,
    twins,
    bobs,
    backdate,
    newSpace,
    addMemory,
  }
}
