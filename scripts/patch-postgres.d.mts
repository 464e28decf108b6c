// Types for scripts/patch-postgres.mjs, which build.ts, the bench and a unit test import.
export interface PatchedFileStatus {
  file: string
  /** Which of the two fixes this file carries: 'queue' or 'type fetch'. */
  fix: string
  text: string
  patched: boolean
}

export function postgresPatchStatus(): { version: string; files: PatchedFileStatus[] }

/** Applies the patches where missing; returns how many files it changed. Throws on unknown content. */
export function patchPostgres(): number
