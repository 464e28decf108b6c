import type { Logger } from '../observability/logger.js'
import type { Sql } from './database.js'
import * as documentsSql from './sql/documents.js'
import * as upkeepSql from './sql/table-upkeep.js'

/**
 * memsvc's own ANALYZE and VACUUM, for when autovacuum does not keep up or does not run
 * (it can be turned off server-wide, and the embedded database has none). Without fresh
 * statistics a prepared statement keeps the plan it was given while its table was small:
 * the memory benchmark, on a PostgreSQL with autovacuum off, saw the job claim, the
 * ingest's statements and PostgreSQL's CPU per stored chunk grow with every memory, as
 * sequential scans read 250 million rows of `jobs` for 30k jobs. ANALYZE after enough
 * change (autovacuum's own rule and defaults) makes PostgreSQL plan them again, and the
 * job queue's dead rows are vacuumed. Where autovacuum keeps up, it resets the same
 * counters first and this finds nothing to do.
 */
/** Often enough that a table filling from empty is planned on statistics within seconds; the check itself is one catalogue query. */
export const UPKEEP_INTERVAL_MS = 10_000
export const UPKEEP_THRESHOLDS: upkeepSql.UpkeepThresholds = {
  analyzeBaseRows: 50,
  analyzeScale: 0.1,
  // The same threshold migration 9 gives autovacuum for the queue.
  vacuumDeadRows: 2_000,
  // Only the queue: its rows are updated three times each. A VACUUM of a large table with
  // vector indexes is long work that autovacuum does throttled; it is left to autovacuum.
  vacuumTables: ['jobs'],
}

/** How often the parts of uploads that never became a memory are looked for, and how old they must be. */
const ORPHAN_SWEEP_INTERVAL_MS = 60 * 60 * 1000
const ORPHAN_PART_AGE_HOURS = 24

export class TableUpkeep {
  #timer: NodeJS.Timeout | undefined
  #lastOrphanSweep = 0
  #pass: Promise<void> | undefined
  #stopped = false
  #warned = false

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly intervalMs = UPKEEP_INTERVAL_MS,
  ) {}

  start(): void {
    this.#schedule()
  }

  /** Waits for a pass in progress, so the pool can close after it. */
  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearTimeout(this.#timer)
    await this.#pass
  }

  /** One look at the tables, and the ANALYZE or VACUUM they need, one table at a time. */
  async runOnce(): Promise<upkeepSql.TableUpkeepNeed[]> {
    if (Date.now() - this.#lastOrphanSweep > ORPHAN_SWEEP_INTERVAL_MS) {
      this.#lastOrphanSweep = Date.now()
      // An upload cut off by a crash (its own failure removes them) leaves parts no memory names.
      const removed = await documentsSql.deleteOrphanContentParts(this.sql, ORPHAN_PART_AGE_HOURS)
      if (removed > 0) this.log.info('removed the stored parts of unfinished uploads', { parts: removed })
    }
    const needs = await upkeepSql.tablesNeedingUpkeep(this.sql, UPKEEP_THRESHOLDS)
    for (const need of needs) {
      if (this.#stopped) break
      const started = performance.now()
      if (need.vacuum) await upkeepSql.vacuumAnalyze(this.sql, need.table)
      else await upkeepSql.analyze(this.sql, need.table)
      this.log.debug('table upkeep', {
        table: need.table,
        operation: need.vacuum ? 'vacuum analyze' : 'analyze',
        ms: Math.round(performance.now() - started),
      })
    }
    return needs
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#pass = this.runOnce()
        .then(() => {
          this.#warned = false
        })
        .catch((error: unknown) => {
          // Once per run of failures: the database may be down, which its own check reports.
          if (!this.#warned) this.log.warn('table upkeep failed; will try again', { error: error as Error })
          this.#warned = true
        })
        .finally(() => this.#schedule())
    }, this.intervalMs)
    this.#timer.unref()
  }
}
