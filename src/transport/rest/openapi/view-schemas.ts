// The JSON the REST API answers with, as valibot schemas for the OpenAPI document. The domain
// builds these views by hand (src/domain); each schema here is tied to its view's type by
// `describes<View>()`, so tsc fails when a view gains, loses or retypes a field and its
// schema does not follow. test/api/openapi.happy.test.ts checks real answers against them.
// Routes name them in their answers as VIEW components (at the end).
import * as v from 'valibot'
import { KEEP_STRATEGIES } from '../../../chunking/chunking-config.js'
import type { ApiKey } from '../../../domain/api-keys.js'
import type { DrainResult } from '../../../domain/drain.js'
import type { Embedder } from '../../../domain/embedders.js'
import type { Llm } from '../../../domain/llms.js'
import type { BatchDeleteResult, BatchItemError, Memory, MemoryContent } from '../../../domain/memories.js'
import type { MemoryChange } from '../../../domain/memory-changes.js'
import type { ProbeStatus } from '../../../domain/probes.js'
import type { CredentialsView } from '../../../domain/registry.js'
import type { Reranker } from '../../../domain/rerankers.js'
import type { RetrievalEvent, RetrievedChunk } from '../../../domain/retrieval.js'
import type { ExportLine } from '../../../domain/space-export.js'
import type { SpaceImport } from '../../../domain/space-import.js'
import type { Space } from '../../../domain/spaces.js'
import type { InitializeSystemResult, SystemInfo } from '../../../domain/system.js'
import type { User } from '../../../domain/users.js'
import { ERROR_CODES } from '../../../errors/app-error.js'
import { CONTENT_TYPES, MEMORY_STATUSES, OCR_MODES } from '../../../validation/memory.js'
import { capabilitiesSchema, samplingParamsSchema } from '../../../validation/registry.js'
import {
  CREDENTIAL_KINDS,
  DISTRIBUTION_TYPES,
  EMBEDDER_PROVIDER_TYPES,
  LLM_PROVIDER_TYPES,
  MODALITIES,
  RERANKER_PROVIDER_TYPES,
} from '../../../validation/registry-values.js'
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from '../../../validation/space-transfer.js'
import { Component } from './operation.js'

/** True when A and B are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** Returns the schema unchanged; fails to compile unless its output type is exactly View. */
function describes<View>() {
  return <Schema extends v.GenericSchema>(
    schema: Schema & (Same<v.InferOutput<Schema>, View> extends true ? unknown : { viewAndSchemaDiffer: View }),
  ): Schema => schema
}

const uuid = v.pipe(v.string(), v.uuid())
const epochMillis = v.pipe(v.number(), v.integer())
const count = v.pipe(v.number(), v.integer(), v.minValue(0))
const labels = v.record(v.string(), v.string())
const LIFECYCLE_STATES = ['STARTING', 'READY', 'DRAINING', 'QUIESCED'] as const

/** The one error body of every REST answer that is not a success (rest-messages.ts errorBody). */
export const errorBodySchema = v.strictObject({
  error: v.strictObject({
    code: v.pipe(v.number(), v.integer()),
    status: v.picklist(Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]),
    message: v.string(),
    details: v.array(v.strictObject({ field: v.string(), description: v.string() })),
    requestId: v.string(),
  }),
})

const auditFields = { createdAt: epochMillis, updatedAt: epochMillis, createdById: uuid, updatedById: uuid }

export const userSchema = describes<User>()(
  v.strictObject({
    userId: uuid,
    username: v.string(),
    displayName: v.string(),
    role: v.picklist(['ADMIN', 'USER']),
    createdAt: epochMillis,
    updatedAt: epochMillis,
  }),
)

export const apiKeySchema = describes<ApiKey>()(
  v.strictObject({
    apiKeyId: uuid,
    userId: uuid,
    keyPrefix: v.string(),
    status: v.picklist(['ACTIVE', 'INACTIVE']),
    labels,
    expiresAt: v.optional(epochMillis),
    lastUsedAt: v.optional(epochMillis),
    ...auditFields,
  }),
)

/** POST /v1/apikeys: the raw key, shown this once. */
export const createdApiKeySchema = v.strictObject({
  apiKeyMetadata: apiKeySchema,
  rawApiKey: v.pipe(v.string(), v.startsWith('msk_')),
})

const credentialsViewSchema = describes<CredentialsView>()(
  v.strictObject({
    kind: v.picklist(CREDENTIAL_KINDS),
    apiKey: v.optional(v.strictObject({ headerName: v.string(), prefix: v.string(), secretFingerprint: v.string() })),
    cloudAdc: v.optional(v.strictObject({ scopes: v.array(v.string()), quotaProjectId: v.optional(v.string()) })),
  }),
)

const storedProbeSchema = describes<ProbeStatus>()(
  v.strictObject({
    status: v.picklist(['OK', 'FAILED']),
    checkedAt: epochMillis,
    latencyMs: v.optional(v.number()),
    error: v.optional(v.string()),
    observedDimensionality: v.optional(v.number()),
  }),
)

function registrationViewEntries<const T extends readonly string[]>(providerTypes: T) {
  return {
    ownerId: uuid,
    displayName: v.string(),
    description: v.optional(v.string()),
    providerType: v.picklist(providerTypes),
    endpointUrl: v.string(),
    apiPath: v.string(),
    modelIdentifier: v.string(),
    supportedModalities: v.array(v.picklist(MODALITIES)),
    labels,
    version: v.optional(v.string()),
    monitoringEndpoint: v.optional(v.string()),
    credentials: credentialsViewSchema,
    lastProbe: v.optional(storedProbeSchema),
    ...auditFields,
  }
}

export const embedderSchema = describes<Embedder>()(
  v.strictObject({
    embedderId: uuid,
    ...registrationViewEntries(EMBEDDER_PROVIDER_TYPES),
    dimensionality: v.number(),
    distributionType: v.picklist(DISTRIBUTION_TYPES),
    maxSequenceLength: v.optional(v.number()),
  }),
)

export const llmSchema = describes<Llm>()(
  v.strictObject({
    llmId: uuid,
    ...registrationViewEntries(LLM_PROVIDER_TYPES),
    clientConfig: v.optional(v.string()),
    maxContextLength: v.optional(v.number()),
    capabilities: v.strictObject({ ...v.required(capabilitiesSchema).entries }),
    defaultSamplingParams: v.optional(
      v.strictObject({ ...samplingParamsSchema.entries, stopSequences: v.array(v.string()) }),
    ),
  }),
)

export const rerankerSchema = describes<Reranker>()(
  v.strictObject({ rerankerId: uuid, ...registrationViewEntries(RERANKER_PROVIDER_TYPES) }),
)

/** The stored chunking setting: exactly one strategy, every field filled in. */
const chunkingConfigViewSchema = v.union([
  v.strictObject({ none: v.strictObject({}) as v.GenericSchema<Record<string, never>> }),
  v.strictObject({
    recursive: v.strictObject({
      chunkSize: count,
      chunkOverlap: count,
      separators: v.array(v.string()),
      keepStrategy: v.picklist(KEEP_STRATEGIES),
      separatorIsRegex: v.boolean(),
    }),
  }),
  v.strictObject({ sentence: v.strictObject({ maxChunkSize: count, minChunkSize: count }) }),
])

export const spaceSchema = describes<Space>()(
  v.strictObject({
    spaceId: uuid,
    ownerId: uuid,
    name: v.string(),
    labels,
    spaceEmbedders: v.array(
      v.strictObject({
        embedderId: uuid,
        defaultRetrievalWeight: v.number(),
        indexState: v.picklist(['BACKFILLING', 'READY']),
        backfillProgress: v.strictObject({
          completedMemories: count,
          totalMemories: count,
          error: v.optional(v.string()),
        }),
      }),
    ),
    defaultChunkingConfig: chunkingConfigViewSchema,
    publicRead: v.boolean(),
    textSearchLanguage: v.string(),
    defaultOcr: v.picklist(OCR_MODES),
    ...auditFields,
  }),
)

export const memorySchema = describes<Memory>()(
  v.strictObject({
    memoryId: uuid,
    spaceId: uuid,
    contentType: v.string(),
    metadata: v.record(v.string(), v.unknown()),
    chunkingConfig: chunkingConfigViewSchema,
    processingStatus: v.picklist(MEMORY_STATUSES),
    processingError: v.optional(v.string()),
    originalContentSha256: v.string(),
    chunkCount: count,
    fileName: v.optional(v.string()),
    contentBytes: v.optional(count),
    documentOptions: v.optional(
      v.strictObject({
        ocr: v.picklist(OCR_MODES),
        extractPageImages: v.boolean(),
        pageImageDpi: count,
        ocrLanguages: v.array(v.string()),
      }),
    ),
    extraction: v.optional(
      v.strictObject({
        kind: v.picklist(['pdf', 'docx', 'pptx', 'xlsx', 'html', 'image']),
        stage: v.picklist(['EXTRACTING', 'OCR', 'RENDERING', 'DONE']),
        pagesDone: count,
        pagesTotal: count,
        pages: v.array(
          v.strictObject({
            pageNumber: count,
            method: v.picklist(['TEXT', 'OCR', 'NONE']),
            ocrConfidence: v.optional(v.number()),
            characters: count,
            imageStored: v.optional(v.boolean()),
            note: v.optional(v.string()),
          }),
        ),
      }),
    ),
    version: count,
    validUntil: v.optional(epochMillis),
    contentPending: v.optional(v.boolean()),
    ...auditFields,
  }),
)

export const memoryContentSchema = describes<MemoryContent>()(
  v.strictObject({ memoryId: uuid, contentType: v.picklist(CONTENT_TYPES), originalContent: v.string() }),
)

const batchItemErrorSchema = describes<BatchItemError>()(
  v.strictObject({
    code: v.number(),
    status: v.string(),
    message: v.string(),
    details: v.array(v.strictObject({ field: v.string(), description: v.string() })),
  }),
)

export const batchCreateResultSchema = v.strictObject({
  results: v.array(
    v.union([
      v.strictObject({ memory: memorySchema, created: v.boolean() }),
      v.strictObject({ error: batchItemErrorSchema }),
    ]),
  ),
})

export const batchDeleteResultSchema = describes<BatchDeleteResult>()(
  v.strictObject({
    deletedCount: count,
    results: v.optional(
      v.array(v.strictObject({ memoryId: v.string(), deleted: v.boolean(), error: v.optional(v.string()) })),
    ),
    matchedCount: v.optional(count),
    dryRun: v.boolean(),
  }),
)

export const batchUpdateResultSchema = v.strictObject({
  results: v.array(
    v.union([v.strictObject({ memory: memorySchema }), v.strictObject({ error: batchItemErrorSchema })]),
  ),
})

export const batchGetResultSchema = v.strictObject({
  results: v.array(
    v.union([
      v.strictObject({ memoryId: uuid, memory: memorySchema }),
      v.strictObject({ memoryId: v.string(), error: batchItemErrorSchema }),
    ]),
  ),
})

const memoryChangeSchema = describes<MemoryChange>()(
  v.strictObject({
    action: v.picklist(['UPDATE', 'DELETE']),
    version: count,
    changedAt: epochMillis,
    changedById: uuid,
    apiKeyId: v.string(),
    fields: v.array(v.picklist(['metadata', 'validUntil', 'content', 'contentType', 'chunkingConfig'])),
    metadataChanges: v.array(
      v.strictObject({ key: v.string(), before: v.optional(v.unknown()), after: v.optional(v.unknown()) }),
    ),
    contentSha256Before: v.optional(v.string()),
    contentSha256After: v.optional(v.string()),
    validUntilBefore: v.optional(epochMillis),
    validUntilAfter: v.optional(epochMillis),
  }),
)

/** A page of a list: the items under their collection's name, and the token of the next page. */
export const pageSchema = (field: string, item: v.GenericSchema) =>
  v.strictObject({ [field]: v.array(item), nextToken: v.optional(v.string()) })

export const jobAcceptedSchema = v.strictObject({ jobId: uuid })

export const drainResultSchema = describes<DrainResult>()(
  v.strictObject({ state: v.picklist(LIFECYCLE_STATES), quiesced: v.boolean(), message: v.string() }),
)

export const systemInfoSchema = describes<SystemInfo>()(
  v.strictObject({
    version: v.string(),
    lifecycleState: v.picklist(LIFECYCLE_STATES),
    initialized: v.boolean(),
    license: v.strictObject({
      directory: v.string(),
      present: v.boolean(),
      files: v.array(v.string()),
      productLicense: v.string(),
      thirdPartyPackages: count,
    }),
    storage: v.string(),
    tlsEnabled: v.boolean(),
    debugDatabaseListen: v.string(),
    runtime: v.strictObject({ node: v.string(), openssl: v.string(), uws: v.string() }),
    memories: v.strictObject({
      available: v.boolean(),
      reason: v.optional(v.string()),
      pgvectorVersion: v.optional(v.string()),
    }),
  }),
)

export const initializeSystemSchema = describes<InitializeSystemResult>()(
  v.strictObject({
    alreadyInitialized: v.boolean(),
    message: v.string(),
    rootApiKey: v.optional(v.string()),
    userId: v.optional(v.string()),
  }),
)

const retrievedChunkSchema = describes<RetrievedChunk>()(
  v.strictObject({
    chunkId: v.string(),
    memoryId: uuid,
    memoryIndex: count,
    chunkText: v.string(),
    startOffset: count,
    endOffset: count,
    relevanceScore: v.number(),
    source: v.optional(
      v.strictObject({
        page: v.optional(count),
        pageEnd: v.optional(count),
        slide: v.optional(count),
        sheet: v.optional(v.string()),
        headingPath: v.optional(v.array(v.string())),
      }),
    ),
    scoreParts: v.optional(
      v.pipe(
        v.strictObject({
          relevance: v.number(),
          recency: v.number(),
          recencyWeight: v.number(),
          ageSeconds: v.number(),
        }),
        v.description(
          'With recency: relevanceScore = (1 − recencyWeight) × relevance + recencyWeight × recency, ' +
            "where recency = 0.5 ^ (ageSeconds / halfLifeSeconds) and ageSeconds counts from the memory's updatedAt.",
        ),
      ),
    ),
  }),
)

/** One event of a retrieval stream: one NDJSON line, or one SSE `data:`. */
export const retrievalEventSchema = describes<RetrievalEvent>()(
  v.union([
    v.strictObject({
      resultSetBoundary: v.strictObject({
        resultSetId: v.string(),
        kind: v.picklist(['BEGIN', 'END']),
        stageName: v.string(),
        expectedItems: v.optional(count),
        notices: v.optional(
          v.array(v.strictObject({ code: v.picklist(['VECTOR_SEARCH_SKIPPED']), spaceId: uuid, message: v.string() })),
        ),
      }),
    }),
    v.strictObject({
      memoryDefinition: v.strictObject({
        memory: v.strictObject({ ...memorySchema.entries, originalContent: v.optional(v.string()) }),
      }),
    }),
    v.strictObject({ retrievedItem: v.strictObject({ chunk: retrievedChunkSchema }) }),
    v.strictObject({ abstractReply: v.strictObject({ text: v.string() }) }),
    v.strictObject({ status: v.strictObject({ code: v.string(), message: v.string() }) }),
  ]),
)

/** One line of a space export (docs/export-format.md): one NDJSON line of GET /v1/spaces/{id}:export. */
export const exportLineSchema = describes<ExportLine>()(
  v.union([
    v.strictObject({
      kind: v.literal('header'),
      format: v.literal(EXPORT_FORMAT),
      formatVersion: v.literal(EXPORT_FORMAT_VERSION),
      exportedAt: epochMillis,
      space: v.strictObject({
        spaceId: uuid,
        name: v.string(),
        labels,
        defaultChunkingConfig: chunkingConfigViewSchema,
        textSearchLanguage: v.string(),
        defaultOcr: v.picklist(OCR_MODES),
        publicRead: v.boolean(),
      }),
      embedders: v.array(
        v.strictObject({
          ref: count,
          embedderId: uuid,
          providerType: v.string(),
          modelIdentifier: v.string(),
          dimensionality: count,
          defaultRetrievalWeight: v.number(),
        }),
      ),
      memoryCount: count,
    }),
    v.strictObject({
      kind: v.literal('memory'),
      memory: v.strictObject({
        memoryId: uuid,
        contentType: v.string(),
        originalContent: v.string(),
        originalContentSha256: v.string(),
        metadata: v.record(v.string(), v.unknown()),
        chunkingConfig: chunkingConfigViewSchema,
        createdAt: epochMillis,
        updatedAt: epochMillis,
        createdById: uuid,
        updatedById: uuid,
        version: count,
        validUntil: v.optional(epochMillis),
        fileName: v.optional(v.string()),
        documentOptions: v.optional(v.record(v.string(), v.unknown())),
        extraction: v.optional(v.record(v.string(), v.unknown())),
      }),
      chunks: v.array(
        v.strictObject({
          chunkIndex: count,
          text: v.string(),
          startOffset: count,
          endOffset: count,
          source: v.optional(v.record(v.string(), v.unknown())),
          vectors: v.optional(v.record(v.string(), v.array(v.number()))),
        }),
      ),
    }),
    v.strictObject({ kind: v.literal('end'), memoryCount: count, chunkCount: count }),
    v.strictObject({ kind: v.literal('error'), error: v.strictObject({ code: v.string(), message: v.string() }) }),
  ]),
)

export const spaceImportSchema = describes<SpaceImport>()(
  v.strictObject({
    importId: uuid,
    spaceId: uuid,
    state: v.picklist(['RECEIVING', 'COMPLETED', 'FAILED']),
    linesApplied: count,
    memoriesExpected: count,
    memoriesImported: count,
    memoriesSkipped: count,
    memoriesReembedding: count,
    chunksImported: count,
    vectorsImported: count,
    error: v.optional(v.string()),
    createdAt: epochMillis,
    updatedAt: epochMillis,
    createdById: uuid,
  }),
)

/** The probes' answers (operations routes). */
export const livenessSchema = v.strictObject({ state: v.picklist(LIFECYCLE_STATES) })
const replicaStatusSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.description('host:port/database of the read replica (--db-read-url), without credentials'),
  ),
  state: v.picklist(['STARTING', 'IN_ROTATION', 'LAGGING', 'DOWN', 'NOT_A_REPLICA']),
  inRotation: v.boolean(),
  lagSeconds: v.optional(
    v.pipe(v.number(), v.description('How long the replica has lacked WAL the primary had, at its last check')),
  ),
  replayLsn: v.optional(v.string()),
  reason: v.optional(v.string()),
  since: v.pipe(v.number(), v.description('When it entered this state, epoch milliseconds')),
})
export const readinessSchema = v.strictObject({
  ready: v.boolean(),
  state: v.picklist(LIFECYCLE_STATES),
  reason: v.optional(v.string()),
  replicas: v.optional(
    v.pipe(
      v.array(replicaStatusSchema),
      v.description('With --db-read-url: each read replica. One out of rotation leaves the server ready.'),
    ),
  ),
})
export const startupSchema = v.strictObject({ started: v.boolean(), state: v.picklist(LIFECYCLE_STATES) })

/** Each view as the component the document names it by; answers (operation.ts) refer to these. */
export const VIEW = components({
  Error: errorBodySchema,
  User: userSchema,
  UserPage: pageSchema('users', userSchema),
  ApiKey: apiKeySchema,
  CreatedApiKey: createdApiKeySchema,
  ApiKeyPage: pageSchema('keys', apiKeySchema),
  Embedder: embedderSchema,
  EmbedderPage: pageSchema('embedders', embedderSchema),
  Llm: llmSchema,
  LlmPage: pageSchema('llms', llmSchema),
  Reranker: rerankerSchema,
  RerankerPage: pageSchema('rerankers', rerankerSchema),
  Space: spaceSchema,
  SpacePage: pageSchema('spaces', spaceSchema),
  Memory: memorySchema,
  MemoryPage: pageSchema('memories', memorySchema),
  MemoryContent: memoryContentSchema,
  BatchCreateResult: batchCreateResultSchema,
  BatchDeleteResult: batchDeleteResultSchema,
  BatchUpdateResult: batchUpdateResultSchema,
  BatchGetResult: batchGetResultSchema,
  MemoryHistory: pageSchema('changes', memoryChangeSchema),
  RetrievalEvent: retrievalEventSchema,
  SpaceExportLine: exportLineSchema,
  SpaceImport: spaceImportSchema,
  JobAccepted: jobAcceptedSchema,
  DrainResult: drainResultSchema,
  SystemInfo: systemInfoSchema,
  InitializeSystemResult: initializeSystemSchema,
  Liveness: livenessSchema,
  Readiness: readinessSchema,
  Startup: startupSchema,
})

function components<const Name extends string>(schemas: Record<Name, v.GenericSchema>): Record<Name, Component> {
  const named = Object.entries<v.GenericSchema>(schemas).map(([name, schema]) => [name, Component.of(name, schema)])
  return Object.fromEntries(named) as Record<Name, Component>
}
