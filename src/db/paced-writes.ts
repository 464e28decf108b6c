/**
 * Writing many rows without holding the event loop for long. Two things hold it while a
 * statement is written: building the statement's text here (a vector value prints as some 19
 * characters in 0.2 µs: the vectors of the largest memory at 1,024 dimensions took 2.3 s and
 * 180 MiB three times over as one statement), and, with the embedded database (PGlite, which
 * runs on this event loop), the database's own work on it: the 9,363 vectors of the largest
 * memory as one statement held the loop for 7.8 s. So rows go in statements of at most
 * MAX_STATEMENT_CHARS, and while an embedded database is open in this process, of about
 * ROUND_TRIP_MS of its work; each waits for the one before, and the event loop has its turn
 * between them.
 */

export const MAX_STATEMENT_CHARS = 4 * 1024 * 1024
export const ROUND_TRIP_MS = 50

/** One kind of row, and the statement that writes some. */
export interface RowKind<T> {
  /** The embedded database's work on one row, in ms, at the slowest it was seen to be. */
  estimateMs(row: T): number
  /** About how many characters of statement text the row takes. */
  chars(row: T): number
  insert(rows: T[]): PromiseLike<unknown>
}

/** Embedded databases open in this process: their work runs on this event loop. */
let databasesOnEventLoop = 0

/** Told by the embedded database as it opens; it calls the function returned as it closes. */
export function databaseJoinsEventLoop(): () => void {
  databasesOnEventLoop++
  let left = false
  return () => {
    if (left) return
    left = true
    databasesOnEventLoop--
  }
}

/** What writing some rows takes: the embedded database's work and the statement's text. */
export interface Work {
  estimateMs: number
  chars: number
}

const sum = <T>(rows: T[], of: (row: T) => number) => rows.reduce((total, row) => total + of(row), 0)

export const workOf = <T>(rows: T[], kind: RowKind<T>): Work => ({
  estimateMs: sum(rows, kind.estimateMs),
  chars: sum(rows, kind.chars),
})

/** Whether statements doing this work may all be sent together, in one round trip. */
export function fitOneRoundTrip(works: Work[]): boolean {
  if (sum(works, (work) => work.chars) > MAX_STATEMENT_CHARS) return false
  return databasesOnEventLoop === 0 || sum(works, (work) => work.estimateMs) <= ROUND_TRIP_MS
}

/**
 * Writes the rows in statements sent one after another. With the embedded database, each is
 * sized by the estimates, scaled down by how much slower than them the one before was.
 */
export async function writePaced<T>(rows: T[], kind: RowKind<T>): Promise<void> {
  let slowerThanEstimated = 1
  for (let start = 0; start < rows.length; ) {
    const paced = databasesOnEventLoop > 0
    let end = start + 1
    let estimateMs = kind.estimateMs(rows[start]!)
    let chars = kind.chars(rows[start]!)
    while (end < rows.length) {
      const nextEstimateMs = estimateMs + kind.estimateMs(rows[end]!)
      const nextChars = chars + kind.chars(rows[end]!)
      if (nextChars > MAX_STATEMENT_CHARS || (paced && nextEstimateMs * slowerThanEstimated > ROUND_TRIP_MS)) break
      estimateMs = nextEstimateMs
      chars = nextChars
      end++
    }
    const sent = performance.now()
    await kind.insert(rows.slice(start, end))
    slowerThanEstimated = Math.max(1, (performance.now() - sent) / estimateMs)
    start = end
  }
}
