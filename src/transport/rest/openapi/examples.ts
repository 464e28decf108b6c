// Values the routes' examples share (operation.ts): the walk-through creates things under fixed
// ids, so that a later example can name what an earlier one created.

export const EXAMPLE_IDS = {
  user: '11111111-1111-4111-8111-111111111111',
  apiKey: '22222222-2222-4222-8222-222222222222',
  embedder: '33333333-3333-4333-8333-333333333333',
  secondEmbedder: '33333333-3333-4333-8333-333333333334',
  llm: '44444444-4444-4444-8444-444444444444',
  reranker: '55555555-5555-4555-8555-555555555555',
  space: '66666666-6666-4666-8666-666666666666',
  memory: '77777777-7777-4777-8777-777777777777',
  batchMemory: '77777777-7777-4777-8777-777777777778',
} as const

/** No provider listens here: probes and ingestion fail, which the examples do not depend on. */
export const EXAMPLE_PROVIDER_URL = 'http://127.0.0.1:9'
