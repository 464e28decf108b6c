// Recall@10 of the HNSW search at several ef_search values, against exact search, on a
// database the memory benchmark filled (run it while `npm run bench -- --memory` is in its
// retrieval phase, or on a copy):
//   node --import tsx bench/tools/recall-sweep.ts postgres://postgres@127.0.0.1/DB SPACE_ID EMBEDDER_ID [queries] [ef,ef,...]
import postgres from 'postgres'
import { indexedVectorType } from '../../src/db/vector-storage.js'
import { hashedBagOfWords } from '../../test/support/fake-embedder.js'
import { memoryCorpus } from '../lib/memory-corpus.js'

const [url, spaceId, embedderId, queryText = '40', efText = '40,64,100,150,200'] = process.argv.slice(2)
if (!url || !spaceId || !embedderId) throw new Error('usage: recall-sweep.ts URL SPACE_ID EMBEDDER_ID [queries] [ef,…]')
const DIMENSIONS = 384
const K = 10
const CANDIDATES = 20
const sql = postgres(url, { max: 1, onnotice: () => {} })
const type = sql.unsafe(`vector(${DIMENSIONS})`)
const indexed = sql.unsafe(indexedVectorType(DIMENSIONS))
const count = (
  await sql<Array<{ count: number }>>`select count(*)::int as count from chunk_vectors where space_id = ${spaceId}`
)[0]!.count
const embeddings = memoryCorpus()
  .queries(Number(queryText), count)
  .map((message) => `[${hashedBagOfWords(message, DIMENSIONS).join(',')}]`)
const exact: number[] = []
for (const embedding of embeddings) {
  const rows = await sql.begin(async (tx) => {
    await tx.unsafe('set local enable_indexscan = off')
    return tx<
      Array<{ score: number }>
    >`select (embedding::${type} <=> ${embedding}::${type})::float8 as score from chunk_vectors where embedder_id = ${embedderId} and space_id = ${spaceId} order by 1 limit ${K}`
  })
  exact.push(rows[rows.length - 1]!.score)
}
for (const ef of efText.split(',').map(Number)) {
  let hits = 0
  const started = performance.now()
  for (const [index, embedding] of embeddings.entries()) {
    const rows = await sql.begin(async (tx) => {
      await tx.unsafe(`set local hnsw.ef_search = ${ef}`)
      await tx.unsafe('set local hnsw.iterative_scan = relaxed_order')
      return tx<Array<{ score: number }>>`
        with nearest as materialized (select (embedding::${type} <=> ${embedding}::${type})::float8 as score from chunk_vectors
          where embedder_id = ${sql.unsafe(`'${embedderId}'`)} and space_id = ${spaceId} order by embedding::${indexed} <=> ${embedding}::${indexed} limit ${CANDIDATES})
        select score from nearest order by score limit ${K}`
    })
    hits += rows.filter((row) => row.score <= exact[index]! + 1e-6).length
  }
  console.log(
    `ef_search ${ef}: recall@${K} ${(hits / (K * embeddings.length)).toFixed(3)}, ${((performance.now() - started) / embeddings.length).toFixed(1)} ms per query (${count} chunks)`,
  )
}
await sql.end()
