import * as memories from '../../src/domain/memories.js'
import type { RetrievalEvent } from '../../src/domain/retrieval.js'
import * as spaces from '../../src/domain/spaces.js'
import type { Actor } from './identity-fixture.js'
import type { MemoryFixture } from './memory-fixture.js'

/**
 * A small corpus whose right answers are known: each question below shares its telling
 * words with exactly one passage, so every mode should rank that passage first.
 */
export const CORPUS = [
  {
    key: 'eiffel',
    text: 'The Eiffel Tower stands in Paris and was completed in 1889 for the World Fair.',
    metadata: {
      topic: 'travel',
      year: 1889,
      tags: ['france', 'landmark'],
      rating: '4.5',
      published: '2021-03-01T00:00:00Z',
    },
  },
  {
    key: 'photosynthesis',
    text: 'Photosynthesis lets plant leaves turn sunlight, water and carbon dioxide into glucose and oxygen.',
    metadata: { topic: 'biology', year: 1779, tags: ['plants'], rating: '5', published: '2022-06-15T00:00:00Z' },
  },
  {
    key: 'wall',
    text: 'The Great Wall of China stretches thousands of kilometres across the hills of northern China.',
    metadata: { topic: 'travel', year: -700, tags: ['china', 'landmark'], rating: 'n/a', published: 'someday' },
  },
  {
    key: 'mitochondria',
    text: 'Mitochondria are the powerhouse of the cell: they produce ATP from nutrients.',
    metadata: { topic: 'biology', tags: ['cells'], reviewed: true },
  },
  {
    key: 'rust',
    text: 'Rust guarantees memory safety without a garbage collector through ownership and borrowing rules.',
    metadata: { topic: 'programming', tags: ['rust', 'safety'], author: { name: "O'Brien" } },
  },
  {
    key: 'postgres',
    text: 'PostgreSQL offers full text search with tsvector columns and GIN indexes.',
    metadata: { topic: 'programming', tags: ['databases'], author: { name: 'Ada' }, reviewed: 'false' },
  },
] as const

export type CorpusKey = (typeof CORPUS)[number]['key']

export const QUESTIONS: Array<{ message: string; answer: CorpusKey }> = [
  { message: 'How do plant leaves turn sunlight into glucose?', answer: 'photosynthesis' },
  { message: 'Which tower stands in Paris?', answer: 'eiffel' },
  { message: 'memory safety without a garbage collector', answer: 'rust' },
]

export interface LoadedCorpus {
  spaceId: string
  /** Memory id → corpus key, and back. */
  keyOf: Map<string, CorpusKey>
  idOf: Map<CorpusKey, string>
}

export async function loadCorpus(
  fixture: MemoryFixture,
  owner: Actor,
  embedderIds: string[],
  options: { name: string; publicRead?: boolean },
): Promise<LoadedCorpus> {
  const context = fixture.server.server.context
  const call = fixture.as(owner)
  const space = await spaces.createSpace(context, call, {
    name: options.name,
    publicRead: options.publicRead ?? false,
    spaceEmbedders: embedderIds.map((embedderId) => ({ embedderId })),
  })
  const keyOf = new Map<string, CorpusKey>()
  const idOf = new Map<CorpusKey, string>()
  for (const entry of CORPUS) {
    const { memory } = await memories.createMemory(context, call, {
      spaceId: space.spaceId,
      originalContent: entry.text,
      metadata: entry.metadata,
    })
    keyOf.set(memory.memoryId, entry.key)
    idOf.set(entry.key, memory.memoryId)
  }
  for (const id of keyOf.keys()) {
    const done = await fixture.settled(id)
    if (done.processingStatus !== 'COMPLETED')
      throw new Error(`corpus memory ${id} ended ${done.processingStatus}: ${done.processingError}`)
  }
  return { spaceId: space.spaceId, keyOf, idOf }
}

export async function collect(events: AsyncIterable<RetrievalEvent>): Promise<RetrievalEvent[]> {
  const all: RetrievalEvent[] = []
  for await (const event of events) all.push(event)
  return all
}

export const itemsOf = (events: RetrievalEvent[]) =>
  events.flatMap((event) => ('retrievedItem' in event ? [event.retrievedItem.chunk] : []))
