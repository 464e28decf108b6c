import type { Sql } from './database.js'

export interface Migration {
  version: number
  name: string
  sql: string
}

/**
 * Embedded in the executable as code. Each runs once, in order, in one transaction
 * together with its bookkeeping row. Never edit a migration that has shipped: add one.
 * The SQL must run on PostgreSQL 15 and on PGlite (PostgreSQL 18).
 */
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'identity',
    sql: `
      create table system_state (
        singleton boolean primary key default true check (singleton),
        root_user_id uuid not null,
        initialized_at timestamptz not null default now()
      );

      create table users (
        id uuid primary key,
        username text not null unique,
        display_name text not null,
        role text not null check (role in ('ADMIN', 'USER')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      );

      create table api_keys (
        id uuid primary key,
        user_id uuid not null references users (id) on delete cascade,
        key_hash bytea not null unique,
        key_prefix text not null,
        status text not null check (status in ('ACTIVE', 'INACTIVE')),
        labels jsonb not null default '{}'::jsonb,
        expires_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create index api_keys_by_owner on api_keys (user_id, created_at, id);

      -- Every server caches authenticated keys; these notifications tell all of them,
      -- whichever process or tool made the change, to forget a key or a user's keys.
      create function memsvc_notify_auth_change() returns trigger language plpgsql as $$
      begin
        if tg_table_name = 'api_keys' then
          perform pg_notify('memsvc_auth', 'key:' || old.id::text);
        else
          perform pg_notify('memsvc_auth', 'user:' || old.id::text);
        end if;
        return null;
      end
      $$;
      create trigger api_keys_auth_change after update of status, expires_at, user_id, key_hash or delete on api_keys
        for each row execute function memsvc_notify_auth_change();
      create trigger users_auth_change after update of role or delete on users
        for each row execute function memsvc_notify_auth_change();
    `,
  },
  {
    version: 2,
    name: 'model registry',
    sql: `
      -- Which server key encrypts the stored provider secrets: its id (a SHA-256 over the
      -- key), never the key. A server started with another key refuses to start.
      create table encryption_key (
        singleton boolean primary key default true check (singleton),
        key_id text not null,
        recorded_at timestamptz not null default now()
      );

      -- Credentials: credential_kind, its public parts (header name, prefix, short secret
      -- fingerprint; scopes, quota project) in credential, the inline secret sealed with
      -- AES-256-GCM in credential_secret, and credential_fingerprint identifying the
      -- credential (keyed HMAC of the secret) for duplicate detection.
      create table embedders (
        id uuid primary key,
        owner_id uuid not null references users (id) on delete cascade,
        display_name text not null,
        description text,
        provider_type text not null,
        endpoint_url text not null,
        api_path text not null,
        model_identifier text not null,
        dimensionality integer not null check (dimensionality > 0),
        distribution_type text not null check (distribution_type in ('DENSE', 'SPARSE')),
        max_sequence_length integer check (max_sequence_length > 0),
        supported_modalities jsonb not null,
        labels jsonb not null default '{}'::jsonb,
        version text,
        monitoring_endpoint text,
        credential_kind text not null check (credential_kind in ('API_KEY', 'CLOUD_ADC', 'NONE')),
        credential jsonb not null default '{}'::jsonb,
        credential_secret bytea,
        credential_fingerprint text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create index embedders_by_owner on embedders (owner_id, created_at, id);
      -- One registration per owner, provider, URL, path, model, dimensionality and credential
      -- (hashed text columns keep index rows small whatever the URL length).
      create unique index embedders_registration on embedders (
        owner_id, provider_type, md5(endpoint_url), md5(api_path), md5(model_identifier), dimensionality, credential_fingerprint
      );

      create table llms (
        id uuid primary key,
        owner_id uuid not null references users (id) on delete cascade,
        display_name text not null,
        description text,
        provider_type text not null,
        endpoint_url text not null,
        api_path text not null,
        model_identifier text not null,
        supported_modalities jsonb not null,
        labels jsonb not null default '{}'::jsonb,
        version text,
        monitoring_endpoint text,
        client_config text,
        max_context_length integer check (max_context_length > 0),
        capabilities jsonb not null,
        default_sampling_params jsonb,
        credential_kind text not null check (credential_kind in ('API_KEY', 'CLOUD_ADC', 'NONE')),
        credential jsonb not null default '{}'::jsonb,
        credential_secret bytea,
        credential_fingerprint text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create index llms_by_owner on llms (owner_id, created_at, id);
      create unique index llms_registration on llms (
        owner_id, provider_type, md5(endpoint_url), md5(api_path), md5(model_identifier), credential_fingerprint
      );
    `,
  },
  {
    version: 3,
    name: 'background jobs and model probes',
    sql: `
      -- Durable jobs, claimed with FOR UPDATE SKIP LOCKED so that every server process can
      -- share the queue without running a job twice. A claim is a lease: a job whose
      -- worker died is taken again once locked_until has passed.
      create table jobs (
        id uuid primary key,
        kind text not null,
        payload jsonb not null default '{}'::jsonb,
        status text not null check (status in ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
        attempts integer not null default 0,
        max_attempts integer not null check (max_attempts > 0),
        run_after timestamptz not null,
        locked_by text,
        locked_until timestamptz,
        last_error text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        finished_at timestamptz
      );
      create index jobs_ready on jobs (run_after) where status in ('PENDING', 'RUNNING');
      create index jobs_finished on jobs (finished_at) where status in ('SUCCEEDED', 'FAILED');

      -- The last connectivity probe of a registration: {status, checkedAt, latencyMs, error, observedDimensionality}.
      alter table embedders add column probe jsonb;
      alter table llms add column probe jsonb;
    `,
  },
  {
    version: 4,
    name: 'API keys in their wire form',
    sql: `
      -- Each key's response JSON (the domain's ApiKey: toApiKey() then JSON.stringify),
      -- kept current by a trigger on every insert and update from any writer. Listing
      -- keys then reads one short text per row: building the JSON per request, in Node
      -- or in SQL, cost several times the lookup itself (bench profile of GET /v1/apikeys). json, not
      -- jsonb, keeps the field order; json_strip_nulls drops the absent optional
      -- timestamps as JSON.stringify drops undefined, and writes it compactly.
      alter table api_keys add column wire_json text;
      create function memsvc_api_key_wire_json() returns trigger language plpgsql as $$
      begin
        new.wire_json := json_strip_nulls(json_build_object(
          'apiKeyId', new.id, 'userId', new.user_id, 'keyPrefix', new.key_prefix, 'status', new.status,
          'labels', new.labels,
          'expiresAt', floor(extract(epoch from new.expires_at) * 1000)::bigint,
          'lastUsedAt', floor(extract(epoch from new.last_used_at) * 1000)::bigint,
          'createdAt', floor(extract(epoch from new.created_at) * 1000)::bigint,
          'updatedAt', floor(extract(epoch from new.updated_at) * 1000)::bigint,
          'createdById', new.created_by, 'updatedById', new.updated_by))::text;
        return new;
      end
      $$;
      create trigger api_keys_wire_json before insert or update on api_keys
        for each row execute function memsvc_api_key_wire_json();
      update api_keys set wire_json = null;
      alter table api_keys alter column wire_json set not null;
    `,
  },
]

/** Arbitrary but fixed: 'memsvc' in ASCII, so every replica contends for the same lock. */
const MIGRATION_LOCK_KEY = 0x6d656d737663

/**
 * Applies pending migrations under a transaction-scoped advisory lock, so replicas that
 * start together serialise here and all but the first find nothing to do.
 * Returns the versions this call applied.
 */
export async function migrate(sql: Sql): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`
    const rows = await tx<Array<{ version: number }>>`select version from schema_migrations`
    const applied = new Set(rows.map((row) => row.version))
    const newlyApplied: number[] = []
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue
      await tx.unsafe(migration.sql)
      await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`
      newlyApplied.push(migration.version)
    }
    return newlyApplied
  }) as Promise<number[]>
}
