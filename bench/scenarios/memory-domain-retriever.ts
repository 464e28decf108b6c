// The memory benchmark's retriever while the executable has no REST retrieve route: the
// domain use case in a server started in this process on the same database. Imported only
// when needed: the server pulls in src/generated, which the build writes.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { resolveServerConfig } from '../../src/config/server-config.js'
import { retrieveMemories, vectorSearchPlan } from '../../src/domain/retrieval.js'
import { createLogger } from '../../src/observability/logger.js'
import { startServer } from '../../src/server/server.js'
import { chunkIdsOf, defaultEfSearch, type Retriever, retrieveBody } from './memory-retriever.js'

/**
 * The use case in a server of its own in this process, on the benchmark's database (same
 * encryption key file as the executable, pool as small as the executable's).
 */
export async function domainRetriever(options: {
  jdbcUrl: string
  dbUser: string
  encryptionKeyFile: string
  poolMax: number
  key: string
  spaceId: string
}): Promise<Retriever> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memsvc-bench-domain-'))
  const config = resolveServerConfig(
    {
      'rest-port': 0,
      'grpc-port': 0,
      'bind-address': '127.0.0.1',
      'tls-disabled': true,
      'data-dir': dataDir,
      'log-level': 'warn',
      'metrics-scrape-secret': 'bench-domain-retriever',
      'encryption-key-file': options.encryptionKeyFile,
      'db-url': options.jdbcUrl,
      'db-user': options.dbUser,
      'db-max-pool': options.poolMax,
      'db-min-idle': 1,
      'background-db-max-pool': 1,
      'background-db-min-idle': 0,
    },
    {},
    {},
  )
  const server = await startServer(config, createLogger('warn'))
  await server.ready
  const call = { requestId: 'bench', transport: 'rest' as const, authorization: `Bearer ${options.key}` }
  return {
    via: 'the domain use case retrieveMemories in this process (no REST route on this branch yet)',
    async retrieve(message, mode, requestedSize) {
      const events: Array<Record<string, unknown>> = []
      for await (const event of await retrieveMemories(
        server.context,
        call,
        retrieveBody(options.spaceId, message, mode, requestedSize),
      ))
        events.push(event as Record<string, unknown>)
      return chunkIdsOf(events)
    },
    efSearch: defaultEfSearch,
    candidates: (requestedSize) => vectorSearchPlan(requestedSize).limit,
    async close() {
      await server.shutdown('benchmark finished')
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
