import * as memories from '../../src/domain/memories.js'
import * as spaces from '../../src/domain/spaces.js'
import type { Engine } from './databases.js'
import type { Actor } from './identity-fixture.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from './memory-fixture.js'

/**
 * Notes whose keyword ranking is known, written by the test: six about the garden (a common
 * word here), one naming Europa (a rare one), one about oceans (stemming), one about a tower,
 * and one of English stop words only (nothing to index in english).
 */
export const KEYWORD_NOTES = [
  { key: 'garden-1', text: 'Notes from the garden: the tomatoes ripened early this year.' },
  { key: 'garden-2', text: 'The garden needs water every morning during the dry weeks of summer.' },
  { key: 'garden-3', text: 'Compost from the kitchen feeds the garden beds through the winter.' },
  { key: 'garden-4', text: 'We planted garlic along the garden fence in October.' },
  { key: 'garden-5', text: 'Snails ate half of the lettuce in the garden again.' },
  { key: 'garden-6', text: 'A new bench sits at the far end of the garden, under the apple tree.' },
  { key: 'europa', text: 'Europa, a moon of Jupiter, may hide liquid water under its ice.' },
  { key: 'oceans', text: 'The oceans cover most of the planet and hold nearly all of its water.' },
  { key: 'tower', text: 'The tower of the old castle was rebuilt in stone after the fire.' },
  { key: 'stop-words', text: 'It is what it is, and that is all there is to it.' },
] as const

export type NoteKey = (typeof KEYWORD_NOTES)[number]['key']

export interface WrittenNotes {
  spaceId: string
  keyOf: Map<string, NoteKey>
  idOf: Map<NoteKey, string>
}

/**
 * A running server with two keyword-only spaces of alice's holding KEYWORD_NOTES: one in
 * english (the default) and one in simple (no stop words, no stemming); and an embedder of
 * alice's for the cases that add one to a space of their own.
 */
export interface KeywordFixture extends MemoryFixture {
  english: WrittenNotes
  simple: WrittenNotes
  aliceEmbedder: string
}

export async function writeNotes(
  fixture: MemoryFixture,
  owner: Actor,
  options: { name: string; textSearchLanguage?: string },
): Promise<WrittenNotes> {
  const context = fixture.server.server.context
  const call = fixture.as(owner)
  const space = await spaces.createSpace(context, call, options)
  const keyOf = new Map<string, NoteKey>()
  const idOf = new Map<NoteKey, string>()
  for (const note of KEYWORD_NOTES) {
    const { memory } = await memories.createMemory(context, call, {
      spaceId: space.spaceId,
      originalContent: note.text,
    })
    keyOf.set(memory.memoryId, note.key)
    idOf.set(note.key, memory.memoryId)
  }
  for (const id of keyOf.keys()) {
    const done = await fixture.settled(id)
    if (done.processingStatus !== 'COMPLETED')
      throw new Error(`note ${id} ended ${done.processingStatus}: ${done.processingError}`)
  }
  return { spaceId: space.spaceId, keyOf, idOf }
}

export async function startKeywordFixture(engine: Engine): Promise<KeywordFixture> {
  const fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 32 })
  const tag = `${engine}-${crypto.randomUUID().slice(0, 8)}`
  return {
    ...fixture,
    english: await writeNotes(fixture, fixture.alice, { name: `notes-${tag}` }),
    simple: await writeNotes(fixture, fixture.alice, { name: `notes-simple-${tag}`, textSearchLanguage: 'simple' }),
    aliceEmbedder: await fixture.registerEmbedder(fixture.alice),
  }
}
