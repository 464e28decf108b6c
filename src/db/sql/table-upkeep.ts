import type { Queryable } from '../database.js'

/** One of memsvc's tables that needs fresh statistics, or its dead rows removed. */
export interface TableUpkeepNeed {
  table: string
  analyze: boolean
  vacuum: boolean
}

export interface UpkeepThresholds {
  /** ANALYZE once this many rows plus this share of the table changed since the last one. */
  analyzeBaseRows: number
  analyzeScale: number
  /** VACUUM (of the tables named in `vacuumTables` only) once this many rows are dead. */
  vacuumDeadRows: number
  vacuumTables: readonly string[]
}

/**
 * The tables of the current schema, owned by this user, whose changes since their last
 * ANALYZE (by anyone, autovacuum included) or whose dead rows passed the thresholds. The
 * counts are PostgreSQL's own (pg_stat_user_tables); the row estimate is pg_class's,
 * 0 while the table was never analysed.
 */
export async function tablesNeedingUpkeep(sql: Queryable, thresholds: UpkeepThresholds): Promise<TableUpkeepNeed[]> {
  return sql<TableUpkeepNeed[]>`
    select * from (
      select s.relname as table,
        s.n_mod_since_analyze > ${thresholds.analyzeBaseRows} + ${thresholds.analyzeScale} * greatest(c.reltuples, 0) as analyze,
        s.relname = any(${thresholds.vacuumTables as string[]}::text[]) and s.n_dead_tup > ${thresholds.vacuumDeadRows} as vacuum
      from pg_stat_user_tables s
      join pg_class c on c.oid = s.relid
      where s.schemaname = current_schema() and pg_has_role(c.relowner, 'USAGE')
    ) as counters
    where "analyze" or "vacuum"
    order by "table"`
}

/** VACUUM cannot run inside a transaction block: each is a statement of its own, outside any. */
export async function vacuumAnalyze(sql: Queryable, table: string): Promise<void> {
  await sql`vacuum (analyze) ${sql(table)}`
}

export async function analyze(sql: Queryable, table: string): Promise<void> {
  await sql`analyze ${sql(table)}`
}
