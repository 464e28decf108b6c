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
  {
    version: 5,
    name: 'spaces, memories and chunks',
    sql: `
      -- Everything of the memory core that plain PostgreSQL can hold. The vectors need
      -- pgvector, which a PostgreSQL may lack: they are set up apart (src/db/vector-storage.ts),
      -- so that a server on such a database still starts and serves everything else.
      create table spaces (
        id uuid primary key,
        owner_id uuid not null references users (id) on delete cascade,
        name text not null,
        labels jsonb not null default '{}'::jsonb,
        default_chunking jsonb not null,
        public_read boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create unique index spaces_name_per_owner on spaces (owner_id, name);
      create index spaces_by_owner on spaces (owner_id, created_at, id);

      -- The embedders of a space. A new one starts BACKFILLING (its vectors for the memories
      -- already stored are written by jobs; backfill_done of backfill_total) and is READY
      -- once every memory has them. Deleting an embedder takes it out of every space.
      create table space_embedders (
        space_id uuid not null references spaces (id) on delete cascade,
        embedder_id uuid not null references embedders (id) on delete cascade,
        position integer not null,
        default_retrieval_weight double precision not null,
        index_state text not null check (index_state in ('BACKFILLING', 'READY')),
        backfill_done integer not null default 0,
        backfill_total integer not null default 0,
        backfill_error text,
        added_at timestamptz not null,
        primary key (space_id, embedder_id)
      );
      create index space_embedders_by_embedder on space_embedders (embedder_id);

      -- content is text: every accepted content type is text (UTF-8 on the wire).
      -- chunking is the configuration this memory is chunked with (its own or the space's).
      create table memories (
        id uuid primary key,
        space_id uuid not null references spaces (id) on delete cascade,
        content text not null,
        content_type text not null,
        content_sha256 bytea not null,
        metadata jsonb not null default '{}'::jsonb,
        chunking jsonb not null,
        status text not null check (status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
        processing_error text,
        chunk_count integer not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create index memories_by_space on memories (space_id, created_at, id);
      create index memories_by_content on memories (space_id, content_sha256);
      create index memories_metadata on memories using gin (metadata jsonb_path_ops);

      -- Offsets are UTF-16 code units into the memory's content (JavaScript string indices).
      -- 'simple' keeps keyword search language-neutral: no stemming, no stop words.
      create table chunks (
        id uuid primary key,
        memory_id uuid not null references memories (id) on delete cascade,
        space_id uuid not null,
        chunk_index integer not null,
        text text not null,
        start_offset integer not null,
        end_offset integer not null,
        search_vector tsvector generated always as (to_tsvector('simple', text)) stored,
        unique (memory_id, chunk_index)
      );
      create index chunks_search on chunks using gin (search_vector);
    `,
  },
  {
    version: 6,
    name: 'who deactivated an API key',
    sql: `
      -- A key's owner may re-activate a key they deactivated, not one an administrator did.
      -- Keys inactive before this migration count as deactivated by their last updater.
      alter table api_keys add column deactivated_by uuid;
      update api_keys set deactivated_by = updated_by where status = 'INACTIVE';
    `,
  },
  {
    version: 7,
    name: 'metadata filter conversions',
    sql: `
      -- Metadata filters (src/domain/filters) cast stored JSON values. A cast that fails on one
      -- memory's value must make that comparison false, not fail the whole query: these
      -- answer null for a value that does not convert.
      create function memsvc_filter_number(value jsonb) returns numeric language plpgsql immutable as $$
      begin
        if jsonb_typeof(value) = 'number' then return (value #>> '{}')::numeric; end if;
        if jsonb_typeof(value) = 'string' then return trim(value #>> '{}')::numeric; end if;
        return null;
      exception when others then return null;
      end $$;
      create function memsvc_filter_boolean(value jsonb) returns boolean language plpgsql immutable as $$
      begin
        if jsonb_typeof(value) = 'boolean' then return (value #>> '{}')::boolean; end if;
        if jsonb_typeof(value) = 'string' and lower(value #>> '{}') in ('true', 'false') then return lower(value #>> '{}')::boolean; end if;
        return null;
      end $$;
      create function memsvc_filter_timestamp(value jsonb) returns timestamptz language plpgsql stable as $$
      begin
        if jsonb_typeof(value) = 'string' then return (value #>> '{}')::timestamptz; end if;
        return null;
      exception when others then return null;
      end $$;
    `,
  },
  {
    version: 8,
    name: 'rerankers',
    sql: `
      -- The same shape as embedders (migration 2) without the vector settings.
      create table rerankers (
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
        credential_kind text not null check (credential_kind in ('API_KEY', 'CLOUD_ADC', 'NONE')),
        credential jsonb not null default '{}'::jsonb,
        credential_secret bytea,
        credential_fingerprint text not null,
        probe jsonb,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create index rerankers_by_owner on rerankers (owner_id, created_at, id);
      create unique index rerankers_registration on rerankers (
        owner_id, provider_type, md5(endpoint_url), md5(api_path), md5(model_identifier), credential_fingerprint
      );
    `,
  },
  {
    version: 9,
    name: 'job queue vacuumed as it churns',
    sql: `
      -- Every job is updated twice on its way to SUCCEEDED, and each update leaves a dead
      -- entry in jobs_ready that the claim query's index scan steps over until VACUUM
      -- removes it: at the default thresholds (20 % of the table) a busy queue of a
      -- hundred thousand ingest jobs made every claim walk tens of thousands of them.
      -- Vacuum after a fixed number of dead rows instead, and without throttling (the
      -- table and its indexes are small).
      alter table jobs set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000, autovacuum_vacuum_cost_delay = 0);
    `,
  },
  {
    version: 10,
    name: 'space change notifications',
    sql: `
      -- Every server keeps the rows retrieval plans from (a space, its embedders and their
      -- registrations: src/domain/space-rows-cache.ts); these notifications tell all of
      -- them, whichever process or tool made the change, to forget a space or every space
      -- using an embedder. A row deleted by a cascade (a user's spaces) fires them too.
      create function memsvc_notify_space_change() returns trigger language plpgsql as $$
      begin
        if tg_table_name = 'spaces' then
          perform pg_notify('memsvc_spaces', 'space:' || old.id::text);
        elsif tg_table_name = 'embedders' then
          perform pg_notify('memsvc_spaces', 'embedder:' || old.id::text);
        elsif tg_op = 'INSERT' then
          perform pg_notify('memsvc_spaces', 'space:' || new.space_id::text);
        else
          perform pg_notify('memsvc_spaces', 'space:' || old.space_id::text);
          if tg_op = 'UPDATE' and new.space_id <> old.space_id then
            perform pg_notify('memsvc_spaces', 'space:' || new.space_id::text);
          end if;
        end if;
        return null;
      end
      $$;
      create trigger spaces_change after update or delete on spaces
        for each row execute function memsvc_notify_space_change();
      create trigger space_embedders_change after insert or update or delete on space_embedders
        for each row execute function memsvc_notify_space_change();
      create trigger embedders_change after update or delete on embedders
        for each row execute function memsvc_notify_space_change();
    `,
  },
  {
    version: 11,
    name: 'keyword search in each space language, with BM25 statistics',
    sql: `
      -- A space's keyword search uses a PostgreSQL text search configuration (stop words,
      -- stemming), chosen at creation. Spaces made before searched with 'simple' (neither):
      -- they become 'english', the default, and their chunks are indexed again below.
      alter table spaces add column text_search_language text not null default 'english';
      alter table spaces alter column text_search_language drop default;

      -- A generated column cannot read the space's language, so a trigger makes each chunk's
      -- search vector when it is stored, whoever stores it. Chunks are never updated (a new
      -- version of a memory is a new memory), so an insert trigger is enough. The GIN index
      -- is built once after the new vectors rather than updated row by row.
      alter table chunks alter column search_vector drop expression;
      drop index chunks_search;
      update chunks set search_vector = to_tsvector('english', text);
      create index chunks_search on chunks using gin (search_vector);
      create function memsvc_chunk_search_vector() returns trigger language plpgsql as $$
      begin
        new.search_vector := to_tsvector(
          (select s.text_search_language from spaces s where s.id = new.space_id)::regconfig, new.text);
        return new;
      end
      $$;
      create trigger chunks_search_vector before insert on chunks
        for each row execute function memsvc_chunk_search_vector();

      -- What BM25 needs of each space (src/db/sql/retrieval.ts keywordChunks): how many
      -- chunks it has and their total length (a chunk's length is its number of distinct
      -- words), and in how many chunks each word occurs. Kept by statement triggers on
      -- chunks, so that every way chunks come and go (ingest, a re-run replacing its
      -- chunks, deleting memories or spaces) keeps them exact. Reading them is a key lookup
      -- per word of a message; counting each word's chunks in the GIN index at every
      -- search was 10 to 50 times slower at 100k chunks.
      create table space_text_stats (
        space_id uuid primary key references spaces (id) on delete cascade,
        chunk_count bigint not null,
        lexeme_count bigint not null
      );
      create table space_word_stats (
        space_id uuid not null references spaces (id) on delete cascade,
        word text not null,
        chunk_count integer not null,
        primary key (space_id, word)
      );
      insert into space_word_stats (space_id, word, chunk_count)
        select c.space_id, w.word, count(*) from chunks c join spaces s on s.id = c.space_id,
          unnest(tsvector_to_array(c.search_vector)) w (word)
        group by c.space_id, w.word;
      insert into space_text_stats (space_id, chunk_count, lexeme_count)
        select c.space_id, count(*), coalesce(sum(length(c.search_vector)), 0)
        from chunks c join spaces s on s.id = c.space_id group by c.space_id;

      -- Rows are written in key order, words before spaces, in both functions: concurrent
      -- writers lock the rows they share in the same order, and so never deadlock on them.
      create function memsvc_chunk_stats_added() returns trigger language plpgsql as $$
      begin
        insert into space_word_stats (space_id, word, chunk_count)
          select a.space_id, w.word, count(*) from added a, unnest(tsvector_to_array(a.search_vector)) w (word)
          group by a.space_id, w.word order by a.space_id, w.word
          on conflict (space_id, word) do update set chunk_count = space_word_stats.chunk_count + excluded.chunk_count;
        insert into space_text_stats (space_id, chunk_count, lexeme_count)
          select a.space_id, count(*), coalesce(sum(length(a.search_vector)), 0) from added a
          group by a.space_id order by a.space_id
          on conflict (space_id) do update set chunk_count = space_text_stats.chunk_count + excluded.chunk_count,
            lexeme_count = space_text_stats.lexeme_count + excluded.lexeme_count;
        return null;
      end
      $$;
      -- Chunks of a space being deleted are not counted down: its statistics go with it.
      create function memsvc_chunk_stats_removed() returns trigger language plpgsql as $$
      begin
        perform from space_word_stats st
          where (st.space_id, st.word) in (
            select r.space_id, w.word from removed r join spaces s on s.id = r.space_id,
              unnest(tsvector_to_array(r.search_vector)) w (word))
          order by st.space_id, st.word for update of st;
        with gone as (
          select r.space_id, w.word, count(*) as chunk_count
          from removed r join spaces s on s.id = r.space_id, unnest(tsvector_to_array(r.search_vector)) w (word)
          group by r.space_id, w.word
        ), emptied as (
          delete from space_word_stats st using gone g
          where st.space_id = g.space_id and st.word = g.word and st.chunk_count <= g.chunk_count
        )
        update space_word_stats st set chunk_count = st.chunk_count - g.chunk_count from gone g
          where st.space_id = g.space_id and st.word = g.word and st.chunk_count > g.chunk_count;
        update space_text_stats st set chunk_count = st.chunk_count - g.chunk_count,
            lexeme_count = st.lexeme_count - g.lexeme_count
          from (
            select r.space_id, count(*) as chunk_count, coalesce(sum(length(r.search_vector)), 0) as lexeme_count
            from removed r group by r.space_id order by r.space_id
          ) g
          where st.space_id = g.space_id;
        return null;
      end
      $$;
      create trigger chunks_stats_added after insert on chunks referencing new table as added
        for each statement execute function memsvc_chunk_stats_added();
      create trigger chunks_stats_removed after delete on chunks referencing old table as removed
        for each statement execute function memsvc_chunk_stats_removed();
    `,
  },
  {
    version: 12,
    name: 'embedding truncation on chunks',
    sql: `
      -- A chunk with more tokens than an embedder's model takes is embedded from its start
      -- only (LOCAL embedders cut it to the model's limit, src/providers/local). Which
      -- embedders cut it, and to how many of its tokens:
      -- {"<embedder id>": {"tokens": 612, "keptTokens": 256}}; null when none did.
      alter table chunks add column embedding_truncation jsonb;
    `,
  },
  {
    version: 13,
    name: 'documents: original bytes, extraction, page images, chunk sources',
    sql: `
      -- A document's original bytes, in parts of at most a few MiB, written as an upload
      -- streams in (src/domain/documents.ts) under a content id the memory row names once the
      -- upload is complete. Parts whose upload never finished belong to no memory and are
      -- swept after a day (table upkeep). The bytes are compressed already (PDF, OOXML,
      -- images) or small: stored without TOAST compression.
      create table memory_content_parts (
        content_id uuid not null,
        part_index integer not null,
        bytes bytea not null,
        created_at timestamptz not null default now(),
        primary key (content_id, part_index)
      );
      alter table memory_content_parts alter column bytes set storage external;

      -- Text memories keep content_id null. A document's content is its extracted text, empty
      -- until extraction (status EXTRACTING) has run; extracted_at says it has.
      -- document_options: {ocr, extractPageImages, pageImageDpi, ocrLanguages}.
      -- extraction: {kind, stage, pagesDone, pagesTotal, pages: [...]} (src/documents).
      -- document_sections: where each span of the extracted text came from, read by ingestion
      -- to give each chunk its source, never answered as it is.
      alter table memories drop constraint memories_status_check;
      alter table memories add constraint memories_status_check
        check (status in ('PENDING', 'EXTRACTING', 'PROCESSING', 'COMPLETED', 'FAILED'));
      alter table memories
        add column content_id uuid,
        add column content_bytes integer,
        add column file_name text,
        add column document_options jsonb,
        add column extraction jsonb,
        add column document_sections jsonb,
        add column extracted_at timestamptz;

      create function memsvc_memory_contents_removed() returns trigger language plpgsql as $$
      begin
        delete from memory_content_parts p using removed r where r.content_id is not null and p.content_id = r.content_id;
        return null;
      end
      $$;
      create trigger memories_contents_removed after delete on memories referencing old table as removed
        for each statement execute function memsvc_memory_contents_removed();

      -- Rendered pages (PNG) of a document stored with extractPageImages.
      create table memory_page_images (
        memory_id uuid not null references memories (id) on delete cascade,
        page_number integer not null,
        png bytea not null,
        primary key (memory_id, page_number)
      );
      alter table memory_page_images alter column png set storage external;

      -- How the space's documents go through OCR unless a memory says otherwise (src/documents).
      alter table spaces add column default_ocr text not null default 'AUTO' check (default_ocr in ('AUTO', 'ON', 'OFF'));

      -- Where a chunk of a document came from: {page, pageEnd, slide, sheet, headingPath}.
      alter table chunks add column source jsonb;
    `,
  },
  {
    version: 14,
    name: 'memory versions, validity and change history',
    sql: `
      -- version counts a memory's updates (an If-Match precondition names it). A content update
      -- waits in pending_* while it is chunked and embedded: the chunks of content keep
      -- answering retrieval until ingest swaps the pending content in, in the transaction that
      -- replaces the chunks (src/db/sql/memories.ts completeProcessing). content_version counts
      -- the contents (and chunkings) a memory had: an ingest run stores its chunks only if the
      -- content it chunked is still the latest.
      -- valid_until: past it, retrieval leaves the memory out unless asked for expired memories.
      alter table memories
        add column version integer not null default 1,
        add column content_version integer not null default 1,
        add column valid_until timestamptz,
        add column pending_content text,
        add column pending_content_type text,
        add column pending_content_sha256 bytea,
        add column pending_chunking jsonb;
      create index memories_by_space_updated on memories (space_id, updated_at, id);

      -- Who changed or deleted a memory, when, with which key, and what changed
      -- (src/domain/memory-changes.ts). No reference to memories: a deleted memory's history
      -- stays, readable by whoever may read its space; it goes with the space.
      create table memory_changes (
        id bigint generated always as identity primary key,
        memory_id uuid not null,
        space_id uuid not null references spaces (id) on delete cascade,
        action text not null check (action in ('UPDATE', 'DELETE')),
        version integer not null,
        changed_at timestamptz not null,
        changed_by uuid not null,
        api_key_id uuid,
        changes jsonb not null
      );
      create index memory_changes_by_memory on memory_changes (memory_id, id);
    `,
  },
  {
    version: 15,
    name: 'space imports',
    sql: `
      -- An import of a space export (src/domain/space-import.ts) and its progress. Each
      -- transaction that applies a batch of the stream's lines also advances lines_applied and
      -- the counters, so a cut stream is resumed after its last applied line, never twice.
      -- header_sha256 identifies the stream: a resume must send the same header line.
      -- chunks_read counts the chunks of every memory line applied (skipped ones included), for
      -- the end line's check on a resumed stream, whose first lines are not read again.
      create table space_imports (
        id uuid primary key,
        space_id uuid not null references spaces (id) on delete cascade,
        state text not null check (state in ('RECEIVING', 'COMPLETED', 'FAILED')),
        header_sha256 bytea not null,
        lines_applied bigint not null,
        chunks_read bigint not null default 0,
        memories_expected bigint not null,
        memories_imported bigint not null default 0,
        memories_skipped bigint not null default 0,
        memories_reembedding bigint not null default 0,
        chunks_imported bigint not null default 0,
        vectors_imported bigint not null default 0,
        error text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        created_by uuid not null,
        updated_by uuid not null
      );
      create index space_imports_by_space on space_imports (space_id);
    `,
  },
  {
    version: 16,
    name: 'spaces holding memories with a validUntil',
    sql: `
      -- Retrieval leaves out memories past their valid_until, which needs the memory row
      -- beside each chunk found. Most spaces never hold such a memory: their searches skip that
      -- join (src/domain/retrieval.ts) as long as this flag is false. It is set, and never
      -- cleared, when a memory with a valid_until is stored in or moved to the space; the
      -- update of the spaces row notifies every server's space rows cache (migration 10). A
      -- trigger, so that every writer (create, update, import, a tool) sets it.
      alter table spaces add column has_expiring_memories boolean not null default false;
      update spaces s set has_expiring_memories = true
        where exists (select 1 from memories m where m.space_id = s.id and m.valid_until is not null);
      create function memsvc_mark_expiring_space() returns trigger language plpgsql as $$
      begin
        update spaces set has_expiring_memories = true where id = new.space_id and not has_expiring_memories;
        return null;
      end
      $$;
      create trigger memories_expiring after insert or update of valid_until, space_id on memories
        for each row when (new.valid_until is not null) execute function memsvc_mark_expiring_space();
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
