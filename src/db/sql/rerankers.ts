import { type RegistrationRow, registrationTable } from './registration-table.js'

/** A reranker has only the columns every registration has. */
export type RerankerRow = RegistrationRow

/** Insert, find, list, update and delete on the rerankers table. */
export const rerankersTable = registrationTable<RerankerRow, never>('rerankers', [], [])
