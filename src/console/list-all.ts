// Every item of a listing, page by page, for choosers (the embedders a space can use, the
// spaces to retrieve from). 404 means the server has no such API.
import { MAX_PAGE_SIZE } from '../validation/limits.js'
import { type ApiError, call, query } from './api.js'

/** Choosers are for people: past this many items a select is no help anyway. */
const MAX_ITEMS = 5000

export interface AllItems<T> {
  items: T[]
  unavailable?: boolean
  error?: ApiError
}

export async function listAll<T>(
  action: string,
  path: string,
  listField: string,
  pageSize = MAX_PAGE_SIZE,
): Promise<AllItems<T>> {
  const items: T[] = []
  let nextToken: string | undefined
  do {
    const result = await call<Record<string, unknown>>(
      action,
      'GET',
      `${path}${query({ maxResults: pageSize, nextToken })}`,
    )
    if (!result.ok) return result.status === 404 ? { items, unavailable: true } : { items, error: result.error }
    items.push(...((result.data?.[listField] as T[] | undefined) ?? []))
    nextToken = result.data?.nextToken as string | undefined
  } while (nextToken && items.length < MAX_ITEMS)
  return { items }
}
