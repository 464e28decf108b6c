import crypto from 'node:crypto'
import postgres from 'postgres'

/** The machine's PostgreSQL (trust auth). Tests create and drop their own databases. */
export const POSTGRES_ADMIN_URL = process.env.MEMSVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export type Engine = 'postgresql' | 'embedded'

/** Which engines the integration suites run on; both unless narrowed. */
export const ENGINES: Engine[] = (process.env.MEMSVC_TEST_ENGINES ?? 'postgresql,embedded')
  .split(',')
  .map((name) => name.trim()) as Engine[]

export interface TestDatabase {
  name: string
  jdbcUrl: string
  url: string
  drop(): Promise<void>
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `memsvc_test_${crypto.randomBytes(6).toString('hex')}`
  const admin = postgres(POSTGRES_ADMIN_URL, { max: 1, onnotice: () => {} })
  try {
    await admin.unsafe(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const adminUrl = new URL(POSTGRES_ADMIN_URL)
  const url = `postgres://${adminUrl.username}@${adminUrl.host}/${name}`
  return {
    name,
    url,
    jdbcUrl: `jdbc:postgresql://${adminUrl.host}/${name}?user=${adminUrl.username}`,
    async drop() {
      const cleanup = postgres(POSTGRES_ADMIN_URL, { max: 1, onnotice: () => {} })
      try {
        await cleanup.unsafe(`drop database if exists ${name} with (force)`)
      } finally {
        await cleanup.end()
      }
    },
  }
}
