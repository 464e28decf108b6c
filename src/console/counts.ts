// Counting a listing by paging through it (the API has no count endpoint).
import { MAX_PAGE_SIZE } from '../validation/limits.js'
import { type ApiError, call, query } from './api.js'

const MAX_PAGES = 10

export interface Count {
  count?: number
  /** More than count exist (stopped after MAX_PAGES pages). */
  more?: boolean
  /** 404: this server has no such API. */
  unavailable?: boolean
  error?: ApiError
}

export async function countAll(action: string, path: string, listField: string): Promise<Count> {
  let count = 0
  let nextToken: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await call<Record<string, unknown>>(
      action,
      'GET',
      `${path}${query({ maxResults: MAX_PAGE_SIZE, nextToken })}`,
    )
    if (!result.ok) return result.status === 404 ? { unavailable: true } : { error: result.error }
    count += ((result.data?.[listField] as unknown[] | undefined) ?? []).length
    nextToken = result.data?.nextToken as string | undefined
    if (!nextToken) return { count }
  }
  return { count, more: true }
}
