// The data every scenario reads: a root admin (from system init), a reader who owns
// exactly READER_KEYS keys and lists them, and a writer who creates keys. Separate
// users, so the keys the POST scenario creates never change what the list returns.
export const READER_KEYS = 10

export interface Fixtures {
  rootKey: string
  reader: { userId: string; key: string }
  writer: { userId: string; key: string }
  /** Owner of the rows the INSERT floor writes. */
  floorUserId: string
  /** The bodies the product returns to the reader, so floors can answer the same bytes. */
  meBody: string
  listBody: string
}

async function call(
  restUrl: string,
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
): Promise<string> {
  const response = await fetch(`${restUrl}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text
}

const callJson = async <T>(restUrl: string, method: string, path: string, key?: string, body?: unknown) =>
  JSON.parse(await call(restUrl, method, path, key, body)) as T

export async function createFixtures(restUrl: string): Promise<Fixtures> {
  const init = await callJson<{ rootApiKey?: string }>(restUrl, 'POST', '/v1/system/init')
  if (!init.rootApiKey) throw new Error('the fresh database was already initialised')
  const rootKey = init.rootApiKey
  const createUser = (username: string) =>
    callJson<{ userId: string }>(restUrl, 'POST', '/v1/users', rootKey, { username, role: 'USER' })
  const createKey = (ownerId: string) =>
    callJson<{ rawApiKey: string }>(restUrl, 'POST', '/v1/apikeys', rootKey, { ownerId, labels: { bench: 'fixture' } })

  const reader = await createUser('bench-reader')
  const readerKeys: string[] = []
  for (let index = 0; index < READER_KEYS; index++) readerKeys.push((await createKey(reader.userId)).rawApiKey)
  const writer = await createUser('bench-writer')
  const writerKey = (await createKey(writer.userId)).rawApiKey
  const floorUser = await createUser('bench-insert-floor')

  const meBody = await call(restUrl, 'GET', '/v1/users/me', readerKeys[0])
  const listBody = await call(restUrl, 'GET', '/v1/apikeys', readerKeys[0])
  const listed = (JSON.parse(listBody) as { keys: unknown[] }).keys.length
  if (listed !== READER_KEYS) throw new Error(`the reader lists ${listed} keys, expected ${READER_KEYS}`)
  return {
    rootKey,
    reader: { userId: reader.userId, key: readerKeys[0]! },
    writer: { userId: writer.userId, key: writerKey },
    floorUserId: floorUser.userId,
    meBody,
    listBody,
  }
}
