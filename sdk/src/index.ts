// @memsvc/client: a typed gRPC client for memsvc. See README.md.

export { HealthCheckResponse_ServingStatus as ServingStatus } from '../../src/generated/grpc/health/v1/health.js'
export { ProcessingStatus, ResultSetBoundary_Kind, RetrievalMode } from '../../src/generated/memsvc/v1/memories.js'
export { MemsvcClient } from './client.js'
export { MemsvcError } from './errors.js'
/** Every message and enum of proto/memsvc/v1, one namespace per file (v1.memories.RetrieveMemoryEvent, …). */
export * as v1 from './proto.js'
export type { BoundMethod, Loose, RequestInput, ServiceClient } from './services.js'
export type { TlsOptions } from './tls.js'
export type { CallOptions, MemsvcClientOptions, RetryOptions } from './transport.js'

declare const MEMSVC_SDK_VERSION: string
/** The package version, which is the server version it was built with. */
export const VERSION: string = typeof MEMSVC_SDK_VERSION === 'string' ? MEMSVC_SDK_VERSION : 'development'
