// The keyword search scores only some of a space's chunks (src/db/sql/retrieval.ts
// keywordChunks: chunks holding at least 3, then 2, of the message's rarer words, else any
// of its rarest words). In a space where the best chunks hold several of the message's
// words, its answer is what scoring every chunk of the space would give, on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Queryable } from '../../src/db/database.js'
import { keywordChunks } from '../../src/db/sql/retrieval.js'
import * as spaces from '../../src/domain/spaces.js'
import { chunkRowsOf, insertChunkRows, insertMemoryRows } from '../support/chunk-rows.js'
import { ENGINES } from '../support/databases.js'
import { FAST_MEMORY_JOBS, type MemoryFixture, startMemoryFixture } from '../support/memory-fixture.js'
import { seededRandom } from '../support/seeded-random.js'

/** Enough chunks that the message's words, each in at most a tenth of them, are in hundreds together. */
const CHUNKS = 2_000
/** Chunks about the topic: each holds 3 to 5 of TOPIC_WORDS. */
const TOPIC_CHUNKS = 150
/** Chunks holding TOPIC_WORDS[0] and PAIRED_WORD, and no other topic word. */
const PAIRED_CHUNKS = 40
/** Chunks holding one topic word, once or three times. */
const LONE_CHUNKS = 100
const TOPIC_WORDS = ['quokka', 'axolotl', 'pangolin', 'narwhal', 'okapi']
const PAIRED_WORD = 'capybara'
const FILLER_WORDS = 12
const LIMIT = 20

/** Made-up filler words (no English stop word, none a topic word): 600 of them. */
const FILLER = Array.from(
  { length: 600 },
  (_, index) => `zor${String.fromCharCode(97 + (index % 26))}${Math.floor(index / 26)}x`,
)

function texts(): string[] {
  const random = seededRandom(36)
  const filler = () => Array.from({ length: FILLER_WORDS }, () => FILLER[Math.floor(random() * FILLER.length)]!)
  const shuffled = (words: string[]) => words.sort(() => random() - 0.5).join(' ')
  const out: string[] = []
  for (let index = 0; index < TOPIC_CHUNKS; index++) {
    const held = TOPIC_WORDS.filter(() => random() < 0.7)
    while (held.length < 3) held.push(TOPIC_WORDS.find((word) => !held.includes(word))!)
    // Some topic words repeat, so term frequency matters to the order.
    const repeats = held.filter(() => random() < 0.2)
    out.push(shuffled([...held, ...repeats, ...filler()]))
  }
  for (let index = 0; index < PAIRED_CHUNKS; index++) out.push(shuffled([TOPIC_WORDS[0]!, PAIRED_WORD, ...filler()]))
  for (let index = 0; index < LONE_CHUNKS; index++) {
    const word = TOPIC_WORDS[index % TOPIC_WORDS.length]!
    out.push(shuffled([...(index % 2 === 0 ? [word] : [word, word, word]), ...filler()]))
  }
  while (out.length < CHUNKS) out.push(shuffled(filler()))
  return out
}

/** BM25 of every chunk of the space holding a word of the message: what keywordChunks approximates. */
async function scoredEverywhere(sql: Queryable, spaceId: string, message: string) {
  return sql<Array<{ chunk_id: string; score: number }>>`
    with words as (select distinct lexeme as word from unnest(to_tsvector('english', ${message}))),
    space as (
      select chunk_count::float8 as chunks, lexeme_count::float8 / chunk_count as average_length
      from space_text_stats where space_id = ${spaceId}
    ),
    terms as (
      select w.word, ln(1 + (sp.chunks - coalesce(st.chunk_count, 0) + 0.5) / (coalesce(st.chunk_count, 0) + 0.5)) as idf
      from words w cross join space sp left join space_word_stats st on st.space_id = ${spaceId} and st.word = w.word
    ),
    ideal as (select sum(idf) as score, array_agg(word) as words from terms)
    select c.id as chunk_id, least(1, sum(t.idf * o.tf * 2.2 / (o.tf + 1.2 * (0.25 + 0.75 * length(c.search_vector) / sp.average_length)))
      / max(i.score))::float8 as score
    from chunks c cross join space sp cross join ideal i
    cross join lateral (
      select f.lexeme, coalesce(cardinality(f.positions), 1) as tf from unnest(ts_filter(setweight(c.search_vector, 'A', i.words), '{a}')) f
    ) o
    join terms t on t.word = o.lexeme
    where c.space_id = ${spaceId}
    group by c.id
    order by 2 desc, 1
    limit ${LIMIT}`
}

describe.each(ENGINES)('keyword ranking over %s', (engine) => {
  let fixture: MemoryFixture
  let spaceId: string
  const sql = () => fixture.server.server.context.sql

  beforeAll(async () => {
    fixture = await startMemoryFixture(engine, FAST_MEMORY_JOBS, { dimensions: 8 })
    const context = fixture.server.server.context
    const space = await spaces.createSpace(context, fixture.as(fixture.alice), { name: `ranking-${engine}` })
    spaceId = space.spaceId
    // Written as rows (the ingest's own tables and triggers), not through 2,000 ingest jobs.
    const rows = chunkRowsOf(texts())
    const target = { spaceId, userId: fixture.alice.userId }
    await sql().begin((tx) => [insertMemoryRows(tx, target, rows), insertChunkRows(tx, target, rows)])
  }, 120_000)
  afterAll(async () => {
    await fixture?.stop()
  })

  const cases = [
    ['the topic words: the chunks holding 3 or more of them', TOPIC_WORDS.join(' ')],
    ['two words found together: the chunks holding both', `${TOPIC_WORDS[0]} ${PAIRED_WORD}`],
    ['one word: every chunk holding it', TOPIC_WORDS[3]!],
    ['a word in no chunk beside the topic words', `${TOPIC_WORDS.join(' ')} wombat`],
  ] as const
  it.each(cases)('%s ranks as scoring every chunk would', async (_name, message) => {
    const expected = await scoredEverywhere(sql(), spaceId, message)
    const found = await keywordChunks(sql(), { spaceId, language: 'english', message, limit: LIMIT })
    expect(expected).toHaveLength(LIMIT)
    expect(found.map((chunk) => chunk.chunk_id)).toEqual(expected.map((chunk) => chunk.chunk_id))
    for (const [index, chunk] of found.entries()) expect(chunk.score).toBeCloseTo(expected[index]!.score, 12)
  })
})
