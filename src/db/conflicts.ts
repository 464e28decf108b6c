// The writes PostgreSQL refuses that a use case answers as an API error (ALREADY_EXISTS,
// NOT_FOUND). They are decoded here, so that SQLSTATE codes and the constraint names the
// migrations chose (migrations.ts) stay in db/; the domain maps a Conflict, never a code.

/** PostgreSQL's unique_violation and foreign_key_violation. */
const UNIQUE_VIOLATION = '23505'
const FOREIGN_KEY_VIOLATION = '23503'

/** A write that a unique key refused, by what the key keeps unique; or one that refers to a row that is not there (any more). */
export type Conflict =
  | 'duplicate-user-id'
  | 'duplicate-username'
  | 'duplicate-api-key-id'
  | 'duplicate-registration-id'
  /** The same owner, provider type, endpoint, API path, model (and dimensionality) and credentials. */
  | 'duplicate-registration'
  | 'duplicate-space-id'
  | 'duplicate-space-name'
  | 'duplicate-space-embedder'
  | 'missing-reference'

/** The unique constraints a use case answers for, by their names in migrations.ts (a test checks they exist). */
export const DUPLICATE_CONSTRAINTS = new Map<string, Conflict>(
  Object.entries({
    users_pkey: 'duplicate-user-id',
    users_username_key: 'duplicate-username',
    api_keys_pkey: 'duplicate-api-key-id',
    embedders_pkey: 'duplicate-registration-id',
    llms_pkey: 'duplicate-registration-id',
    rerankers_pkey: 'duplicate-registration-id',
    embedders_registration: 'duplicate-registration',
    llms_registration: 'duplicate-registration',
    rerankers_registration: 'duplicate-registration',
    spaces_pkey: 'duplicate-space-id',
    spaces_name_per_owner: 'duplicate-space-name',
    space_embedders_pkey: 'duplicate-space-embedder',
  } satisfies Record<string, Conflict>),
)

/** The conflict `error` reports, or undefined when it is some other failure (which stays an error as it is). */
export function conflictOf(error: unknown): Conflict | undefined {
  const { code, constraint_name: constraint } = (error ?? {}) as { code?: unknown; constraint_name?: unknown }
  if (code === FOREIGN_KEY_VIOLATION) return 'missing-reference'
  if (code === UNIQUE_VIOLATION && typeof constraint === 'string') return DUPLICATE_CONSTRAINTS.get(constraint)
  return undefined
}
