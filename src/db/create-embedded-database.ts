import { createLogger } from '../observability/logger.js'
import { createPool, embeddedClientTarget } from './database.js'
import { startEmbeddedPostgres } from './embedded.js'
import { migrate } from './migrations.js'
import { prepareVectorStorage } from './vector-storage.js'

/**
 * The executable's hidden command (CREATE_EMBEDDED_DATABASE_COMMAND), run by a first start
 * of the embedded server: creates the database in `dataDir`, applies the migrations and the
 * vector storage, and closes it, so the server opens a database as on any later start. Only
 * errors are printed (stderr), which the server reports if this fails.
 */
export async function createEmbeddedDatabase(dataDir: string): Promise<void> {
  const log = createLogger('error')
  const embedded = await startEmbeddedPostgres(dataDir, 1, log, undefined, undefined, { forParent: true })
  const sql = createPool(embeddedClientTarget(embedded.socketPath), { minIdle: 0, max: 1 }, 'memsvc-create')
  try {
    await migrate(sql)
    const vectors = await prepareVectorStorage(sql)
    if (!vectors.available) throw new Error(vectors.reason)
  } finally {
    await sql.end({ timeout: 5 })
    await embedded.stop()
  }
}
